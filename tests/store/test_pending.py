"""Kept results (store/pending.py) live in owner-only folders and --resume stores only the run's own
planned cases (issue 40, item 9): a result another local user plants is never stored."""

from __future__ import annotations

import json
import os
import tempfile

from gpuarena.store import pending
from gpuarena.store.db import Store


def _result(run_id: str, key: str, **kw) -> dict:
    return {"run_id": run_id, "case_key": key, "workload": "matmul", "variant": "seed", "params": {},
            "device": "cpu", "device_name": "cpu", "status": "failed", "error": "kept", "unit": "matmuls/s",
            "source": "measured", **kw}


def _store(tmp_path):
    store = Store(str(tmp_path / "g.db"))
    run_id = store.create_run("s", "cpu", [], None)
    return store, run_id


def test_kept_results_go_to_an_owner_only_folder_and_come_back(tmp_path):
    store, run_id = _store(tmp_path)
    path = pending.keep(store.path, run_id, _result(run_id, "k1"))
    folder = os.path.dirname(path)
    assert folder.startswith(str(tmp_path))
    for p in (folder, os.path.dirname(folder)):
        st = os.stat(p)
        assert st.st_uid == os.geteuid() and st.st_mode & 0o777 == 0o700
    assert pending.store_pending(store, run_id, {"k1"}) == 1
    assert store.done_keys(run_id) == {"k1"} and not os.path.exists(path)


def test_a_result_planted_in_the_shared_temporary_folder_is_not_stored(tmp_path):
    """The folder earlier versions used, which any local user could create first."""
    store, run_id = _store(tmp_path)
    old = os.path.join(tempfile.gettempdir(), f"gpuarena-pending-g.db-{run_id}")
    os.makedirs(old, mode=0o777)
    try:
        with open(os.path.join(old, "forged.json"), "w") as f:
            json.dump(_result(run_id, "k1"), f)
        assert pending.store_pending(store, run_id, {"k1"}) == 0
        assert store.done_keys(run_id) == set()
    finally:
        os.unlink(os.path.join(old, "forged.json"))
        os.rmdir(old)


def test_a_folder_others_may_write_is_neither_read_nor_written(tmp_path):
    store, run_id = _store(tmp_path)
    open_folder = tmp_path / ".gpuarena-pending-g.db" / run_id
    open_folder.mkdir(parents=True)
    for p in (open_folder, open_folder.parent):
        os.chmod(p, 0o777)
    (open_folder / "forged.json").write_text(json.dumps(_result(run_id, "k1")))
    assert pending.store_pending(store, run_id, {"k1"}) == 0 and store.done_keys(run_id) == set()
    kept = pending.keep(store.path, run_id, _result(run_id, "k2"))
    assert kept and not kept.startswith(str(open_folder))          # kept in this user's private folder instead
    assert pending.store_pending(store, run_id, {"k1", "k2"}) == 1 and store.done_keys(run_id) == {"k2"}


def test_only_the_plans_measured_cases_are_stored(tmp_path):
    store, run_id = _store(tmp_path)
    pending.keep(store.path, run_id, _result(run_id, "not-planned"))
    pending.keep(store.path, run_id, _result(run_id, "k1", source="published"))
    pending.keep(store.path, run_id, _result("another-run", "k2"))
    assert pending.store_pending(store, run_id, {"k1", "k2"}) == 0
    assert store.done_keys(run_id) == set()
