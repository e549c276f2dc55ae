"""The names a compiled artifact and the runtime agree on (no MLIR needed to read them)."""

ENTRY = "main"  # the model's function
METADATA_KEY = "qmlir.metadata"  # JSON in ``iree.reflection`` on @main
GET_STATE = "qmlir.get_scaling_state"  # -> each state global, in metadata order
SET_STATE = "qmlir.set_scaling_state"  # (each state global)
