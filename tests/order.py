"""The order the tests run in under pytest-xdist (`make test`: --dist worksteal), so both cores stay busy
to the end.  worksteal hands each worker one contiguous share of the collected list (the first
len // workers items to the first, and so on); a worker that runs out takes the END of another's queue.
A long test at the end of a share is therefore run last, on one core, while the other waits.  So each
share starts with its part of the long tests (the longest first, each to the share with the least work so
far), and short tests fill the rest.  The smoke run's readers stay together at the head of the first
share: one worker builds the session's smoke run, no other waits for it."""

from __future__ import annotations

# CPU s of each long test and the processes it starts, measured on the 2-core box (2026-12-02, after the
# cuts of that day).  A prefix covers every test it starts, and those stay together in one share (a module
# fixture is set up once).  A test not listed counts as short; a renamed one only loses its place.
LONG = {
    "tests/runner/test_torchrun_e2e.py::test_ddp_and_allreduce_end_to_end": 38,
    "tests/workloads/test_llm_train.py::test_fsdp_and_tp_over_gloo": 32,
    "tests/runner/test_child_start.py::test_server_and_spawn_store_the_same_fields": 31,
    "tests/workloads/test_worked_example.py::": 25,
    "tests/workloads/test_resnet50_infer.py::test_aot_inductor_package": 25,
    "tests/runner/test_torchrun_e2e.py::test_a_dying_rank": 24,
    "tests/store/test_concurrent_writers.py::test_parallel_runs_and_threads_share_one_db": 21,
    "tests/runner/test_faults.py::test_oom_crash_timeout_then_ok": 20,
    "tests/test_packaging.py::": 19,
    "tests/report/test_browser.py::test_reader_view_of_the_shipped_bundles": 10,
    "tests/runner/test_two_nodes.py::": 16,
    "tests/runner/test_kill_resume.py::": 16,
    "tests/workloads/test_sd15.py::test_max_batch_search_under_a_real_memory_cap": 15,
    "tests/store/test_many_results.py::test_work_grows_linearly_with_the_rows[report]": 13,
    "tests/runner/test_child_start.py::test_a_server_that_cannot_fork_safely_falls_back": 11,
    "tests/workloads/test_plugins.py::": 10,
    "tests/workloads/test_llm_engine.py::test_new_variants_through_runner": 10,
    "tests/store/test_hostile_results.py::test_a_two_repeat_interval_is_kept_and_marked": 9.5,
    "tests/data/test_evidence.py::test_claims_table_writes_one_row_per_claim_between_its_markers": 8.8,
    "tests/workloads/test_endpoint_transformers_serve.py::": 13,   # two tests sharing one server (a module fixture)
    "tests/store/test_figures.py::test_figures_round_trip_typed_through_the_runner_and_the_store": 8.3,
    "tests/workloads/test_resnet50_infer.py::test_eager_instances_and_tensorrt": 8.3,
    "tests/runner/test_child_start.py::test_a_signal_or_an_exit_is_stored_crashed": 7.7,
    "tests/runner/test_child_start.py::test_a_hang_is_killed_at_its_limit": 7.2,
    "tests/workloads/test_llm_serve.py::test_max_sweep_stops_at_the_first_oom": 6.5,
    "tests/cli/test_hostile_cli.py::test_two_resumes_at_once_measure_each_case_once": 6.4,
    "tests/cli/test_doctor.py::test_doctor_runs_on_the_cpu_at_tiny_sizes": 6.4,
    "tests/test_spine.py::test_the_report_path_is_one_line_on_a_narrow_terminal": 6.4,
}
SMOKE = 70   # the smoke run (34) and the tests that read it


def _group(nodeid: str) -> str | None:
    return next((prefix for prefix in LONG if nodeid.startswith(prefix)), None)


def arrange(items: list, reads_smoke, workers: int) -> list:
    """items in run order: see the module's docstring.  reads_smoke(item) -> bool."""
    first = [it for it in items if reads_smoke(it)]
    rest = [it for it in items if not reads_smoke(it)]
    groups: dict[str, list] = {}
    for it in rest:
        if _group(it.nodeid):
            groups.setdefault(_group(it.nodeid), []).append(it)
    units = sorted(groups.items(), key=lambda kv: -LONG[kv[0]])     # the longest first
    short = [it for it in rest if not _group(it.nodeid)]
    if workers < 2:
        return first + [it for _, unit in units for it in unit] + short
    shares, work = [list(first)] + [[] for _ in range(workers - 1)], [SMOKE if first else 0] + [0] * (workers - 1)
    for prefix, unit in units:
        i = work.index(min(work))
        shares[i] += unit
        work[i] += LONG[prefix]
    left, out = len(items), []
    for i, share in enumerate(shares):
        size = left // (workers - i)            # what worksteal hands this worker
        take = max(0, size - len(share))
        out += share + short[:take]
        short = short[take:]
        left -= len(share) + take
    return out + short
