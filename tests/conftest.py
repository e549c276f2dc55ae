"""Shared settings: hypothesis runs a fixed, CI-sized number of examples, derandomized."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "qmlir",
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("qmlir")
