"""Issue 18, files a user names: output paths (the database itself, devices,
folders, a full device, names too long) and hostile input files (YAML alias
bombs and deep nesting, CSVs with a byte-order mark, bad UTF-8 or huge
fields).  Each through the real CLI: one line and exit 2, or the right file."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import gpuarena
from tests.procs import digest, gp, make_bundle, one_line_error


# --- items 2, 3, 11, 19, 20, 31: where output goes ------------------------------------------------

@pytest.mark.parametrize("verb", ["report", "export"])
def test_output_over_the_database_refused(tmp_path, db, verb):
    before = digest(db)
    for target in (db, db + "-wal" if os.path.exists(db + "-wal") else db):
        p = gpuarena(verb, "--db", db, "-o", target, cwd=str(tmp_path))
        one_line_error(p, 2, "that is the database")
    link = tmp_path / "alias.html"
    link.symlink_to(db)
    p = gpuarena(verb, "--db", db, "-o", str(link), cwd=str(tmp_path))
    one_line_error(p, 2, "that is the database")
    assert digest(db) == before


@pytest.mark.parametrize("verb", ["report", "export"])
def test_output_to_a_device_streams_and_keeps_the_device(tmp_path, db, verb):
    p = gpuarena(verb, "--db", db, "-o", "/dev/null", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    st = os.stat("/dev/null")
    assert not os.path.isfile("/dev/null") and os.major(st.st_rdev) == 1
    fmt = ("-f", "md") if verb == "report" else ()
    p = gp(verb, "--db", db, "-o", "/dev/stdout", *fmt, cwd=str(tmp_path))   # a process's own stdout
    assert p.returncode == 0 and len(p.stdout) > 100, p.stderr
    assert os.path.islink("/dev/stdout")


@pytest.mark.parametrize("verb", ["report", "export"])
def test_output_to_a_full_device_is_one_line(tmp_path, db, verb):
    p = gpuarena(verb, "--db", db, "-o", "/dev/full", cwd=str(tmp_path))
    one_line_error(p, 2, "No space left on device")


@pytest.mark.parametrize("verb", ["report", "export"])
def test_output_to_a_folder_refused_and_nothing_left(tmp_path, db, verb):
    out = tmp_path / "out"
    out.mkdir()
    p = gpuarena(verb, "--db", db, "-o", str(out), cwd=str(tmp_path))
    one_line_error(p, 2, "is a folder")
    assert os.listdir(out) == [] and not os.path.exists(str(out) + ".tmp")
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


@pytest.mark.parametrize("verb", ["report", "export"])
def test_failed_write_keeps_the_previous_file_whole(tmp_path, verb):
    """A write that fails midway (here: the file-size limit, as a full disk) leaves the old file."""
    import resource

    db = str(tmp_path / "big.db")
    (tmp_path / "big.json").write_text(json.dumps(make_bundle(400)))
    assert gpuarena("import", str(tmp_path / "big.json"), "--db", db, cwd=str(tmp_path)).returncode == 0
    good = tmp_path / ("good.html" if verb == "report" else "good.json")
    assert gpuarena(verb, "--db", db, "-o", str(good), cwd=str(tmp_path)).returncode == 0
    old = good.read_bytes()
    LIMIT = 40 * 1024  # above SQLite's 32 KiB read index, below the file
    assert len(old) > LIMIT

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    p = gp(verb, "--db", db, "-o", str(good), cwd=str(tmp_path), preexec_fn=small_files)
    one_line_error(p, 2, str(good))
    assert good.read_bytes() == old
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_output_in_a_read_only_folder_is_one_line(tmp_path, db):
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("the filesystem refuses chattr +i")
    try:
        for verb in ("report", "export"):
            p = gpuarena(verb, "--db", db, "-o", str(folder / "x.out"), cwd=str(tmp_path))
            one_line_error(p, 2, "x.out")
    finally:
        subprocess.run(["chattr", "-i", str(folder)])


LONG = "/tmp/" + "x" * 5000 + ".yaml"


@pytest.mark.parametrize("argv", [
    ("run", "--suite", LONG), ("import", LONG), ("cost", "--prices", LONG),
    ("check", "--csv", LONG), ("report", "-o", LONG), ("export", "-o", LONG)],
    ids=["suite", "import", "prices", "csv", "report", "export"])
def test_overlong_path_is_one_line(tmp_path, db, argv):
    before = digest(db)
    p = gpuarena(*argv, "--db", db, cwd=str(tmp_path))
    one_line_error(p, 2, "too long")
    assert digest(db) == before


# --- items 1, 29: YAML alias bombs and deep nesting -------------------------------------------------

BOMB = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{c}: &{c} [{','.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def test_alias_bomb_suite_refused_at_once(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\nentries:\n  - workload: matmul\n" + BOMB)
    # refused before expansion (1e9 items expanded would never finish: pytest's timeout, not a clock here)
    p = gpuarena("run", "--suite", str(path), "--db", str(tmp_path / "r.db"), cwd=str(tmp_path))
    one_line_error(p, 2, "aliases")
    assert not os.path.exists(tmp_path / "r.db")


@pytest.mark.parametrize("verb", ["cost", "advise"])
@pytest.mark.parametrize("body", ["prices:\n" + BOMB, "prices: " + "[" * 20_000 + "]" * 20_000],
                         ids=["alias-bomb", "deep"])
def test_hostile_price_file_refused(tmp_path, db, verb, body):
    path = tmp_path / "prices.yaml"
    path.write_text(body)
    argv = (verb, "--prices", str(path), "--db", db) + (("-w", "matmul") if verb == "advise" else ())
    p = gpuarena(*argv, cwd=str(tmp_path))
    one_line_error(p, 2, "prices")


# --- item 28: claims CSV files ------------------------------------------------------------------------

CLAIM = "gpu,workload,precision,batch_size,throughput\nH100 SXM,resnet50-train,bf16,256,3000\n"


def test_claims_csv_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "claims.csv"
    path.write_bytes(b"\xef\xbb\xbf" + CLAIM.encode())
    p = gpuarena("check", "--csv", str(path), "-f", "json", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)[0]["workload"] == "resnet50-train"


@pytest.mark.parametrize("raw,says", [
    (CLAIM.encode()[:-10] + b"\xff\xfe\n", "UTF-8"),
    (CLAIM.encode() + b"H100 SXM,resnet50-train,bf16,256,\"" + b"9" * 200_000 + b"\"\n", "CSV"),
], ids=["bad-utf8", "huge-field"])
def test_hostile_claims_csv_is_one_line(tmp_path, raw, says):
    path = tmp_path / "claims.csv"
    path.write_bytes(raw)
    p = gpuarena("check", "--csv", str(path), cwd=str(tmp_path))
    one_line_error(p, 2, says)
