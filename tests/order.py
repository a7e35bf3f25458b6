"""The order the tests run in under pytest-xdist (`make test`: --dist worksteal), so both cores stay busy
to the end.  worksteal hands each worker one contiguous share of the collected list (the first
len // workers items to the first, and so on); a worker that runs out takes the END of another's queue.
A long test at the end of a share is therefore run last, on one core, while the other waits.  So each
share starts with its part of the long tests (the longest first, each to the share with the least work so
far), and short tests fill the rest.  The smoke run's readers stay together at the head of the first
share: one worker builds the session's smoke run, no other waits for it."""

from __future__ import annotations

# CPU s of each long test and the processes it starts, measured on the 2-core box on the first run of a
# fresh clone (2026-12-02: an empty inductor cache, so a test that compiles pays its C++ compiles).  A prefix
# covers every test it starts, and those stay together in one share (a module fixture is set up once).  A
# test not listed counts as short; a renamed one only loses its place.
LONG = {
    "tests/runner/test_torchrun_e2e.py::test_ddp_and_allreduce_end_to_end": 40,
    "tests/workloads/test_llm_train.py::test_fsdp_and_tp_over_gloo": 33,
    "tests/workloads/test_resnet50_infer.py::test_aot_inductor_package": 26,
    "tests/runner/test_child_start.py::test_server_and_spawn_store_the_same_fields": 25,
    "tests/workloads/test_bert.py::test_compiled_training_through_runner": 24,
    "tests/workloads/test_worked_example.py::": 20,
    "tests/runner/test_torchrun_e2e.py::test_a_dying_rank": 20,
    "tests/store/test_concurrent_writers.py::test_parallel_runs_and_threads_share_one_db": 19,
    "tests/workloads/test_llm_engine.py::test_flex_decode_attention_gives_sdpa_tokens_eager_and_compiled": 12,
    "tests/workloads/test_llm_gemv.py::test_gemv_through_runner": 17,     # two compiled cases (session 12, warm)
    "tests/runner/test_faults.py::test_oom_crash_timeout_then_ok": 17,
    "tests/workloads/test_endpoint_transformers_serve.py::": 13,   # two tests sharing one server (a module fixture)
    "tests/runner/test_two_nodes.py::": 13,
    "tests/workloads/test_llm_engine.py::test_compiled_prefill_gives_eager_tokens_and_one_graph_for_two_lengths": 12,
    "tests/workloads/test_sd15.py::test_max_batch_search_under_a_real_memory_cap": 11.5,
    "tests/store/test_many_results.py::test_work_grows_linearly_with_the_rows[report]": 11,
    "tests/runner/test_kill_resume.py::": 11,
    "tests/runner/test_child_start.py::test_a_server_that_cannot_fork_safely_falls_back": 10.4,
    "tests/test_packaging.py::": 10.3,
    "tests/report/test_browser.py::test_reader_view_of_the_shipped_bundles": 9.5,
    "tests/workloads/test_bert.py::test_bert_through_runner": 6.5,
    "tests/store/test_hostile_results.py::test_a_two_repeat_interval_is_kept_and_marked": 6.3,
    "tests/workloads/test_llm_serve.py::test_max_sweep_stops_at_the_first_oom": 6.2,
    "tests/workloads/test_llm_engine.py::test_new_variants_through_runner": 5.7,
    "tests/workloads/test_resnet50_infer.py::test_eager_instances_and_tensorrt": 5.6,
    "tests/cli/test_hostile_cli.py::test_two_resumes_at_once_measure_each_case_once": 5.5,
    "tests/workloads/test_plugins.py::": 5.3,
    "tests/runner/test_child_start.py::test_a_signal_an_exit_and_a_hang": 7,   # the two runs of 5.4 and 5.2 in one
    "tests/data/test_evidence.py::test_claims_table_writes_one_row_per_claim_between_its_markers": 5.1,
    "tests/workloads/test_hostile_plugins.py::test_a_plugin_that_exits_at_import_does_not_end_run_or_report": 5.0,
    "tests/test_spine.py::test_the_report_path_is_one_line_on_a_narrow_terminal": 4.8,
    # Long tests added since, from a run on the loaded box (2026-12-05; their CPU s in this process measured
    # alone, the rest scaled from their wall time beside listed tests): the report's fleet section over
    # 3,000 results (18.5 CPU s), the fp8 rung through the runner, the secrets tests' interpreters, the
    # frontier's two sweeps against serve-tiny (a module fixture).
    "tests/analysis/test_compare_scale.py::": 22,
    "tests/workloads/test_llm_fp8_serving.py::test_fp8_weights_through_runner": 18,
    "tests/store/test_secrets.py::test_no_password_in_any_output_file_report_bundle_or_table": 15,
    "tests/analysis/test_frontier.py::": 8,
    "tests/store/test_secrets.py::test_a_refused_url_never_shows_its_password": 8,
}
SMOKE = 99   # the smoke run (30) and the tests that read it (the compiled llm-serve case: 50)


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
