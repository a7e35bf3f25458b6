"""The report as data: the types HTML and Markdown render, and the small helpers every
section builder shares.  build.py gathers the sections; analysis_sections.py, run_sections.py,
workload_sections.py, multigpu.py and the others build them; all import from here, none from
each other's callers.
Cells are plain strings; escaping is the renderer's job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuarena.analysis.rows.derived import share_of_peak
from gpuarena.store.result import Result

# A table of tens of thousands of rows is no page to read (50,000 rows made a 44 MB report): the report
# shows the first rows of a long table and says how many it left out and which command prints them all.
MAX_ROWS = 500

NUMERIC = "r"
TEXT = "l"       # short text: kept on one line
PROSE = "p"      # sentences (reasons, notes, warnings): wrapped


@dataclass
class Table:
    id: str
    columns: list[tuple[str, str]]          # (header, "l" | "r")
    rows: list[list[str]]
    title: str = ""
    note: str = ""
    details: tuple[str, ...] = ()           # headers of secondary columns: a details row under each row in HTML


@dataclass
class Chart:
    id: str
    title: str
    kind: str                               # a function name in report.charts
    args: dict
    alt: str = ""


@dataclass
class Section:
    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    subsections: list["Section"] = field(default_factory=list)
    data: dict = field(default_factory=dict)   # figures other sections read (not rendered)


@dataclass
class Report:
    title: str
    subtitle: str
    headline: list[tuple[str, str, str]]    # (label, value, detail)
    sections: list[Section]
    footnotes: list[str] = field(default_factory=list)   # long sources, cited as [n] in the text


ALWAYS_SHOWN = ("batch_size",)


def brief_params(given: list[tuple[str, dict]]) -> list[str]:
    """Parameters for a table as "k=v k=v" text: per workload, the keys whose value differs
    between rows, and batch size.  `given` is [(workload, params)]; the texts in the same order."""
    parsed = [(w, dict(sorted((p or {}).items()))) for w, p in given]
    shown: dict[str, set[str]] = {}
    for w in dict.fromkeys(w for w, _ in parsed):
        mine = [p for x, p in parsed if x == w]
        keys = dict.fromkeys(k for p in mine for k in p)
        shown[w] = {k for k in keys if k in ALWAYS_SHOWN or len({p.get(k) for p in mine if k in p}) > 1}
    return [" ".join(f"{k}={v}" for k, v in p.items() if k in shown[w]) or "-" for w, p in parsed]


def varying_params(rows: list[Result]) -> list[str]:
    keys: list[str] = []
    for r in rows:
        for k in r.params:
            if k not in keys:
                keys.append(k)
    return [k for k in keys if len({repr(r.params.get(k)) for r in rows}) > 1]


def params_text(r: Result, keys: list[str]) -> str:
    """Only the keys the result has: a parameter added to a workload later is not "None" on older results."""
    return " ".join(f"{k}={r.params[k]}" for k in keys if k in r.params)



def pct(x) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.1%}"


def prune(t: Table, keep: int = 3) -> Table:
    """Drop columns (after the first `keep`) that are empty in every row: a CPU run has no power."""
    cols = [i for i, _ in enumerate(t.columns) if i < keep or any(row[i] not in ("-", "") for row in t.rows)]
    return Table(t.id, [t.columns[i] for i in cols], [[row[i] for i in cols] for row in t.rows], t.title, t.note,
                 t.details)


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "x"


def ok(r: Result) -> bool:
    return r.status == "ok" and bool(r.throughput_median)


def device_of(r: Result) -> str:
    name = r.device_name or r.device or "?"
    return f"{name} x{r.gpus}" if r.gpus > 1 else name


def catalog_share(r) -> float | None:
    """The share of the card's peak at the executed precision: the one rule (analysis/rows/derived.py)."""
    return share_of_peak(r)
