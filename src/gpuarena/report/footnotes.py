"""Long sources out of the text: every web address in a paragraph, note or cell, and every long
cell of a "source" column, becomes a numbered mark [n] whose full text is listed once at the
end of the report (the same source cited twice gets one number).  A reader sees a short
sentence and a table that fits; the source is one click away."""

from __future__ import annotations

import re

from gpuarena.report.model import Report, Section

# an address, with a trailing stop or bracket left to the sentence
URL = re.compile(r"(?:https?://|raw\.githubusercontent\.com/)[^\s;,]+?(?=[.,;:)\]]?(?:\s|$))"
                 r"|github [\w.-]+/[\w.-]+ [^\s;()]+(?: @ commit \w+)?")   # "github owner/repo path": a file cited
SOURCE_COLUMNS = ("source", "price source", "expected from")
LONG = 32          # a source cell longer than this becomes a mark


class Notes:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def mark(self, text: str) -> str:
        text = text.strip()
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"

    def urls(self, text: str) -> str:
        return URL.sub(lambda m: self.mark(m.group(0)), text)


def _section(s: Section, notes: Notes) -> None:
    s.paragraphs = [notes.urls(p) for p in s.paragraphs]
    for t in s.tables:
        sourced = [i for i, (h, _) in enumerate(t.columns) if h in SOURCE_COLUMNS]
        for row in t.rows:
            for i, cell in enumerate(row):
                if i in sourced and len(cell) > LONG:
                    row[i] = notes.mark(cell)
                else:
                    row[i] = notes.urls(cell)
        t.note = notes.urls(t.note)
    for sub in s.subsections:
        _section(sub, notes)


def footnote(report: Report) -> Report:
    notes = Notes()
    for s in report.sections:
        _section(s, notes)
    report.footnotes = notes.texts
    return report
