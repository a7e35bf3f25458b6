"""Promise 4: hostile or broken input is refused with one line on stderr, exit
code 2, and nothing written.  Most cases call the CLI's real entry point in
this process (fast); a few go through a real `gpuarena` process."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from gpuarena.cli import main
from gpuarena.store.db import Store

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuarena"

GOOD_SUITE = "name: ok\nentries:\n  - workload: resnet50-train\n"
# 3000 x 3000 x 3 = 27 million cases from a 30 kB file: must be refused before it is built.
_VALUES = ", ".join(str(i) for i in range(16, 3016))
HUGE_GRID = (f"name: big\nentries:\n  - workload: resnet50-train\n"
             f"    grid: {{batch_size: [{_VALUES}], image_size: [{_VALUES}], lr: [0.1, 0.2, 0.3]}}\n")


def invoke(capsys, *argv: str) -> tuple[int, str]:
    """Exit code and stderr; stdout stays in capsys for the caller."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    captured = capsys.readouterr()
    print(captured.out, end="")  # hand stdout back to capsys
    return exc.value.code, captured.err


def snapshot(db: str):
    """Everything a refused command could have written: the file's existence and each table's rows."""
    if not os.path.exists(db):
        return None
    conn = sqlite3.connect(db)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("environments", "runs", "results")}
    finally:
        conn.close()


@pytest.fixture
def seeded_db(tmp_path):
    """A database holding one run and one result, as a user's would."""
    db = str(tmp_path / "seeded.db")
    store = Store(db)
    run_id = store.create_run("ok", "cpu", [], None)
    store.add_result({"run_id": run_id, "case_key": "k", "workload": "resnet50-train", "variant": "seed",
                      "params": {"batch_size": 2}, "status": "ok", "throughput_median": 8.0})
    store.close()
    return db


def _suite(tmp_path, name: str, text: str | bytes) -> str:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


RUN_REFUSALS = [
    # (id, extra argv, files to write {name: text}, what the error line must say)
    ("malformed-yaml", ["--suite", "{s}/bad.yaml"], {"bad.yaml": "name: [unclosed\nentries: {"}, "not valid YAML"),
    ("not-a-mapping", ["--suite", "{s}/list.yaml"], {"list.yaml": "- a\n- b\n"}, "a suite file is a mapping"),
    ("huge", ["--suite", "{s}/huge.yaml"], {"huge.yaml": GOOD_SUITE + "#" * 1_100_000 + "\n"},
     "larger than 1000000 bytes"),
    ("python-tag", ["--suite", "{s}/tag.yaml"],
     {"tag.yaml": "name: !!python/object/apply:os.system ['touch {s}/pwned']\nentries: []\n"}, "not valid YAML"),
    ("deep-yaml", ["--suite", "{s}/deep.yaml"], {"deep.yaml": "name: x\nentries: " + "[" * 50_000},
     "nested too deeply"),
    ("grid-explosion", ["--suite", "{s}/grid.yaml"], {"grid.yaml": HUGE_GRID}, "more than 100000 cases"),
    ("unknown-key", ["--suite", "{s}/extra.yaml"], {"extra.yaml": GOOD_SUITE + "shell: rm -rf /\n"},
     "shell: Extra inputs"),
    ("missing-suite-file", ["--suite", "{s}/nope.yaml"], {}, "does not exist"),
    ("unknown-suite", ["--suite", "smok"], {}, "did you mean 'smoke'"),
    ("unknown-workload", ["-w", "resnet50-trian"], {}, "did you mean 'resnet50-train'"),
    ("suite-lacks-workload", ["--suite", "seed-a100-a800", "-w", "matmul"], {}, "has no entry for workload 'matmul'"),
    ("suite-workload-typo", ["--suite", "smoke", "-w", "membwx"], {}, "did you mean 'membw'"),
    ("unknown-variant", ["-w", "resnet50-train", "--variant", "amp-bf61"], {}, "did you mean 'amp-bf16'"),
    ("clashing-variants", ["-w", "resnet50-train", "--variant", "amp-bf16+amp-fp16"], {}, "exclude each other"),
    ("seed-combined", ["-w", "resnet50-train", "--variant", "seed+tf32"], {}, "does not combine"),
    ("negative-batch", ["-w", "resnet50-train", "--set", "batch_size=-1"], {}, "batch_size=-1: must be >= 1"),
    ("text-batch", ["-w", "resnet50-train", "--set", "batch_size=abc"], {}, "batch_size='abc': expected int"),
    ("nan-lr", ["-w", "resnet50-train", "--set", "lr=nan"], {}, "must be a finite number"),
    ("unknown-param", ["-w", "resnet50-train", "--set", "batchsize=2"], {}, "did you mean 'batch_size'"),
    ("set-no-equals", ["-w", "resnet50-train", "--set", "batch_size"], {}, "expected KEY=VALUE"),
    ("zero-repeats", ["-w", "resnet50-train", "--repeats", "0"], {}, "--repeats 0"),
    ("zero-repeats-set", ["-w", "resnet50-train", "--set", "repeats=0"], {}, "repeats"),
    ("bad-size", ["-w", "resnet50-train", "--set", "size=huge"], {}, "size must be 'full' or 'tiny'"),
    ("device-tpu", ["-w", "resnet50-train", "--device", "tpu"], {}, "--device 'tpu'"),
    ("device-cuda-here", ["-w", "resnet50-train", "--device", "cuda"], {}, "no CUDA device"),
    ("gpus-zero", ["-w", "resnet50-train", "--gpus", "0"], {}, "--gpus"),
    ("resume-unknown", ["--resume", "20990101-000000-nope"], {}, "no run '20990101-000000-nope' | no database at"),
]


@pytest.mark.parametrize("argv,files,says", [r[1:] for r in RUN_REFUSALS], ids=[r[0] for r in RUN_REFUSALS])
@pytest.mark.parametrize("fresh", [True, False], ids=["no-db", "seeded-db"])
def test_run_refuses(tmp_path, capsys, seeded_db, argv, files, says, fresh):
    import torch

    if "cuda" in argv and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    for name, text in files.items():
        _suite(tmp_path, name, text.replace("{s}", str(tmp_path)) if isinstance(text, str) else text)
    db = str(tmp_path / "fresh.db") if fresh else seeded_db
    before = snapshot(db)
    code, err = invoke(capsys, "run", *[a.replace("{s}", str(tmp_path)) for a in argv], "--db", db, "-q")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuarena: error: "), err
    assert any(s in lines[0] for s in says.split(" | ")), lines[0]  # " | " separates alternatives
    assert snapshot(db) == before  # a fresh path stays absent; a user's database is unchanged
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("argv,says", [
    (["results", "--run", "nope"], "no run 'nope'"),
    (["results", "--format", "xml"], "--format 'xml'"),
    (["results", "--run", "latest", "--format", "csv", "--workload", "d2h"], None),
    (["results", "--workload", "x"], "unknown workload 'x'"),   # issue 27: never a silent "0 result(s)"
], ids=["unknown-run", "format-xml", "known-workload-without-results-is-empty", "unknown-workload"])
def test_results_refuses(capsys, seeded_db, argv, says):
    before = snapshot(seeded_db)
    if says is None:  # a known workload with no results is not an error: an empty table
        code, _ = invoke(capsys, *argv, "--db", seeded_db)
        assert code == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0].startswith("id,run_id") and len(out.splitlines()) == 1
    else:
        code, err = invoke(capsys, *argv, "--db", seeded_db)
        assert code == 2
        assert err.count("\n") == 1 and says in err
    assert snapshot(seeded_db) == before


def test_results_without_db(tmp_path, capsys):
    db = str(tmp_path / "absent.db")
    code, err = invoke(capsys, "results", "--db", db)
    assert code == 2 and "no database at" in err
    assert not os.path.exists(db)


def test_not_a_database(tmp_path, capsys):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\x00not sqlite\x00" * 200)
    code, err = invoke(capsys, "results", "--db", str(junk))
    assert code == 2 and "not a gpuarena database" in err
    assert junk.read_bytes() == b"\x00not sqlite\x00" * 200


def test_real_process_refuses(tmp_path, cli):
    """The same refusals through a real `gpuarena` process: exit code 2, one line, no file."""
    tag = _suite(tmp_path, "tag.yaml", f"name: !!python/object/apply:os.system ['touch {tmp_path}/pwned']\n")
    db = str(tmp_path / "p.db")
    for argv, says in ((["--suite", tag], "not valid YAML"),
                       (["-w", "resnet50-train", "--set", "batch_size=-1"], "must be >= 1")):
        res = cli("run", *argv, "--db", db)
        assert res.returncode == 2, res.stderr
        assert res.stderr.count("\n") == 1 and says in res.stderr
        assert res.stdout == ""
    assert not os.path.exists(db)
    assert not (tmp_path / "pwned").exists()


# --- nothing loads with pickle or eval -------------------------------------

UNSAFE = [
    (re.compile(r"\bpickle\.loads?\(|\bcPickle\b|\bdill\b|\bmarshal\.loads?\(|\bshelve\."), "pickle-like loading"),
    (re.compile(r"(?<![\w.])eval\(|(?<![\w.])exec\("), "eval/exec"),
    (re.compile(r"\byaml\.unsafe_load\(|\byaml\.full_load\(|yaml\.Loader\b|yaml\.UnsafeLoader\b"),
     "unsafe YAML loader"),
]


def call_text(text: str, open_paren: int) -> str:
    """The argument list of a call, from its '(' to the matching ')'."""
    depth = 0
    for i in range(open_paren, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_paren:i + 1]
    return text[open_paren:]


def test_call_text_matches_parens():
    src = 'torch.load(p, map_location=torch.device("cpu"), weights_only=True) + x'
    assert call_text(src, src.index("(")).endswith("weights_only=True)")


def test_no_pickle_eval_or_unsafe_loading():
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text()
        for n, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0]
            for rx, what in UNSAFE:
                if rx.search(code):
                    problems.append(f"{path.relative_to(SRC)}:{n}: {what}: {line.strip()}")
        # yaml.load( must name SafeLoader; torch.load( must pass weights_only=True, in the call itself.
        for rx, needs in ((r"\byaml\.load\(", "SafeLoader"), (r"\btorch\.load\(", "weights_only=True")):
            for m in re.finditer(rx, text):
                if needs not in call_text(text, m.end() - 1):
                    problems.append(f"{path.relative_to(SRC)}: {m.group()[:-1]} without {needs}")
    assert not problems, "\n".join(problems)
    # every YAML a user names goes through one loader, a SafeLoader subclass without aliases
    assert "load_yaml(" in (SRC / "spec" / "suite.py").read_text()
    assert "class BoundedLoader(yaml.SafeLoader)" in (SRC / "safeio.py").read_text()


THOUSAND = ["64"] * 1000


@pytest.mark.parametrize("args,reason", [
    (["run", "-w", "matmul", "--set", "m=" + ", ".join(THOUSAND[:500] + [""] + THOUSAND[500:])],
     "--set m: an empty value in the list (value 501 of 1,001: '64, 64"),
    (["run", "-w", "matmul", "--set", "m=" + " ".join(THOUSAND)], "m: expected int, not '64 64"),
    (["run", "-w", "matmul", "--set", "m=" + ",".join(THOUSAND[:500] + ["x y"] + THOUSAND[500:])],
     "m='x y': expected int"),
    (["run", "-w", "matmul", "--set", " ".join(THOUSAND)], "--set: expected KEY=VALUE, not '64 64"),
    (["advise", "-w", "llm-serve", "--set", "batch=" + " ".join(THOUSAND)], "--set batch: expected int, not"),
    (["advise", "-w", "llm-train", "--set", "shape=" + " ".join(THOUSAND)], "--model: no shape '64 64"),
    (["advise", "-w", "llm-train", "--set", "shape=llama3-8b", "--set", "tokens=" + " ".join(THOUSAND)],
     "--set tokens: a number, not '64 64"),
])
def test_a_thousand_item_value_says_its_reason_first_in_one_short_line(cli, tmp_path, args, reason):
    """A value of 1,000 items is shortened in the middle, so the line stays readable and the reason
    comes before it (a 4,000-character line was cut at 2,000 characters with its reason)."""
    db = str(tmp_path / "l.db")
    out = cli(*args, "--db", db)
    (line,) = out.stderr.strip().splitlines()
    assert out.returncode == 2 and line.startswith("gpuarena: error: " + reason), line
    assert len(line) < 300 and not os.path.exists(db), line
