"""Geometry for the server-rendered SVG chart of approved scores over time.

Only numbers and strings are computed here; ``templates/_chart.html`` draws them, so every
model name in the chart passes through Jinja2 autoescaping like the rest of the page."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta

PALETTE = ["#1f5fa8", "#c2571a", "#2e8b57", "#8e44ad", "#b03a48", "#127a7a", "#7a6a12", "#555555"]
W, H = 560, 280
LEFT, RIGHT, TOP, BOTTOM = 44, 14, 12, 34


@dataclass
class Point:
    when: datetime
    score: float
    label: str  # tooltip text (model name)
    x: float = 0.0
    y: float = 0.0


@dataclass
class Series:
    name: str
    points: list[Point]
    color: str = ""
    best_path: str = ""  # SVG path of the running best (a step line)


@dataclass
class Chart:
    series: list[Series]
    width: int = W
    height: int = H
    x_ticks: list[tuple[float, str]] = field(default_factory=list)
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    plot: tuple[int, int, int, int] = (LEFT, TOP, W - RIGHT, H - BOTTOM)

    @property
    def empty(self) -> bool:
        return not any(s.points for s in self.series)


def build_chart(series: list[Series]) -> Chart:
    chart = Chart(series=[s for s in series if s.points])
    pts = [p for s in chart.series for p in s.points]
    if not pts:
        return chart
    t0, t1 = min(p.when for p in pts), max(p.when for p in pts)
    if t1 - t0 < timedelta(days=1):
        t0, t1 = t0 - timedelta(hours=12), t1 + timedelta(hours=12)
    lo = min(0.0, math.floor(min(p.score for p in pts) * 5) / 5)
    hi = max(1.0, math.ceil(max(p.score for p in pts) * 5) / 5)
    x0, y0, x1, y1 = chart.plot
    span = (t1 - t0).total_seconds()

    def sx(t: datetime) -> float:
        return round(x0 + (x1 - x0) * (t - t0).total_seconds() / span, 1)

    def sy(v: float) -> float:
        return round(y1 - (y1 - y0) * (v - lo) / (hi - lo), 1)

    for n, s in enumerate(chart.series):
        s.color = s.color or PALETTE[n % len(PALETTE)]
        best: float | None = None
        d: list[str] = []
        for p in sorted(s.points, key=lambda p: p.when):
            p.x, p.y = sx(p.when), sy(p.score)
            if best is None:
                d.append(f"M{p.x} {p.y}")
            elif p.score > best:
                d.append(f"H{p.x} V{p.y}")
            best = p.score if best is None else max(best, p.score)
        d.append(f"H{x1}")
        s.best_path = " ".join(d)
    chart.y_ticks = [(sy(v), f"{v:.1f}") for v in _steps(lo, hi, 0.2)]
    seen: set[str] = set()
    for k in range(5):  # up to five date ticks, each date once
        t = t0 + (t1 - t0) * k / 4
        if t.strftime("%Y-%m-%d") not in seen:
            seen.add(t.strftime("%Y-%m-%d"))
            chart.x_ticks.append((sx(t), t.strftime("%Y-%m-%d")))
    return chart


def _steps(lo: float, hi: float, step: float) -> list[float]:
    n = int(round((hi - lo) / step))
    return [round(lo + k * step, 6) for k in range(n + 1)]
