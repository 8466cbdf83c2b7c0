"""A tiny SVG writer for benchmark plots: grouped bar charts on a log scale, no dependencies."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2")


@dataclass
class Panel:
    """One bar chart: a value per (group, series); None draws a hatched 'n/a' slot."""

    title: str
    groups: list[str]
    series: dict[str, list[float | None]]
    target: float | None = None        # drawn as a dashed line with its label
    target_label: str = ""
    unit: str = "x"
    notes: list[str] = field(default_factory=list)


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten (and 2x, 5x when the range is narrow) spanning [lo, hi]."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1, 2, 5) if last - first <= 2 else (1,)
    return [m * 10.0 ** e for e in range(first, last + 1) for m in steps if lo <= m * 10.0 ** e <= hi]


def _fmt(value: float, unit: str) -> str:
    if value >= 100:
        return f"{value:.0f}{unit}"
    if value >= 10:
        return f"{value:.1f}{unit}"
    return f"{value:.2f}{unit}"


def _panel_svg(panel: Panel, x0: float, y0: float, width: float, height: float) -> list[str]:
    out = [f'<text x="{x0 + width / 2:.1f}" y="{y0 + 16:.1f}" text-anchor="middle" '
           f'font-size="14" font-weight="bold">{escape(panel.title)}</text>']
    left, right = x0 + 52, x0 + width - 10
    # long group names in narrow slots are written slanted, with room below the axis for them
    slanted = (right - left) / max(1, len(panel.groups)) < 6.5 * max((len(g) for g in panel.groups), default=0)
    top, bottom = y0 + 30, y0 + height - (96 if slanted else 46)
    values = [v for vs in panel.series.values() for v in vs if v is not None and v > 0]
    if panel.target:
        values.append(panel.target)
    lo = min(values + [1.0]) / 1.5 if values else 0.1
    hi = max(values + [1.0]) * 1.5 if values else 10.0
    lo = 10.0 ** math.floor(math.log10(lo))

    def ypos(v: float) -> float:
        frac = (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        return bottom - frac * (bottom - top)

    for tick in _log_ticks(lo, hi):
        y = ypos(tick)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">'
                   f'{tick:g}{escape(panel.unit)}</text>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>')

    names = list(panel.series)
    slot = (right - left) / max(1, len(panel.groups))
    bar = slot * 0.8 / max(1, len(names))
    for g, group in enumerate(panel.groups):
        gx = left + g * slot + slot * 0.1
        for s, name in enumerate(names):
            value = panel.series[name][g]
            bx = gx + s * bar
            if value is None or value <= 0:
                out.append(f'<rect x="{bx:.1f}" y="{bottom - 14:.1f}" width="{bar - 2:.1f}" height="14" '
                           f'fill="none" stroke="#999" stroke-dasharray="2,2"/>')
                out.append(f'<text x="{bx + bar / 2:.1f}" y="{bottom - 18:.1f}" text-anchor="middle" '
                           f'font-size="9" fill="#999">n/a</text>')
                continue
            y = ypos(max(value, lo))
            out.append(f'<rect x="{bx:.1f}" y="{y:.1f}" width="{bar - 2:.1f}" height="{bottom - y:.1f}" '
                       f'fill="{PALETTE[s % len(PALETTE)]}"><title>{escape(name)} {escape(group)}: '
                       f'{value:.3g}</title></rect>')
            out.append(f'<text x="{bx + bar / 2:.1f}" y="{y - 3:.1f}" text-anchor="middle" font-size="9">'
                       f'{escape(_fmt(value, panel.unit))}</text>')
        if slanted:
            out.append(f'<text x="{gx + slot * 0.4:.1f}" y="{bottom + 12:.1f}" text-anchor="end" font-size="11" '
                       f'transform="rotate(-35 {gx + slot * 0.4:.1f} {bottom + 12:.1f})">{escape(group)}</text>')
        else:
            out.append(f'<text x="{gx + slot * 0.4:.1f}" y="{bottom + 14:.1f}" text-anchor="middle" '
                       f'font-size="11">{escape(group)}</text>')
    if panel.target:
        y = ypos(panel.target)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#c00" '
                   f'stroke-dasharray="6,3"/>')
        out.append(f'<text x="{right - 2}" y="{y + 12:.1f}" text-anchor="end" font-size="10" fill="#c00">'
                   f'{escape(panel.target_label)}</text>')
    legend_y = bottom + (80 if slanted else 30)
    for s, name in enumerate(names):
        lx = left + s * 150
        out.append(f'<rect x="{lx}" y="{legend_y - 9}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>')
        out.append(f'<text x="{lx + 14}" y="{legend_y}" font-size="10">{escape(name)}</text>')
    for n, note in enumerate(panel.notes):
        out.append(f'<text x="{left}" y="{legend_y + 14 + 12 * n}" font-size="9" fill="#555">{escape(note)}</text>')
    return out


def bar_chart(panels: list[Panel], *, title: str, subtitle: str = "",
              panel_width: float = 420, panel_height: float = 320, columns: int | None = None) -> str:
    """Panels side by side (`columns` per row; default all in one row), each with its own
    log-scale y axis; returns the SVG text."""
    columns = max(1, min(columns or len(panels), len(panels)))
    rows = -(-len(panels) // columns)
    extra = max((len(p.notes) for p in panels), default=0) * 12
    row_height = panel_height + extra
    width, height = panel_width * columns, row_height * rows + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">',
             f'<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-size="15" font-weight="bold">'
             f'{escape(title)}</text>']
    if subtitle:
        parts.append(f'<text x="{width / 2:.1f}" y="34" text-anchor="middle" font-size="10" fill="#555">'
                     f'{escape(subtitle)}</text>')
    for i, panel in enumerate(panels):
        parts += _panel_svg(panel, (i % columns) * panel_width, 40 + (i // columns) * row_height,
                            panel_width, panel_height)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
