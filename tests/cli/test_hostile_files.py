"""Files a user names, part three (issue 27, items 3, 4, 8, 12): every path is read through
safeio.read_bytes (a regular file, its size bounded by reading), `-o` writes through a
symbolic link and never replaces it, a FIFO with no reader is one line instead of a hang,
a new report is as readable as any file the user's umask allows, and a malformed
hf_config is one line, never an internal error."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.conftest import gpuarena
from tests.procs import one_line_error


def test_output_through_a_symlink_writes_its_file_and_keeps_the_link(tmp_path, db):
    target = tmp_path / "real.md"
    target.write_text("old")
    link = tmp_path / "out.md"
    link.symlink_to(target)
    p = gpuarena("report", "--db", db, "-o", str(link), "-f", "md", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and target.read_text().startswith("#")


def test_output_to_proc_self_stdout_keeps_the_link_and_fills_the_redirect(tmp_path, db):
    link = tmp_path / "out"
    link.symlink_to("/proc/self/fd/1")
    sink = tmp_path / "file"
    with open(sink, "w") as f:
        import subprocess
        import sys

        from tests.procs import cli_env
        p = subprocess.run([sys.executable, "-m", "gpuarena", "report", "--db", db, "-o", str(link), "-f", "md"],
                           cwd=str(tmp_path), env=cli_env(), stdout=f, stderr=subprocess.PIPE, text=True,
                           timeout=300)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert "# " in sink.read_text()


@pytest.mark.parametrize("verb", ["report", "export"])
def test_output_to_a_fifo_with_no_reader_is_one_line(tmp_path, db, verb):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    p = gpuarena(verb, "--db", db, "-o", str(fifo), cwd=str(tmp_path))
    one_line_error(p, 2, "no process is reading")


@pytest.mark.parametrize("verb", ["report", "export"])
def test_a_new_file_honours_the_umask(tmp_path, db, verb):
    out = tmp_path / "shared.out"

    old = os.umask(0o022)
    try:
        p = gpuarena(verb, "--db", db, "-o", str(out), cwd=str(tmp_path))
    finally:
        os.umask(old)
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def _config(**over) -> str:
    cfg = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
           "vocab_size": 256, "num_key_value_heads": 2, "max_position_embeddings": 256}
    cfg.update(over)
    return json.dumps(cfg)


HF = [
    ("kv-heads-text", _config(num_key_value_heads="2"), "num_key_value_heads"),
    ("context-infinity", _config().replace('"max_position_embeddings": 256', '"max_position_embeddings": Infinity'),
     "not valid JSON"),
    ("context-nan", _config().replace('"max_position_embeddings": 256', '"max_position_embeddings": NaN'),
     "not valid JSON"),
    ("deep", "[" * 100_000, "not valid JSON"),
    ("hidden-googol", _config(hidden_size=10**100), "hidden_size"),
    ("kv-heads-true", _config(num_key_value_heads=True), "num_key_value_heads"),
    ("eps-subnormal", _config(rms_norm_eps=5e-324), "rms_norm_eps"),
]


@pytest.mark.parametrize("body,says", [h[1:] for h in HF], ids=[h[0] for h in HF])
def test_a_malformed_hf_config_is_one_line(tmp_path, body, says):
    path = tmp_path / "config.json"
    path.write_text(body)
    verbs = [["advise", "-w", "llm-serve", "--set", f"hf_config={path}"]]
    if says == "num_key_value_heads":   # the same reader plans a run (one run is enough: torch loads slowly)
        verbs.append(["run", "-w", "llm-serve", "--set", f"hf_config={path}", "--db", str(tmp_path / "x.db")])
    for verb in verbs:
        p = gpuarena(*verb, cwd=str(tmp_path))
        one_line_error(p, 2, says)
        assert not os.path.exists(tmp_path / "x.db")


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_hf_config_that_is_no_regular_file_is_one_line(tmp_path, kind):
    path = tmp_path / "cfg"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = "/dev/zero"
    for verb in (["advise", "-w", "llm-serve", "--set", f"hf_config={path}"],
                 ["run", "-w", "llm-serve", "--set", f"hf_config={path}", "--db", str(tmp_path / "x.db")]):
        p = gpuarena(*verb, cwd=str(tmp_path))
        one_line_error(p, 2, "regular file")
