"""Poisoned bundles (issue 27, item 2): the environment fingerprint and the extras a report
section reads are typed, so a bundle that would break `report` is refused on import, whole,
with one line; a fingerprint edited by hand in the database reads as unknown."""

from __future__ import annotations

import json
import sqlite3

import pytest

from gpuarena.store.db import Store
from tests.store.test_hostile_bundles import bundle, cli, result, tables

SERVE = {"workload": "llm-serve", "unit": "tokens/s", "params": {"batch_size": 4, "prompt_len": 16, "new_tokens": 8},
         "extra": {"batch": 4, "ttft_s": 0.05, "tpot_ms_median": 12.0, "tpot_ms_p99": 14.0,
                   "prefill_tflops": 3.0, "decode_bandwidth_gbs": 900.0}}


def serve(**extra) -> dict:
    r = result(2, **{k: v for k, v in SERVE.items() if k != "extra"})
    r["extra"] = {**SERVE["extra"], **extra}
    return r


def without(key: str) -> dict:
    r = serve()
    del r["extra"][key]
    return r


POISON = [
    ("gpus-a-string", {"fingerprint": {"gpus": "H200"}}, "fingerprint.gpus"),
    ("libraries-a-list", {"fingerprint": {"libraries": ["torch"]}}, "fingerprint.libraries"),
    ("gpu-name-a-number", {"fingerprint": {"gpus": [{"name": 7}]}}, "fingerprint.gpus.0.name"),
    ("hostname-escape", {"fingerprint": {"hostname": "a\x1b[2Jb"}}, "fingerprint.hostname"),
    ("ttft-missing", {"result": without("ttft_s")}, "ttft_s"),
    ("ttft-text", {"result": serve(ttft_s="abc")}, "extra.ttft_s"),
    ("batch-text", {"result": serve(batch="4")}, "extra.batch"),
    ("prefill-tflops-text", {"result": serve(prefill_tflops="3")}, "extra.prefill_tflops"),
    ("nan-a-number", {"result": result(2, extra={"nan": 1})}, "extra.nan"),
    ("gpus-a-string-result", {"result": result(2, gpus="2")}, "results.1.gpus"),
    ("bidi-device", {"result": result(2, device_name="NVIDIA \u202eH200")}, "device_name"),
]


@pytest.mark.parametrize("poison,says", [p[1:] for p in POISON], ids=[p[0] for p in POISON])
def test_a_poisoned_bundle_is_refused_whole(tmp_path, capsys, poison, says):
    b = bundle([result(1), poison.get("result") or result(2), result(3)])
    if "fingerprint" in poison:
        b["environments"][0]["fingerprint"] = poison["fingerprint"]
    path = tmp_path / "b.json"
    path.write_text(json.dumps(b))
    db = str(tmp_path / "a.db")
    Store(db).close()
    code, out, err = cli(capsys, "import", str(path), "--db", db)
    assert code == 2 and err.count("\n") == 1 and says in err, err
    assert tables(db) == (0, 0, 0)


def test_the_report_survives_a_hand_edited_fingerprint_and_serves(tmp_path, capsys):
    b = bundle([result(1), serve(), result(3)])
    b["environments"][0]["fingerprint"] = {"hostname": "box", "gpus": [{"name": "NVIDIA H200"}],
                                           "libraries": {"torch": "2.5.1"}}
    path = tmp_path / "b.json"
    path.write_text(json.dumps(b))
    db = str(tmp_path / "a.db")
    assert cli(capsys, "import", str(path), "--db", db)[0] in (0, None)
    conn = sqlite3.connect(db)
    conn.execute("""UPDATE environments SET fingerprint = '{"gpus": "H200", "libraries": ["torch"]}'""")
    conn.commit()
    conn.close()
    out = tmp_path / "r.md"
    code, _, err = cli(capsys, "report", "--db", db, "-o", str(out), "-f", "md")
    assert code in (0, None) and "internal error" not in err, err
    text = out.read_text()
    assert "Environments" in text and "H200" in text


def test_a_serving_row_without_its_lengths_is_left_out_of_the_serving_section(tmp_path, capsys):
    r = serve()
    del r["params"]["new_tokens"]
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bundle([result(1), r])))
    db = str(tmp_path / "a.db")
    assert cli(capsys, "import", str(path), "--db", db)[0] in (0, None)
    code, _, err = cli(capsys, "report", "--db", db, "-o", str(tmp_path / "r.md"), "-f", "md")
    assert code in (0, None) and "internal error" not in err, err


def test_zero_energy_while_drawing_power_reads_as_unmeasured(tmp_path):
    """Session 8's H200 bundle holds 0.0 J/image at 124 W (a 2.5 ms window, shorter than one step of
    NVML's energy counter): read back, the row has no energy figure rather than a free image."""
    store = Store(str(tmp_path / "e.db"))
    run_id = store.create_run("energy", "cuda", [], None)
    for key, energy in (("zero", 0.0), ("real", 0.02)):
        store.add_result({"run_id": run_id, "case_key": key, "workload": "resnet50-infer", "variant": key,
                          "params": {"batch_size": 1}, "status": "ok", "throughput_median": 2000.0,
                          "power_w_mean": 124.0, "energy_j_per_item": energy})
    got = {r.variant: r.energy_j_per_item for r in store.results(run_ids=[run_id])}
    assert got == {"zero": None, "real": 0.02}
