"""Line charts as inline SVG for the report pages: no script, no network; every point carries its value and time
as a tooltip (<title>) and as data attributes."""

from __future__ import annotations

import html
from datetime import datetime

WIDTH, HEIGHT, PAD_LEFT, PAD_RIGHT, PAD_Y = 720, 200, 64, 16, 24


def _figure(value: float) -> str:
    if abs(value) >= 100 or value.is_integer():
        return f"{value:,.0f}"
    return f"{value:,.2f}"


def line_chart(chart_id: str, title: str, unit: str, points: list[tuple[datetime, float]]) -> str:
    """An SVG line chart of (time, value) points, oldest first; a short note when there are none."""
    if not points:
        return f"<div class='meta' id='{html.escape(chart_id)}'>{html.escape(title)}: no figures yet</div>"
    times = [t.timestamp() for t, _ in points]
    values = [v for _, v in points]
    t0, t1 = min(times), max(times)
    low, high = min(0.0, min(values)), max(values)
    span_t, span_v = (t1 - t0) or 1.0, (high - low) or 1.0
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - 2 * PAD_Y

    def x(t: float) -> float:
        return PAD_LEFT + (t - t0) / span_t * plot_w if len(points) > 1 else PAD_LEFT + plot_w / 2

    def y(v: float) -> float:
        return PAD_Y + (high - v) / span_v * plot_h

    coords = [(x(t), y(v)) for t, v in zip(times, values, strict=True)]
    line = " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords)
    dots = "".join(
        f"<circle class='point' cx='{cx:.1f}' cy='{cy:.1f}' r='2.5' data-value='{v!r}' "
        f"data-time='{html.escape(t.isoformat())}'><title>{html.escape(t.isoformat(sep=' ', timespec='seconds'))}: "
        f"{_figure(v)} {html.escape(unit)}</title></circle>"
        for (cx, cy), (t, v) in zip(coords, points, strict=True))
    axis = (f"<line x1='{PAD_LEFT}' y1='{PAD_Y}' x2='{PAD_LEFT}' y2='{HEIGHT - PAD_Y}' stroke='#8c959f'/>"
            f"<line x1='{PAD_LEFT}' y1='{HEIGHT - PAD_Y}' x2='{WIDTH - PAD_RIGHT}' y2='{HEIGHT - PAD_Y}' "
            "stroke='#8c959f'/>"
            f"<text x='{PAD_LEFT - 6}' y='{PAD_Y + 4}' text-anchor='end' font-size='11'>{_figure(high)}</text>"
            f"<text x='{PAD_LEFT - 6}' y='{HEIGHT - PAD_Y + 4}' text-anchor='end' font-size='11'>{_figure(low)}</text>"
            f"<text x='{PAD_LEFT}' y='{HEIGHT - 6}' font-size='11'>"
            f"{html.escape(points[0][0].isoformat(sep=' ', timespec='seconds'))}</text>"
            f"<text x='{WIDTH - PAD_RIGHT}' y='{HEIGHT - 6}' text-anchor='end' font-size='11'>"
            f"{html.escape(points[-1][0].isoformat(sep=' ', timespec='seconds'))}</text>")
    return (f"<figure><figcaption>{html.escape(title)} ({html.escape(unit)})</figcaption>"
            f"<svg id='{html.escape(chart_id)}' role='img' aria-label='{html.escape(title)}' width='{WIDTH}' "
            f"height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}'>{axis}"
            f"<polyline fill='none' stroke='#0969da' stroke-width='1.5' points='{line}'/>{dots}</svg></figure>")
