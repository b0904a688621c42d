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
    higher_is_better: bool = True  # the metric's direction: which score is the best so far


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
    step = _nice_step(min(0.0, min(p.score for p in pts)), max(1.0, max(p.score for p in pts)))
    lo = min(0.0, math.floor(min(p.score for p in pts) / step) * step)  # 0-1 scores: 0 to 1 by 0.2, as before;
    hi = max(1.0, math.ceil(max(p.score for p in pts) / step) * step)   # chrF, BLEU (0-100): 0 to 100 by 20
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
            elif (p.score > best) if s.higher_is_better else (p.score < best):
                d.append(f"H{p.x} V{p.y}")
            best = p.score if best is None else (max if s.higher_is_better else min)(best, p.score)
        d.append(f"H{x1}")
        s.best_path = " ".join(d)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    chart.y_ticks = [(sy(v), f"{v:.{max(decimals, 1) if hi <= 1 else decimals}f}") for v in _steps(lo, hi, step)]
    seen: set[str] = set()
    for k in range(5):  # up to five date ticks, each date once
        t = t0 + (t1 - t0) * k / 4
        if t.strftime("%Y-%m-%d") not in seen:
            seen.add(t.strftime("%Y-%m-%d"))
            chart.x_ticks.append((sx(t), t.strftime("%Y-%m-%d")))
    return chart


def _nice_step(lo: float, hi: float, max_ticks: int = 6) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k that spans ``lo``..``hi`` in at most ``max_ticks`` ticks
    (0.2 for scores from 0 to 1; 20 for chrF's or BLEU's 0 to 100)."""
    span = max(hi - lo, 1e-12)
    k = math.floor(math.log10(span / (max_ticks - 1)))
    for base in (1, 2, 2.5, 5, 10):
        step = base * 10.0 ** k
        if span / step <= max_ticks - 1 + 1e-9:
            return step
    return 10.0 ** (k + 1)


def _steps(lo: float, hi: float, step: float) -> list[float]:
    n = int(round((hi - lo) / step))
    return [round(lo + k * step, 6) for k in range(n + 1)]
