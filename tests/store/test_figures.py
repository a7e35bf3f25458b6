"""Each workload declares the typed model of its figures (``figures``, beside its spec): a new
result is checked against it on write, the store reads every row with its own workload's model
(store/figures.py model_for, the lookup handed in by the workloads registry), and a key the model
does not declare -- one an older gpuarena wrote -- is kept, never a reason to lose a row."""

from __future__ import annotations

import json
import os

import pytest

from gpuarena.cli import common
from gpuarena.runner.executor import check_figures, execute
from gpuarena.spec.model import Entry, Method, Suite, expand
from gpuarena.store.db import Store
from gpuarena.store import figures as store_figures
from gpuarena.store.extra import Extra
from gpuarena.store.figures import Figures, Imported, PublishedFigures, check_written, model_for
from gpuarena.store.rows import ResultRefused, insert_result, stored_form
from gpuarena.workloads.micro.spec import MatmulFigures
from gpuarena.workloads import registry
from tests.workloads.plugins import install

PLUGIN = '''
from gpuarena.store.figures import Count, Figures


class CountedFigures(Figures):
    elements: Count = None          # elements touched per step


class Counted(Base):
    name = "toy-counted"
    figures = CountedFigures

    def extra(self):
        return {"elements": self.p["n"]}


class Miscounted(Counted):
    name = "toy-miscounted"

    def extra(self):
        return {"elements": "many"}     # a name where CountedFigures declares a count
'''


def measure(db: str, entries: list[dict]) -> tuple[Store, list]:
    """The entries at tiny size on the CPU through the real runner (a child process each)."""
    cases = expand(Suite(name="t", method=Method(size="tiny", repeats=2, steps=1, warmup=0),
                         entries=[Entry(**e) for e in entries]), "cpu")
    store = Store(db)
    run_id = store.create_run("t", "cpu", [c.model_dump() for c in cases], None)
    return store, execute(store, run_id, cases, None, "test-cpu")


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """The plugin installed where this process and the runner's children both find it."""
    env = install(tmp_path / "site", PLUGIN, {"toy-counted": "Counted", "toy-miscounted": "Miscounted"},
                  package="figures_plugin")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(registry, "_plugins", None)
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    yield
    monkeypatch.setattr(registry, "_plugins", None)


def test_every_built_in_workload_declares_its_figures():
    for name, cls in registry.classes().items():
        assert issubclass(cls.figures, Figures), name
        assert cls.figures is Figures or cls.figures.__module__.startswith("gpuarena.workloads."), name   # beside it
        read = model_for(name, "measured", cls.resolve_params({}, size="tiny"))   # what the store reads it with
        assert issubclass(read, Imported) and issubclass(read, cls.figures), name
        assert issubclass(model_for(name, "published"), PublishedFigures), name
    assert model_for("no-such-workload") is Imported      # its keys kept as stored, noted undeclared


def test_a_result_is_read_with_its_own_workloads_model():
    """Two workloads may declare one name with different types (matmul's shape is [m, n, k], llm-train's
    a shape's name): each result is read with its own model, so each is typed as its workload means it."""
    from gpuarena.store.rows import validated

    def result(workload, **extra):
        return validated({"id": 1, "case_key": "k", "workload": workload, "variant": "seed", "params": {},
                          "status": "ok", "throughput_median": 1.0, "extra": extra})

    assert result("matmul", shape=[64, 64, 64]).extra.shape == [64, 64, 64]
    assert result("llm-train", shape="llama-1b").extra.shape == "llama-1b"
    with pytest.raises(ResultRefused, match="extra.shape"):
        result("matmul", shape="llama-1b")
    mm = result("matmul", sets=2, optimizer="SGD", accum_steps="x")
    assert isinstance(mm.extra, MatmulFigures) and mm.undeclared == ["optimizer", "accum_steps"]   # not matmul's
    assert mm.row()["extra"]["accum_steps"] == "x"          # kept as stored ...
    assert mm.extra.accum_steps is None and mm.extra.optimizer is None   # ... never read as ddp-train's int
    assert mm.extra.max_batch is None      # another workload's figure this result lacks reads None
    with pytest.raises(AttributeError):
        getattr(mm.extra, "no_such_figure")    # a name no model declares is a typo, as before  # noqa: B009


def test_figures_round_trip_typed_through_the_runner_and_the_store(tmp_path):
    db = str(tmp_path / "f.db")
    _, outcomes = measure(db, [{"workload": "matmul", "params": {"dtype": "fp32"}}, {"workload": "h2d"}])
    assert [o.refused for o in outcomes] == [None, None]
    mm, h2d = Store(db).results()          # read back by a fresh store
    assert mm.status == h2d.status == "ok", (mm.error, h2d.error)
    assert isinstance(mm.extra, Extra) and isinstance(mm.extra, MatmulFigures)
    assert mm.extra.shape == [64, 64, 64] and type(mm.extra.sets) is int
    assert type(mm.extra.setup_s) is float and mm.extra.wall_s > 0    # the runner's keys, typed too
    assert h2d.extra.pinned is False                                   # no CUDA: pageable
    for r in (mm, h2d):
        assert r.undeclared == []
        stored = r.row()["extra"]
        assert set(stored) <= set(registry.get(r.workload).figures.model_fields)
        check_written(r.workload, registry.get(r.workload).figures, stored)   # what was written passes again


def test_a_plugin_declares_its_figures_the_same_way(tmp_path, plugin):
    db = str(tmp_path / "p.db")
    store, outcomes = measure(db, [{"workload": "toy-counted"}])
    assert outcomes[0].refused is None
    (r,) = Store(db).results()
    assert r.status == "ok" and r.extra.elements == 1000 and r.undeclared == []   # read with the plugin's model
    assert type(r.extra.elements) is int


def test_a_wrong_typed_figure_is_refused_on_write_with_a_clear_error(tmp_path, plugin):
    db = str(tmp_path / "w.db")
    store, outcomes = measure(db, [{"workload": "toy-miscounted"}])
    why = outcomes[0].refused
    assert why and "extra.elements: Input should be a valid integer" in why and "toy-miscounted" in why, why
    kept = why.split("it is kept in ", 1)[1].split()[0]
    with open(kept) as f:
        assert json.load(f)["extra"]["elements"] == "many"      # the measurement is not lost
    assert Store(db).results() == []


def test_an_undeclared_figure_is_refused_on_write():
    (case,) = expand(Suite(name="t", method=Method(size="tiny"), entries=[Entry(workload="matmul")]), "cpu")
    with pytest.raises(ResultRefused, match=r"extra\.sets: Input should be a valid integer"):
        check_figures(case, {"extra": {"sets": "2"}})
    with pytest.raises(ResultRefused, match=r"extra\.sets_done: not declared by matmul's figures \(MatmulFigures"):
        check_figures(case, {"extra": {"sets": 2, "sets_done": 2}})
    check_figures(case, {"extra": {"sets": 2, "wall_s": 1.5, "traceback": "x"}})     # declared: passes
    assert "sets_done" not in MatmulFigures.model_fields


def test_a_stored_key_an_older_version_wrote_stays_readable(tmp_path):
    db = str(tmp_path / "old.db")
    store = Store(db)
    row = {"run_id": None, "case_key": "matmul|old", "source": "measured", "workload": "matmul",
           "variant": "seed", "params": {"dtype": "fp32"}, "status": "ok", "throughput_median": 10.0,
           "extra": {"sets": 3, "kernel_name": "sgemm_128x64", "share_of_ceiling": 0.5}}
    with store.transaction() as conn:       # as an older gpuarena wrote it: no check of today's models
        insert_result(conn, stored_form(row))
    fresh = Store(db, readonly=True)
    (r,) = fresh.results()
    assert r.extra.sets == 3 and r.extra.kernel_name == "sgemm_128x64"     # kept, and read as stored
    assert r.undeclared == ["kernel_name"] and r.row()["extra"]["kernel_name"] == "sgemm_128x64"
    assert fresh.undeclared == [(r.id, "matmul", ["kernel_name"])] and fresh.skipped == []
    assert common.undeclared_warning(fresh.undeclared).startswith(
        "1 result(s) carry figures their workload does not declare (id 1: kernel_name)")


def test_a_bundle_with_an_undeclared_figure_imports_with_one_warning(tmp_path, cli):
    old = str(tmp_path / "old.db")
    store = Store(old)
    row = {"case_key": "matmul|old", "source": "measured", "workload": "matmul", "variant": "seed",
           "params": {}, "status": "ok", "throughput_median": 10.0, "extra": {"sets": 3, "kernel_name": "k"}}
    with store.transaction() as conn:
        insert_result(conn, stored_form(row))
    store.close()
    bundle = str(tmp_path / "b.json")
    assert cli("export", "--db", old, "-o", bundle).returncode == 0
    p = cli("import", bundle, "--db", str(tmp_path / "new.db"))
    assert p.returncode == 0 and "imported 1 result(s)" in p.stdout, p.stderr
    assert p.stderr.strip() == ("gpuarena: warning: 1 result(s) carry figures their workload does not declare "
                                "(id 1: kernel_name); they are kept as they are")
    shown = json.loads(cli("results", "--db", str(tmp_path / "new.db"), "-f", "json").stdout)
    assert shown[0]["extra"]["kernel_name"] == "k"


def test_a_wrong_typed_stored_figure_is_skipped_on_read_not_shown(tmp_path):
    db = str(tmp_path / "bad.db")
    store = Store(db)
    row = {"case_key": "matmul|bad", "source": "measured", "workload": "matmul", "variant": "seed",
           "params": {}, "status": "ok", "throughput_median": 10.0, "extra": {"sets": "three"}}
    with store.transaction() as conn:
        insert_result(conn, stored_form(row))
    fresh = Store(db, readonly=True)
    assert fresh.results() == [] and "extra.sets" in fresh.skipped[0][1]


def test_the_expected_figure_is_typed_and_shown_as_it_was_built():
    from gpuarena.analysis.verbs.expected import annotate
    from gpuarena.store.derived import Expected, Reference
    from gpuarena.store.rows import validated

    with open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "data", "h200-s4-2026-11-29.json")) as f:
        rows = [validated(r) for r in json.load(f)["results"]]
    by = {(r.workload, r.variant): r for r in annotate(rows, rows)}
    e = by[("resnet50-train", "tf32")].derived.expected
    assert isinstance(e, Expected) and isinstance(e.published, Reference) and e.basis == "published"
    assert e.figure == 2259.0 and e.published.date == "2024-10" and e.model.value and not e.below
    shown = by[("resnet50-train", "tf32")].extra_dict()["expected"]     # `results -f json`: the keys it had
    assert list(shown)[:4] == ["figure", "basis", "ratio", "stored"] and shown["stored"] is None
    assert "causes" not in shown and "n" not in shown["published"]


def test_every_figure_analysis_and_the_report_read_is_declared():
    import glob
    import re

    src = os.path.join(os.path.dirname(__file__), "..", "..", "src", "gpuarena")
    read = {m for f in glob.glob(os.path.join(src, "**", "*.py"), recursive=True)
            for m in re.findall(r"\.extra\.([a-z_0-9]+)", open(f, encoding="utf-8").read())}
    registry.classes()      # every built-in's model defined
    declared = {k for k in read if store_figures.declared(k)}
    assert read - {"model_dump", "model_extra"} <= declared, sorted(read - declared)
