"""What a newcomer meets first (issue 19): help, version, the catalog, tables that
fit an 80-column terminal, "did you mean", and the notes beside flags.  The real CLI
entry point over a real database (the shipped published results plus one tiny run); the version and
the short help through a real `gpuarena` process."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.conftest import gpuarena, run_cli

NARROW = {"COLUMNS": "80"}
COMMANDS = ("run", "list", "results", "env", "compare", "cost", "check", "whatif", "advise", "export",
            "import", "report", "gpus", "doctor", "fleet")


def fits(text: str, width: int = 80) -> None:
    # a path printed whole at the end of a line ("report: /long/path.html", "46 result(s) in /tmp/.../g.db")
    # may run over: it must stay copyable, and its length is the machine's (TMPDIR), not the table's
    def over(line: str) -> bool:
        last = line.split()[-1] if line.split() else ""
        return len(line) > width and not ("/" in last and len(line) - len(last) <= width)

    wide = [line for line in text.splitlines() if over(line)]
    assert not wide, f"{len(wide)} line(s) wider than {width}: {wide[:3]}"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("newcomer") / "g.db")
    assert gpuarena("import", "--published", "--db", path).returncode == 0
    proc = gpuarena("run", "-w", "matmul", "--repeats", "3", "--db", path, env=NARROW)
    assert proc.returncode == 0, proc.stderr
    return path, proc


def test_version_and_short_help():
    from gpuarena import __version__

    v = run_cli("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"gpuarena {__version__}"
    h = run_cli("-h", env=NARROW)
    assert h.returncode == 0 and "gpus" in h.stdout and "--version" in h.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_names_values_not_python_types(command):
    out = gpuarena(command, "-h", env=NARROW)
    assert out.returncode == 0, out.stderr
    assert "<str>" not in out.stdout and "<int>" not in out.stdout and "<float>" not in out.stdout
    assert "<bool>" not in out.stdout
    fits(out.stdout)
    # every option says what it is for: an option line alone (no help text) would end at its metavar
    lines = out.stdout.split("Options:", 1)[1].splitlines()
    for i, line in enumerate(lines):
        if line.startswith("  -"):   # "  -b, --baseline GPU  help", or the help on the next, deeper line
            has_help = "  " in line.strip() or (i + 1 < len(lines) and lines[i + 1].startswith("      "))
            assert has_help, f"{command}: option without help: {line.strip()}"


def test_adhoc_cpu_run_is_tiny_and_says_so(db):
    _, proc = db
    assert "size tiny (the CPU default; --size full for the article)" in " ".join(proc.stderr.split())
    fits(proc.stdout)
    fits(proc.stderr)


def test_size_is_checked():
    out = gpuarena("run", "-w", "matmul", "--size", "huge", "--db", "/nonexistent/x.db")
    assert out.returncode == 2 and "--size 'huge': choose tiny or full" in out.stderr


def test_gpus_lists_the_catalog_in_every_format():
    table = gpuarena("gpus", env=NARROW)
    assert table.returncode == 0, table.stderr
    fits(table.stdout)
    assert "H200 SXM 141GB" in table.stdout and "NVLink" in table.stdout and "BF16" in table.stdout
    rows = json.loads(gpuarena("gpus", "--format", "json").stdout)
    h200 = next(r for r in rows if r["name"] == "NVIDIA H200 SXM 141GB")
    assert h200["memory_gb"] == 141 and h200["memory_bandwidth_gbs"] == 4800 and h200["tdp_w"] == 700
    assert h200["bf16_peak"] > 900 and h200["nvlink_gbs"] == 900 and h200["purchase_source"]
    cs = list(csv.DictReader(io.StringIO(gpuarena("gpus", "--format", "csv").stdout)))
    assert len(cs) == len(rows) and cs[0]["name"] == rows[0]["name"]
    md = gpuarena("gpus", "--format", "md").stdout
    assert md.count("\n| NVIDIA ") == len(rows) and "price source" in md


def test_unknown_gpu_points_to_the_catalog(db):
    path, _ = db
    out = gpuarena("whatif", "-w", "resnet50-train", "--gpu", "Z9000", "--throughput", "100", "--db", path)
    assert out.returncode == 2 and "`gpuarena gpus` lists the catalog" in out.stderr


def test_did_you_mean_and_ambiguous_baseline(db):
    path, _ = db
    for verb in (["compare", "-b", "A100 80GB SXM4"], ["cost"]):
        out = gpuarena(*verb, "-w", "resnet50-trian", "--db", path)
        assert out.returncode == 2 and "did you mean 'resnet50-train'?" in out.stderr, out.stderr
    out = gpuarena("compare", "-b", "A10O 80GB SXM4", "--db", path)
    assert out.returncode == 2 and "did you mean 'NVIDIA A100 80GB SXM4'?" in out.stderr, out.stderr
    assert "`gpuarena gpus` lists the catalog" in out.stderr
    out = gpuarena("compare", "-b", "A100 40GB", "--db", path)
    assert out.returncode == 2
    assert "ambiguous" in out.stderr and "A100 40GB SXM4" in out.stderr and "A100 40GB PCIe" in out.stderr


def test_check_with_a_missing_database_file_says_so(tmp_path):
    out = gpuarena("check", "--db", str(tmp_path / "typo.db"), "--gpu", "H100 80GB SXM5", "-w", "resnet50-train",
                  "--precision", "bf16", "--batch-size", "256", "--throughput", "1000")
    assert out.returncode == 2 and "the file does not exist" in out.stderr
    assert not (tmp_path / "typo.db").exists()


def test_results_after_import_published_show_gpu_and_throughput(db):
    path, _ = db
    out = gpuarena("results", "--db", path, "-w", "resnet50-train", env=NARROW)
    assert out.returncode == 0, out.stderr
    fits(out.stdout)
    assert "GPU A100 80GB SXM4" in out.stdout and "938.0 images/s" in out.stdout
    wide = gpuarena("results", "--db", path, "-w", "resnet50-train", env={"COLUMNS": "400"})
    assert "│ A100 80GB SXM4" in wide.stdout and "938.0 images/s" in wide.stdout


@pytest.mark.parametrize("args", [
    ("results",),
    ("list",),
    ("compare", "-b", "A100 80GB SXM4", "-w", "resnet50-train"),
    ("cost", "-w", "resnet50-train"),
    ("check", "--gpu", "H100 80GB SXM5", "-w", "resnet50-train", "--precision", "bf16", "--batch-size", "256",
     "--throughput", "1000"),
    ("advise", "-w", "resnet50-train"),
    ("whatif", "-w", "resnet50-train", "--gpu", "H100 80GB SXM5", "--throughput", "1000"),
    ("gpus",),
])
def test_every_table_fits_80_columns_and_machine_formats_stay_whole(db, args):
    path, _ = db
    needs_db = args[0] not in ("list", "gpus")
    out = gpuarena(*args, *(("--db", path) if needs_db else ()), env=NARROW)
    assert out.returncode == 0, out.stderr
    fits(out.stdout)
    if args[0] in ("compare", "cost", "advise", "whatif", "check", "gpus", "results"):
        whole = gpuarena(*args, *(("--db", path) if needs_db else ()), "--format", "json", env=NARROW)
        assert whole.returncode == 0 and json.loads(whole.stdout)


def test_compare_sorts_batch_sizes_as_numbers(db):
    path, _ = db
    rows = json.loads(gpuarena("compare", "-b", "A100 80GB SXM4", "--db", path, "--format", "json").stdout)["rows"]
    for key in {(r["workload"], r["variant"], r["gpu"]) for r in rows}:
        bs = [r["params"]["batch_size"] for r in rows
              if (r["workload"], r["variant"], r["gpu"]) == key and "batch_size" in r["params"]]
        assert bs == sorted(bs)


def test_noisy_tiny_cpu_rows_explain_themselves(tmp_path):
    from gpuarena.report.notes import NOISY_TINY, results_notes

    tiny = _typed(size="tiny", device="cpu", cv=0.4)
    assert results_notes([tiny]) == [NOISY_TINY]
    assert results_notes([_typed(size="tiny", device="cuda", cv=0.4)]) == []
    assert "--set loss=cross-entropy" in results_notes([_typed(extra={"nan": True})])[0]


def _typed(cv: float = 0.01, **kw):
    """A stored result as the report reads it (a typed Result)."""
    from gpuarena.store.rows import validated

    return validated({"id": 1, "case_key": "k", "workload": "matmul", "variant": "seed", "params": {},
                      "status": "ok", "throughput_median": 1.0,
                      "throughput": {"n": 5, "median": 1.0, "mean": 1.0, "cv": cv}, **kw})


def test_report_explains_a_flag_where_it_first_appears():
    from gpuarena.report.build import explain_flags
    from gpuarena.report.model import Section, Table
    from gpuarena.report.notes import NAN

    first = Section("a", "A", tables=[Table("t", [("flags", "p")], [["-"]])])
    second = Section("b", "B", tables=[Table("u", [("flags", "p")], [["noisy, NaN"]])])
    third = Section("c", "C", tables=[Table("v", [("flags", "p")], [["NaN"]])])
    rows = [_typed(size="tiny", device="cpu", cv=0.3, extra={"nan": True})]
    explain_flags([first, second, third], rows)
    assert first.paragraphs == [] and third.paragraphs == []
    assert second.paragraphs[0].startswith("Noisy: tiny cases on a CPU check that the install works")
    assert second.paragraphs[1] == NAN and "--set loss=cross-entropy" in NAN
