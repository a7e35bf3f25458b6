"""The report as Markdown: the same tables as the HTML, for pasting into an issue or a wiki.

Cells are escaped for GitHub-flavoured Markdown tables: a pipe would end the
cell and raw HTML would be rendered, so both become entities or escapes.
"""

from __future__ import annotations

from gpuarena.report.model import Report, Section, Table
from gpuarena.report.mdtext import escape


cell = escape


def table(t: Table) -> list[str]:
    out = []
    if t.title:
        out += [f"**{cell(t.title)}**", ""]
    out.append("| " + " | ".join(cell(name) for name, _ in t.columns) + " |")
    out.append("|" + "|".join("---:" if align == "r" else "---" for _, align in t.columns) + "|")
    for row in t.rows:
        out.append("| " + " | ".join(cell(c) for c in row) + " |")
    out.append("")
    if t.note:
        out += [f"_{cell(t.note)}_", ""]
    return out


def section(s: Section, level: int) -> list[str]:
    out = ["#" * level + " " + cell(s.title), ""]
    for p in s.paragraphs:
        out += [cell(p), ""]
    for t in s.tables:
        out += table(t)
    for c in s.charts:
        out += [f"_Chart in the HTML report: {cell(c.title)}._", ""]
    for sub in s.subsections:
        out += section(sub, level + 1)
    return out


def render(report: Report) -> str:
    out = [f"# {cell(report.title)}", "", cell(report.subtitle), ""]
    if report.headline:
        out += ["| " + " | ".join(cell(label) for label, _, _ in report.headline) + " |",
                "|" + "|".join("---" for _ in report.headline) + "|",
                "| " + " | ".join(f"**{cell(v)}** {cell(d)}" for _, v, d in report.headline) + " |", ""]
    for s in report.sections:
        out += section(s, 2)
    if report.footnotes:
        out += ["## Sources", ""] + [f"{i}. {cell(f)}" for i, f in enumerate(report.footnotes, 1)] + [""]
    return "\n".join(out).rstrip() + "\n"
