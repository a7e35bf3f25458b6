"""Charts for the HTML report: matplotlib (Agg) rendered to inline SVG strings.

Text stays text in the SVG (``svg.fonttype: none``) so the report is small,
searchable and printable; matplotlib's SVG writer escapes every string it
writes, and mathtext is switched off so a ``$`` in a GPU name is just a
dollar sign.  Each function takes the specs of report/chartspec.py and returns one ``<svg>``.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

from gpuarena.measure.telemetry import THROTTLE_BITS  # noqa: E402
from gpuarena.report.chartspec import BarGroup, FrontierCurve, Series  # noqa: E402

# Colour-blind-safe qualitative palette (Okabe & Ito, 2008).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
THROTTLE_MASK = sum(THROTTLE_BITS)

STYLE = {
    "svg.fonttype": "none",          # real <text>, not glyph paths
    "text.parse_math": False,        # "$" in a label is a character, not mathtext
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e3e6ea",
    "grid.linewidth": 0.7,
    "axes.edgecolor": "#9aa1a9",
    "axes.labelcolor": "#333",
    "xtick.color": "#555",
    "ytick.color": "#555",
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "legend.frameon": False,
    "legend.fontsize": 8,
}

_HEAD = re.compile(r"^.*?(?=<svg)", re.S)


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _figure(width: float = 7.0, height: float = 3.2, nrows: int = 1, sharex: bool = False):
    fig, axes = plt.subplots(nrows, 1, figsize=(width, height), sharex=sharex, squeeze=False)
    return fig, [a[0] for a in axes]


def _svg(fig, chart_id: str) -> str:
    """The figure as an <svg> element with no XML prolog, ids salted per chart so that
    several charts inlined in one page never share a clip-path id."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": chart_id}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = _HEAD.sub("", buf.getvalue(), count=1)
    # Let CSS size the chart: keep the viewBox, drop the fixed pt size.
    return re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', text, count=1)


def _thousands(ax, axis: str = "y") -> None:
    fmt = FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


LONG_LABEL = 40      # a legend label longer than this goes under the axes, wrapped at WRAP_LABEL characters
WRAP_LABEL = 80


def _legend(ax, n: int) -> None:
    handles, labels = ax.get_legend_handles_labels()
    longest = max((len(str(t)) for t in labels), default=0)
    if n > 4 or (n > 1 and longest > LONG_LABEL):
        # many lines, or long labels: the legend goes under the axes, where it cannot cover a point; two
        # columns of long labels would make the figure wider than the axes and the page shrink it
        ax.legend(handles, [textwrap.fill(str(t), WRAP_LABEL) for t in labels], loc="upper left",
                  bbox_to_anchor=(0, -0.2), ncol=1 if longest > 45 else 2, borderaxespad=0)
    elif n > 1:
        ax.legend(loc="best")


def _labelled(fig, ax, chart_id: str, xlabel: str, ylabel: str, title: str, n: int) -> str:
    """Axis labels, title and legend of n lines; the SVG."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    _legend(ax, n)
    return _svg(fig, chart_id)


def _err(y, lo, hi):
    """Asymmetric error bars from CI bounds; missing bounds give zero-length bars."""
    # A lower bound under zero (a wide interval on a ratio) is drawn down to zero, not below it.
    below = [max(0.0, v - max(lv, 0.0)) if lv is not None else 0.0 for v, lv in zip(y, lo)]
    above = [max(0.0, hv - v) if hv is not None else 0.0 for v, hv in zip(y, hi)]
    return [below, above]


def _size_tick(v: float, _=None) -> str:
    return f"1/{round(1 / v):g}" if 0 < v < 1 else f"{v:g}"


def lines_with_ci(chart_id: str, series: list[Series], xlabel: str, ylabel: str, title: str = "",
                  logx: bool = False, logy: bool = False, ref: float | None = None,
                  ybottom: float | None = 0.0) -> str:
    """One line per series with 95% CI error bars."""
    with plt.rc_context(STYLE):
        fig, (ax,) = _figure()
        for i, s in enumerate(series):
            y = s.y
            yerr = _err(y, s.lo or [None] * len(y), s.hi or [None] * len(y))
            ax.errorbar(s.x, y, yerr=yerr, label=s.label, color=s.color or colour(i),
                        marker="o", markersize=4, linewidth=1.6, capsize=3, elinewidth=1,
                        linestyle="--" if s.dashed else "-")
        if ref is not None:
            ax.axhline(ref, color="#888", linewidth=0.8, linestyle=":")
        if logx:
            ax.set_xscale("log", base=2)
            xs_all = [x for s in series for x in s.x if x > 0]
            if xs_all and max(xs_all) / min(xs_all) > 2**10:   # a wide sweep: a tick every factor of 8
                ax.xaxis.set_major_locator(LogLocator(base=8))
            ax.xaxis.set_major_formatter(FuncFormatter(_size_tick))
        if logy:
            ax.set_yscale("log")
        else:
            if ybottom is not None:
                ax.set_ylim(bottom=ybottom)
            _thousands(ax)
        xs = sorted({x for s in series for x in s.x})
        if xs and len(xs) <= 12 and not logx:
            ax.set_xticks(xs)
        return _labelled(fig, ax, chart_id, xlabel, ylabel, title, len(series))


def frontier(chart_id: str, curves: list[FrontierCurve], xlabel: str, ylabel: str, title: str = "") -> str:
    """Serving frontiers (analysis/verbs/frontier.py): every point faded, each curve's frontier as a line,
    its best point under the SLO as a star, and each SLO's tokens/s per user as a dotted vertical line."""
    with plt.rc_context(STYLE):
        fig, (ax,) = _figure()
        for i, c in enumerate(curves):
            col = colour(i)
            ax.scatter([p.per_user for p in c.points], [p.per_gpu for p in c.points], s=10,
                       color=col, alpha=0.35)
            f = sorted(c.frontier, key=lambda p: p.per_user)
            ax.plot([p.per_user for p in f], [p.per_gpu for p in f], color=col, marker="o", markersize=4,
                    linewidth=1.6, label=c.label)
            if c.best:
                ax.scatter([c.best.per_user], [c.best.per_gpu], marker="*", s=140, color=col,
                           edgecolor="black", linewidth=0.6, zorder=5)
        for k, x in enumerate(sorted({c.slo_per_user for c in curves if c.slo_per_user})):
            ax.axvline(x, color="#888", linewidth=0.9, linestyle=":")
            ax.annotate(f"SLO {x:g}", (x, 1), xycoords=("data", "axes fraction"), xytext=(3, -12 - 10 * k),
                        textcoords="offset points", fontsize=8, color="#555")
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        _thousands(ax)
        return _labelled(fig, ax, chart_id, xlabel, ylabel, title, len(curves))


def grouped_bars(chart_id: str, categories: list[str], groups: list[BarGroup], ylabel: str, title: str = "",
                 ref: float | None = None) -> str:
    """Vertical bars: one cluster per category, one bar per group.
    More than HBAR_FROM categories turn into horizontal bars: their labels then get a line each
    instead of colliding under the axis."""
    if len(categories) > MAX_BARS:   # a chart of thousands of bars is unreadable, and slow to draw
        title = f"{title} (the first {MAX_BARS} of {len(categories)}; the table lists all)".lstrip()
        groups = [replace(g, **{k: getattr(g, k)[:MAX_BARS] for k in ("values", "lo", "hi", "upper") if getattr(g, k)})
                  for g in groups]
        categories = categories[:MAX_BARS]
    if len(categories) > HBAR_FROM:
        return _hbars(chart_id, categories, groups, ylabel, title, ref)
    with plt.rc_context(STYLE):
        fig, (ax,) = _figure()
        n = max(1, len(groups))
        w = 0.8 / n
        for gi, g in enumerate(groups):
            xs = [ci - 0.4 + w * (gi + 0.5) for ci in range(len(categories))]
            vals, yerr = _bar_values(g)
            bars = ax.bar(xs, vals, width=w * 0.92, label=g.label, color=g.color or colour(gi),
                          yerr=yerr, capsize=2, error_kw={"elinewidth": 0.8, "ecolor": "#444"})
            tops = [max(v, h) if h is not None and not math.isnan(v) else v
                    for v, h in zip(vals, g.hi or [None] * len(vals))]
            for b, v, top in zip(bars, vals, tops):
                if not math.isnan(v):
                    ax.annotate(_bar_label(v), (b.get_x() + b.get_width() / 2, top),
                                xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                                fontsize=7, color="#333")
        if ref is not None:
            ax.axhline(ref, color="#666", linewidth=0.9, linestyle="--")
        ax.set_xticks(range(len(categories)))
        # Long labels wrap onto lines rather than rotate: rotated text squeezes the plot.
        ax.set_xticklabels([textwrap.fill(c, 22) for c in categories], fontsize=8 if len(categories) > 4 else 9)
        ax.grid(axis="x", visible=False)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        if groups:  # even one group: its label says which GPU the bars are
            ax.legend(loc="best")
        return _svg(fig, chart_id)


HBAR_FROM = 6
MAX_BARS = 60


def _bar_label(v: float) -> str:
    return f"{v:.2f}" if v < 100 else f"{v:,.0f}"


def _bar_values(g: BarGroup):
    """A group's values (missing -> NaN, drawn as no bar) and its error bars, if it has bounds."""
    vals = [v if v is not None else math.nan for v in g.values]
    err = _err([0 if math.isnan(v) else v for v in vals], g.lo, g.hi) if g.lo and g.hi else None
    return vals, err


def hbars(chart_id: str, categories: list[str], groups: list[BarGroup], xlabel: str, title: str = "",
          ref: float | None = None, compact: bool = False) -> str:
    """Horizontal bars whatever the number of categories (a first-screen chart that reads on a phone);
    compact: thinner bars, for a chart that shares the first screen."""
    return _hbars(chart_id, categories, groups, xlabel, title, ref, per_bar=0.1 if compact else 0.16)


def _hbars(chart_id: str, categories: list[str], groups: list[BarGroup], xlabel: str, title: str,
           ref: float | None, per_bar: float = 0.16) -> str:
    with plt.rc_context(STYLE):
        n = max(1, len(groups))
        fig, (ax,) = _figure(width=6.0 if per_bar < 0.16 else 7.0, height=0.9 + per_bar * len(categories) * (n + 0.6))
        h = 0.8 / n
        for gi, g in enumerate(groups):
            ys = [ci - 0.4 + h * (gi + 0.5) for ci in range(len(categories))]
            vals, xerr = _bar_values(g)
            bars = ax.barh(ys, vals, height=h * 0.9, label=g.label, color=g.color or colour(gi),
                           xerr=xerr, capsize=2, error_kw={"elinewidth": 0.8, "ecolor": "#444"})
            upper = g.upper or [False] * len(vals)   # an upper bound (a projection on a cap) reads "≤"
            his = [h if h is not None else v for v, h in zip(vals, g.hi or vals)]
            for b, v, top, up in zip(bars, vals, his, upper):
                if not math.isnan(v):
                    ax.annotate(("≤" if up else "") + _bar_label(v), (max(v, top), b.get_y() + b.get_height() / 2),
                                xytext=(3, 0), textcoords="offset points", va="center", fontsize=7, color="#333")
        if ref is not None:
            ax.axvline(ref, color="#666", linewidth=0.9, linestyle="--")
        ax.set_yticks(range(len(categories)))
        ax.set_yticklabels([textwrap.shorten(c, 60, placeholder="…") for c in categories], fontsize=8)
        ax.invert_yaxis()                       # first category on top, as in the table
        ax.grid(axis="y", visible=False)
        ax.set_xlim(left=0)
        ax.margins(x=0.08)
        ax.set_xlabel(xlabel)
        if title:
            ax.set_title(title)
        if groups:   # under the axes, where it cannot cover a bar
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16 - 1.2 / max(8, len(categories) * (n + 0.6))),
                      ncol=min(3, len(groups)))
        return _svg(fig, chart_id)


def telemetry(chart_id: str, samples: list, title: str = "") -> str:
    """Power, temperature and SM clock over time, with samples whose clock-event reasons
    say the GPU slowed itself shaded red."""
    panels = [("power_w", "power (W)"), ("temp_c", "temperature (°C)"), ("sm_clock_mhz", "SM clock (MHz)")]
    panels = [p for p in panels if any(getattr(s, p[0]) is not None for s in samples)]
    with plt.rc_context(STYLE):
        fig, axes = _figure(height=1.6 * max(1, len(panels)) + 0.6, nrows=max(1, len(panels)), sharex=True)
        ts = [s.t or 0.0 for s in samples]
        throttled = [bool((s.reasons or 0) & THROTTLE_MASK) for s in samples]
        for i, (ax, (key, label)) in enumerate(zip(axes, panels)):
            pts = [(t, getattr(s, key)) for t, s in zip(ts, samples) if getattr(s, key) is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour(i), linewidth=1.4)
            ax.set_ylabel(label)
            _shade_runs(ax, ts, throttled)
        if any(throttled):
            axes[0].plot([], [], color="#D55E00", alpha=0.25, linewidth=8, label="throttled")
            axes[0].legend(loc="lower right")
        axes[-1].set_xlabel("time in the timed window (s)")
        if title:
            axes[0].set_title(title)
        return _svg(fig, chart_id)


def _shade_runs(ax, ts: list[float], flags: list[bool]) -> None:
    start = None
    for i, f in enumerate(flags + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            end = ts[i] if i < len(ts) else ts[-1]
            ax.axvspan(ts[start], end if end > ts[start] else ts[start] + 0.05, color="#D55E00", alpha=0.18,
                       linewidth=0)
            start = None
