"""The evidence files parse, name catalog GPUs and gpuarena workloads, keep their sources, and the claims
table script writes one row per claim."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuarena.analysis.rows import precision
from gpuarena.analysis.verbs import check
from gpuarena.data import catalog, evidence
from gpuarena.errors import UserError
from gpuarena.workloads import registry
from tests.conftest import gpuarena

ROOT = Path(__file__).parents[2]
CLAIMS = evidence.claims()
RATIOS = evidence.holdout_ratios()


def test_every_claim_parses_with_its_source_date_and_expert_verdict():
    assert len(CLAIMS) >= 30
    for c in CLAIMS:
        assert c.expected in evidence.VERDICTS
        assert c.source and c.date and c.why
        assert c.throughput or c.latency or c.scaling or c.ttft or (c.vs and c.ratio)   # llm-serve: TTFT, ratio


def test_every_claim_names_a_catalog_gpu_a_workload_and_a_precision_check_takes():
    for c in CLAIMS:
        catalog.match(c.gpu)                      # UserError if unknown or ambiguous
        registry.get(c.workload)                  # UserError if no such workload
        if registry.fact(c.workload, "device_figure") and c.workload != "matmul":
            assert c.precision == "n/a", c        # a copy or a collective moves bytes (analysis/physics/micro_check.py)
        else:
            precision.request_of(c.precision)


def test_every_claim_condition_is_one_its_workload_has():
    for c in CLAIMS:
        known = registry.get(c.workload).param_map()
        if c.seq_len is not None:
            assert "seq_len" in known, c
        if c.image_size is not None:
            assert "image_size" in known, c
        if c.steps is not None:
            assert "inference_steps" in known, c
        if c.model is not None:
            assert "shape" in known, c
        if c.prompt_len is not None or c.new_tokens is not None:
            assert {"prompt_len", "new_tokens"} <= set(known), c


def test_the_claims_cover_every_source_family_and_every_verdict():
    text = " ".join(c.source for c in CLAIMS)
    for name in ("mlcommons/training_results", "mlcommons/inference_results", "DeepLearningExamples", "Megatron-LM",
                 "torchtitan", "TensorRT-LLM", "lambdal", "seed article 000", "issue 22"):
        assert name in text, name
    assert {c.expected for c in CLAIMS} == set(evidence.VERDICTS)


def test_the_issue_22_claims_are_there_at_the_stated_figures():
    def find(gpu, workload, prec, thr):
        return [c for c in CLAIMS if catalog.match(c.gpu) == catalog.match(gpu) and c.workload == workload
                and c.precision == prec and c.throughput == thr]
    assert find("H100 80GB SXM5", "resnet50-train", "bf16", 10500)[0].expected == "implausible"
    assert find("H100 80GB SXM5", "resnet50-train", "fp16", 10500)[0].expected == "implausible"
    assert find("H20", "bert-large-infer", "bf16", 468.8)[0].expected == "impossible"
    mlperf_h200 = find("H200", "resnet50-infer", "int8", 756960)[0]
    assert mlperf_h200.gpus == 8 and mlperf_h200.throughput / mlperf_h200.gpus == pytest.approx(94620)


def test_every_holdout_ratio_parses_and_names_catalog_gpus_and_workloads():
    assert len(RATIOS) >= 10
    for r in RATIOS:
        a, b = catalog.match(r.gpu_a), catalog.match(r.gpu_b)
        assert a != b
        registry.get(r.workload)
        precision.request_of(r.precision), precision.request_of(r.precision_b)
        assert 0.1 < r.ratio_b_over_a < 10 and r.num_gpus >= 1
        assert r.source and r.date and r.engine


def test_no_holdout_ratio_comes_from_a_projection_family():
    """The projection fits use Lambda's cross-GPU families (analysis/physics/projection.py FAMILIES); a hold-out
    ratio from the same publisher would not be held out."""
    for r in RATIOS:
        assert "lambdal" not in r.source.lower() and "lambda" not in r.engine.lower()


def test_claim_rows_are_what_check_reads():
    row = CLAIMS[0].check_row()
    assert tuple(row) == evidence.CHECK_COLUMNS
    assert set(check.REQUIRED) <= set(row) and set(row) <= set(check.REQUIRED + check.OPTIONAL)
    assert check.check_claim(row).verdict == CLAIMS[0].expected


def test_a_malformed_file_is_refused_with_its_line(tmp_path):
    bad = tmp_path / "claims.csv"
    text = evidence.CLAIMS_CSV.read_text(encoding="utf-8").splitlines()
    bad.write_text("\n".join(text[:2] + [text[2].replace("implausible", "maybe", 1)]) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"line 3: expected 'maybe'"):
        evidence.claims(bad)
    missing = tmp_path / "ratios.csv"
    missing.write_text("workload,precision\nresnet50-train,fp16\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing column"):
        evidence.holdout_ratios(missing)


@pytest.mark.slow
def test_claims_table_writes_one_row_per_claim_between_its_markers(tmp_path):
    """scripts/claims_table.sh on an empty database: every claim gets gpuarena's verdict or its refusal, and
    the page's other content stays."""
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    out = tmp_path / "claims.md"
    out.write_text("# Claims\n\nkept\n", encoding="utf-8")
    db = tmp_path / "empty.db"
    env = dict(os.environ, PY=sys.executable, OUT=str(out),
               PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    imported = gpuarena("import", "--published", "--db", str(db))   # in process: the script is the point
    assert imported.returncode == 0, imported.stderr
    for _ in range(2):          # a second run replaces the section instead of appending another
        proc = subprocess.run(["bash", "scripts/claims_table.sh", str(db)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
    page = out.read_text(encoding="utf-8")
    assert page.startswith("# Claims\n\nkept\n") and page.count("published-claims:start") == 1
    rows = [line for line in page.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == len(CLAIMS)
    assert all(re.search(r"\| (plausible|implausible|impossible|refused) \| (yes|\*\*no\*\*|refused) \|", r)
               for r in rows)
