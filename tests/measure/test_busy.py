"""Promise 6: a GPU already busy with another process is noticed before the
suite starts; --allow-busy goes on anyway.  The decision is a pure function over
NVML's process list, tested here without a GPU; a CPU run is never checked."""

from __future__ import annotations

from gpuarena.measure import busy

PROCS = [
    {"pid": 4242, "used_bytes": 3 * 2**30},
    {"pid": 4243, "used_bytes": None},       # NVML reports no figure without the right permissions
    {"pid": 4242, "used_bytes": 3 * 2**30},  # listed as compute and as graphics
    {"pid": 100, "used_bytes": 2**30},       # ourselves
]


def test_others_excludes_ourselves_and_duplicates():
    assert [p["pid"] for p in busy.others(PROCS, {100})] == [4242, 4243]
    assert busy.others([], {100}) == []
    assert busy.others([{"pid": 100}], {100}) == []


def test_message_names_processes_and_memory():
    msg = busy.message("cuda:0", PROCS, {100})
    assert msg == "cuda:0 is busy: 2 other process(es) use it (pid 4242, 4243, 3.0 GiB in use)"
    assert busy.message("cuda:0", [{"pid": 100, "used_bytes": 5}], {100}) is None


def test_message_caps_the_pid_list():
    many = [{"pid": 1000 + i, "used_bytes": None} for i in range(8)]
    msg = busy.message("cuda:1", many, set())
    assert msg == "cuda:1 is busy: 8 other process(es) use it (pid 1000, 1001, 1002, 1003, 1004, ...)"


def test_cpu_is_never_checked():
    assert busy.device_processes("cpu") == []
    assert busy.busy_message("cpu") is None
    assert busy.busy_processes("cpu") == []


def test_allow_busy_is_documented(cli):
    res = cli("run", "--help", env={"COLUMNS": "400", "TERMINAL_WIDTH": "400"})
    assert res.returncode == 0
    text = " ".join(res.stdout.split())
    assert "--allow-busy" in text and "CUDA only; a CPU run is never checked" in text
