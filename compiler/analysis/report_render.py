"""A report as a terminal table and as one self-contained HTML file (inline SVG plots, no
scripts, no network)."""

from __future__ import annotations

import html
import math
from pathlib import Path
from string import Template

import numpy as np

from compiler.analysis.layer_accuracy import LayerReport, Report
from compiler.runtime.summary import convolution_text
from compiler.version import __version__

_TEMPLATE = Path(__file__).parent / "templates" / "report.html"
STYLE = Path(__file__).parent / "templates" / "style.css"  # the HTML pages' shared styles
_COLUMNS = (
    "layer",
    "recipe",
    "shape",
    "W SQNR",
    "X SQNR",
    "underflow X/W %",
    "saturated X/W %",
    "out SQNR",
    "note",
)
TOP_LEVEL = "(top level)"
_SERIES = (("output", "#1f5fa8"), ("weight", "#7fb0e0"), ("activation", "#e0a050"))


def table_rows(report: Report) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = [_COLUMNS]
    for entry in report.layers:
        rows.append(_row(entry))
    return rows


def _row(entry: LayerReport) -> tuple[str, ...]:
    a, b = entry.shapes
    shape = f"{_shape(a)} x {_shape(b)}"
    note = "" if entry.note == "the default recipe" else entry.note
    name = entry.layer or TOP_LEVEL
    if not entry.quantized:
        return (name, "none", shape, "", "", "", "", "", note)
    x, w = entry.activation, entry.weight
    return (
        name,
        entry.recipe,
        shape,
        _db(w.sqnr_db) if w else "-",
        _db(x.sqnr_db) if x else "-",
        f"{_pct(x.underflow if x else None)}/{_pct(w.underflow if w else None)}",
        f"{_pct(x.saturated if x else None)}/{_pct(w.saturated if w else None)}",
        _db(entry.output_sqnr_db),
        note,
    )


def _shape(shape: tuple[int | str, ...]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _db(value: float | None) -> str:
    if value is None:
        return "-"
    return "inf" if math.isinf(value) else f"{value:.2f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.3g}"


def suggestion_line(report: Report, threshold_db: float) -> str:
    names = report.suggest_excludes(threshold_db)
    return " ".join(f"--exclude '{name}'" for name in names)


def render_html(report: Report, threshold_db: float | None = None) -> str:
    quantized = [e for e in report.layers if e.quantized]
    options = ", ".join(f"{k}={v}" for k, v in report.recipe["options"].items()) or "no options"
    worst = min(quantized, key=lambda e: e.output_sqnr_db or 0.0) if quantized else None
    summary = (
        f"{len(quantized)} of {len(report.layers)} matmuls quantized; recipe options: {options}."
    )
    if worst is not None:
        summary += f" Weakest layer: {worst.layer or TOP_LEVEL} at {_db(worst.output_sqnr_db)} dB."
    if report.batches > 1:
        summary += f" Measured over {report.batches} calibration batches."
    if report.convolutions:
        summary += f" {convolution_text(report.convolutions)}."
    values = {
        "model": html.escape(report.model),
        "recipe": html.escape(report.recipe["name"]),
        "summary": html.escape(summary),
        "sqnr_plot": _sqnr_bars(quantized, threshold_db),
        "histogram": _exponent_histogram(quantized),
        "table": _html_table(report, threshold_db),
        "suggest": _html_suggest(report, threshold_db),
        "version": html.escape(__version__),
        "style": STYLE.read_text(),
    }
    return Template(_TEMPLATE.read_text()).substitute(values)


def _html_table(report: Report, threshold_db: float | None) -> str:
    rows = table_rows(report)
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in rows[0]) + "</tr>"]
    for entry, row in zip(report.layers, rows[1:], strict=True):
        weak = (
            threshold_db is not None
            and entry.quantized
            and (entry.output_sqnr_db or 0.0) < threshold_db
        )
        cells = []
        for n, cell in enumerate(row):
            classes = ["text"] if n < 3 or n == len(_COLUMNS) - 1 else []
            if n == len(_COLUMNS) - 2 and weak:
                classes.append("weak")
            attr = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{attr}>{html.escape(cell)}</td>")
        kind = "" if entry.quantized else ' class="kept"'
        out.append(f"<tr{kind}>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _html_suggest(report: Report, threshold_db: float | None) -> str:
    if threshold_db is None:
        return ""
    line = suggestion_line(report, threshold_db)
    head = f"<h2>Layers to exclude to keep every layer above {threshold_db:g} dB</h2>"
    if not line:
        return head + "<p>None: every quantized layer is above the threshold.</p>"
    return head + f"<pre>{html.escape(line)}</pre>"


def _sqnr_bars(layers: list[LayerReport], threshold_db: float | None) -> str:
    """Horizontal grouped bars, one group per quantized matmul."""
    if not layers:
        return "<p>No quantized matmuls.</p>"
    longest = max(len(_short(e.layer or TOP_LEVEL)) for e in layers)
    label_w, plot_w, bar_h, gap = int(min(longest, _LABEL_CHARS) * 6.6) + 16, 560, 7, 8
    group_h = 3 * bar_h + gap
    finite = [
        v for e in layers for v in _series_values(e) if v is not None and math.isfinite(v) and v > 0
    ]
    top = max([*finite, threshold_db or 0.0, 10.0])
    top = 10 * math.ceil(top / 10)
    height = len(layers) * group_h + 40
    parts = [f'<svg width="{label_w + plot_w + 20}" height="{height}" role="img">']
    for tick in range(0, int(top) + 1, 10):
        x = label_w + plot_w * tick / top
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 30}" stroke="#eee"/>'
            f'<text x="{x:.1f}" y="{height - 18}" text-anchor="middle">{tick}</text>'
        )
    for n, entry in enumerate(layers):
        label = html.escape(entry.layer or TOP_LEVEL)
        y0 = n * group_h + 4
        parts.append(
            f'<text x="{label_w - 6}" y="{y0 + 1.5 * bar_h + 4}" text-anchor="end">'
            f"{html.escape(_short(entry.layer or TOP_LEVEL))}</text>"
        )
        for k, ((name, color), value) in enumerate(
            zip(_SERIES, _series_values(entry), strict=True)
        ):
            if value is None:
                continue
            width = plot_w * min(max(value, 0.0), top) / top if math.isfinite(value) else plot_w
            parts.append(
                f'<rect x="{label_w}" y="{y0 + k * bar_h}" width="{width:.1f}" '
                f'height="{bar_h - 1}" fill="{color}"><title>{label} '
                f"{name}: {_db(value)} dB</title></rect>"
            )
    if threshold_db is not None:
        x = label_w + plot_w * min(threshold_db, top) / top
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 30}" stroke="#b00" '
            f'stroke-dasharray="4 3"/>'
        )
    legend_x = label_w
    for name, color in _SERIES:
        parts.append(
            f'<rect x="{legend_x}" y="{height - 12}" width="10" height="10" fill="{color}"/>'
            f'<text x="{legend_x + 14}" y="{height - 3}">{name}</text>'
        )
        legend_x += 90
    parts.append("</svg>")
    return "\n".join(parts)


def _series_values(entry: LayerReport) -> list[float | None]:
    x, w = entry.activation, entry.weight
    return [entry.output_sqnr_db, w.sqnr_db if w else None, x.sqnr_db if x else None]


_LABEL_CHARS = 60


def _short(name: str, limit: int = _LABEL_CHARS) -> str:
    return name if len(name) <= limit else "…" + name[-(limit - 1) :]


def _exponent_histogram(layers: list[LayerReport]) -> str:
    by_role: dict[str, list[np.ndarray]] = {"weight": [], "activation": []}
    for entry in layers:
        for stats in (entry.weight, entry.activation, *entry.extra):
            if stats is not None:
                by_role[stats.role].append(stats.scale_exponents)
    counts = {
        role: np.concatenate(arrays) if arrays else np.zeros(0, np.int32)
        for role, arrays in by_role.items()
    }
    everything = np.concatenate(list(counts.values()))
    if everything.size == 0:
        return "<p>No scales.</p>"
    lo, hi = int(everything.min()), int(everything.max())
    bins = list(range(lo, hi + 1))
    width, height, left, bottom = 640, 220, 50, 30
    slot = width / len(bins)
    tallest = max(int(np.count_nonzero(counts[r] == b)) for r in counts for b in bins) or 1
    parts = [
        f'<svg width="{left + width + 20}" height="{height + bottom + 30}" role="img">',
        '<g transform="translate(0, 10)">',  # headroom above the tallest bar
    ]
    colors = {"weight": "#7fb0e0", "activation": "#e0a050"}
    for i, exponent in enumerate(bins):
        for k, role in enumerate(("weight", "activation")):
            n = int(np.count_nonzero(counts[role] == exponent))
            if not n:
                continue
            # log scale: per-block recipes have thousands of scales, per-tensor ones a few
            h = height * math.log1p(n) / math.log1p(tallest)
            x = left + i * slot + k * slot / 2
            parts.append(
                f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{max(slot / 2 - 1, 1):.1f}" '
                f'height="{h:.1f}" fill="{colors[role]}"><title>{role}, 2^{exponent}: '
                f"{n}</title></rect>"
            )
        if len(bins) <= 24 or i % math.ceil(len(bins) / 24) == 0:
            parts.append(
                f'<text x="{left + (i + 0.5) * slot:.1f}" y="{height + 14}" '
                f'text-anchor="middle">{exponent}</text>'
            )
    parts.append(
        f'<text x="{left + width / 2}" y="{height + 28}" text-anchor="middle">'
        "exponent (log2 of the decode scale); bar height: count, log scale</text>"
    )
    x = left
    for role in ("weight", "activation"):
        total = counts[role].size
        parts.append(
            f'<rect x="{x}" y="{height + bottom + 6}" width="10" height="10" '
            f'fill="{colors[role]}"/><text x="{x + 14}" y="{height + bottom + 15}">{role} '
            f"({total} scales)</text>"
        )
        x += 260
    parts.append("</g></svg>")
    return "\n".join(parts)
