"""Analyses return data; only report/ formats text (issue 24 item 2).  No module of analysis/
defines a renderer, prints, writes to a terminal or imports the report, rich, typer or the
terminal-fitting helpers; each verb's words and columns live in report/text/.  The import
contract in pyproject.toml says the same for imports (tests/test_contracts.py runs it)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[2] / "src" / "gpuarena"
FORMATTING_IMPORTS = ("gpuarena.report", "gpuarena.textfit", "gpuarena.cli", "rich", "typer")
PRINTING_CALLS = ("print", "echo", "pprint")


def formatting_in(source: str) -> list[str]:
    """What in one module's source formats or prints: renderer definitions, print/echo calls,
    writes to sys.stdout/stderr, and imports of the report, rich, typer or textfit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.lstrip("_").startswith("render"):
            found.append(f"line {node.lineno}: def {node.name}")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in PRINTING_CALLS:
                found.append(f"line {node.lineno}: {name}()")
            elif name == "write" and "sys.std" in ast.unparse(f):
                found.append(f"line {node.lineno}: {ast.unparse(f)}()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if isinstance(node, ast.ImportFrom) and node.module == "gpuarena":
                names = [f"gpuarena.{a.name}" for a in node.names]
            found += [f"line {node.lineno}: import {n}" for n in names
                      if any(n == m or n.startswith(m + ".") for m in FORMATTING_IMPORTS)]
    return found


def test_the_guard_sees_every_form_of_formatting():
    bad = '''
from gpuarena.analysis.tables import natural_key
from gpuarena.report.text.table import render as _render
from gpuarena import textfit
import rich.console
import sys
def render(rows, fmt):
    return _render([], rows, fmt)
def render_plan(p, fmt):
    print(p)
def _show(x, console, typer):
    console.print(x)
    typer.echo(x)
    sys.stdout.write(x)
'''
    found = formatting_in(bad)
    assert len(found) == 9, found
    assert formatting_in("def rendered_width(t):\n    return len(t)\n") == [
        "line 1: def rendered_width"], "a name that starts with render is a renderer here"
    assert formatting_in("import json\nx = json.dumps({})\ndef limit(r):\n    return r\n") == []


def test_no_analysis_module_formats_or_prints():
    offenders = {p.name: found for p in sorted((SRC / "analysis").rglob("*.py"))
                 if (found := formatting_in(p.read_text()))}
    assert not offenders, f"analysis/ returns data; move the text to report/text/: {offenders}"


def test_each_verb_has_its_text_in_report():
    """The renderers that left analysis/ are in report/text/, one module per analysis."""
    text = {p.stem for p in (SRC / "report" / "text").glob("*.py")}
    assert {"table", "advise", "check", "compare", "cost", "doctor", "endpoints", "fleet", "llm_claims",
            "projection", "ratio", "serving", "whatif"} <= text
    assert not (SRC / "analysis" / "tables.py").exists()
