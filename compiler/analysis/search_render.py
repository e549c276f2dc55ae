"""A recipe search (``qmlir search --html``) as one self-contained HTML file: the
accuracy-for-size curve as an inline SVG plot, its points, the uniform recipes and the plan."""

from __future__ import annotations

import html
import math
from pathlib import Path
from string import Template

from compiler.analysis.recipe_search import SearchPlan, sqnr_db
from compiler.analysis.report_render import STYLE
from compiler.version import __version__

_TEMPLATE = Path(__file__).parent / "templates" / "search.html"
_WIDTH, _HEIGHT = 640, 360  # the plot area, in pixels
_LEFT, _BOTTOM, _TOP, _RIGHT = 60, 40, 16, 120  # margins: axes and labels
EXACT = "exact"  # a plan with no quantized layer: no noise, no finite SQNR


def render_search_html(plan: SearchPlan, model: str, curve: list[SearchPlan]) -> str:
    measured = "" if plan.measured_sqnr_db is None else f", measured {plan.measured_sqnr_db:.2f} dB"
    summary = (
        f"Budget {plan.budget_bits:g} bits per weight: the plan takes "
        f"{plan.effective_bits:.3f} bits, predicted {db_text(plan.predicted_sqnr_db)} dB{measured}."
    )
    values = {
        "model": html.escape(model),
        "summary": html.escape(summary),
        "plot": curve_svg(plan, curve),
        "curve": _table(
            ("effective bits", "predicted SQNR (dB)", "recipes"),
            [
                (f"{p.effective_bits:.3f}", db_text(p.predicted_sqnr_db), recipe_mix(p))
                for p in curve
            ],
        ),
        "uniform": _table(
            ("recipe", "effective bits", "predicted SQNR (dB)"),
            [(r, f"{b:.3f}", db_text(db)) for r, (b, db) in plan.uniform.items()],
        ),
        "layers": _table(
            ("layer", "recipe", "output SQNR alone (dB)"),
            [(layer, r, db_text(sqnr_db(plan.scores[layer][r]))) for layer, r in plan.items()],
        ),
        "version": html.escape(__version__),
        "style": STYLE.read_text(),
    }
    return Template(_TEMPLATE.read_text()).substitute(values)


def curve_svg(plan: SearchPlan, curve: list[SearchPlan]) -> str:
    """The plot: the curve as a line with its points, each uniform recipe as a labeled square,
    the written plan as a ring. Points with no noise (every layer kept) sit on the top edge,
    labeled ``exact``."""
    finite = [p.predicted_sqnr_db for p in curve if math.isfinite(p.predicted_sqnr_db)]
    finite += [db for _, db in plan.uniform.values() if math.isfinite(db)]
    low_db = math.floor(min(finite, default=0.0) / 5) * 5
    high_db = math.ceil(max(finite, default=10.0) / 5) * 5 + 5  # room for the exact row
    bits = [p.effective_bits for p in curve] + [b for b, _ in plan.uniform.values()]
    low_bits, high_bits = 0.0, math.ceil(max(bits) / 4) * 4

    def x(b: float) -> float:
        return _LEFT + _WIDTH * (b - low_bits) / (high_bits - low_bits)

    def y(db: float) -> float:
        db = high_db if not math.isfinite(db) else db
        return _TOP + _HEIGHT * (high_db - db) / (high_db - low_db)

    width, height = _LEFT + _WIDTH + _RIGHT, _TOP + _HEIGHT + _BOTTOM
    parts = [f'<svg width="{width}" height="{height}" role="img">']
    parts.append(
        f'<rect x="{_LEFT}" y="{_TOP}" width="{_WIDTH}" height="{_HEIGHT}" '
        'fill="none" stroke="#bbb"/>'
    )
    for b in range(int(low_bits), int(high_bits) + 1, 4):
        parts.append(
            f'<text x="{x(b):.1f}" y="{_TOP + _HEIGHT + 16}" text-anchor="middle">{b}</text>'
        )
    for db in range(int(low_db), int(high_db) + 1, 5):
        label = EXACT if db == high_db else str(db)
        parts.append(f'<text x="{_LEFT - 6}" y="{y(db) + 4:.1f}" text-anchor="end">{label}</text>')
    parts.append(
        f'<text x="{_LEFT + _WIDTH / 2}" y="{height - 4}" text-anchor="middle">'
        "effective bits per weight</text>"
    )
    parts.append(
        f'<text transform="translate(14,{_TOP + _HEIGHT / 2}) rotate(-90)" '
        'text-anchor="middle">predicted output SQNR (dB)</text>'
    )
    line = " ".join(f"{x(p.effective_bits):.1f},{y(p.predicted_sqnr_db):.1f}" for p in curve)
    parts.append(f'<polyline class="curve" points="{line}" fill="none" stroke="#1f5fa8"/>')
    for p in curve:
        parts.append(
            f'<circle class="point" cx="{x(p.effective_bits):.1f}" '
            f'cy="{y(p.predicted_sqnr_db):.1f}" r="3" fill="#1f5fa8">'
            f"<title>{p.effective_bits:.3f} bits, {db_text(p.predicted_sqnr_db)} dB: "
            f"{html.escape(recipe_mix(p))}</title></circle>"
        )
    for recipe, (b, db) in plan.uniform.items():
        parts.append(
            f'<rect class="uniform" x="{x(b) - 4:.1f}" y="{y(db) - 4:.1f}" width="8" height="8" '
            f'fill="#e0a050"><title>{html.escape(recipe)}: {b:.3f} bits, {db_text(db)} dB'
            "</title></rect>"
        )
        parts.append(f'<text x="{x(b) + 7:.1f}" y="{y(db) - 6:.1f}">{html.escape(recipe)}</text>')
    parts.append(
        f'<circle class="chosen" cx="{x(plan.effective_bits):.1f}" '
        f'cy="{y(plan.predicted_sqnr_db):.1f}" r="7" fill="none" stroke="#b00" '
        'stroke-width="2"><title>the plan written</title></circle>'
    )
    parts.append("</svg>")
    return "\n".join(parts)


def recipe_mix(plan: dict[str, str]) -> str:
    """``2 x nvfp4, 1 x none``: how many layers take each recipe."""
    counts: dict[str, int] = {}
    for recipe in plan.values():
        counts[recipe] = counts.get(recipe, 0) + 1
    return ", ".join(f"{n} x {r}" for r, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def db_text(value: float) -> str:
    """``12.34``, or ``exact`` for no noise."""
    return EXACT if not math.isfinite(value) else f"{value:.2f}"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"
