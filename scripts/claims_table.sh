#!/usr/bin/env bash
# The published claims (src/gpuarena/data/published_claims.csv) through `gpuarena check`, beside the verdict
# an expert gives each: the "Published claims" section of docs/claims.md, between its markers (appended when
# the page has none).  Run from the repository root:  scripts/claims_table.sh [DB]
# DB: a database holding the H200 bundles and the published rows (scripts/decision_docs.sh passes its own);
# built in a temporary folder when not given.  `gpuarena check --csv` runs on the whole file first; when it
# refuses the file (one row it cannot read stops it), each row goes through `gpuarena check --csv` alone, so
# every row gets gpuarena's verdict or its one-line refusal.  Exit 0 whatever the verdicts: the page lists them.
set -euo pipefail
PY=${PY:-python}
GA=${GA:-"$PY -m gpuarena"}
CSV=src/gpuarena/data/published_claims.csv
OUT=${OUT:-docs/claims.md}
DB=${1:-}
if [ -z "$DB" ]; then
    DB=$(mktemp -d)/claims.db
    for f in docs/data/h200-*.json; do $GA import "$f" --db "$DB" >/dev/null; done
    $GA import --published --db "$DB" >/dev/null
fi

$PY - "$CSV" "$DB" "$OUT" <<'PY'
import contextlib, csv, io, json, os, sys, tempfile

from gpuarena.cli import main
from gpuarena.data import evidence
from gpuarena.workloads import registry

csv_path, db, out = sys.argv[1:4]
START, END = "<!-- published-claims:start -->", "<!-- published-claims:end -->"


def check(path):
    """`gpuarena check --csv PATH --format json`, in this process: (rows, None) or (None, the refusal)."""
    so, se = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
        try:
            main(["check", "--csv", path, "--db", db, "--format", "json"])
        except SystemExit as exc:
            code = exc.code or 0
    if code:
        return None, se.getvalue().strip().removeprefix("gpuarena: error: ") or f"exit {code}"
    return json.loads(so.getvalue()), None


claims = evidence.claims(csv_path)
rows, refusal = check(csv_path)
whole = rows is not None
if whole:
    verdicts = [(r["verdict"], r["reason"]) for r in rows]
else:
    verdicts = []
    with open(csv_path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        fields, lines = reader.fieldnames, list(reader)
    for line in lines:
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="", encoding="utf-8") as t:
            w = csv.DictWriter(t, fieldnames=fields)
            w.writeheader()
            w.writerow(line)
        one, why = check(t.name)
        os.unlink(t.name)
        verdicts.append((one[0]["verdict"], one[0]["reason"]) if one else ("refused", why))


def cell(text):
    return str(text).replace("|", "/").replace("\n", " ")


def conditions(c):
    parts = [f"{k}={getattr(c, k)}" for k in ("seq_len", "image_size", "steps", "model", "prompt_len", "new_tokens")
             if getattr(c, k) is not None]
    return ", ".join(parts + ([f"gpus={c.gpus}"] if c.gpus > 1 else [])
                     + ([f"replicas={c.replicas}"] if c.replicas is not None else []))


def claimed(c):
    if c.ratio is not None:      # llm-serve: throughput of gpu over vs's
        return f"{c.ratio:g}x the {c.vs}"
    if c.ttft is not None:
        return f"TTFT {c.ttft * 1e3:g} ms"
    if c.scaling is not None:
        return f"scaling {c.scaling:g}"
    if c.latency is not None:
        return f"{c.latency:g} s/item"
    unit = registry.fact(c.workload, "device_figure")   # a micro-benchmark's figure in its unit
    if unit:
        return f"{c.throughput:,.6g} {'TFLOP/s' if unit == 'compute-peak' else 'GB/s'}"
    return f"{c.throughput:,.6g}/s"


agree = [i for i, (c, (v, _)) in enumerate(zip(claims, verdicts), 1) if v == c.expected]
refused = [i for i, (_, (v, _)) in enumerate(zip(claims, verdicts), 1) if v == "refused"]
wrong = [i for i in range(1, len(claims) + 1) if i not in agree and i not in refused]
lines = [START, "", "## Published claims: the expert's verdict beside gpuarena's", "",
         f"{len(claims)} figures from MLPerf, NVIDIA (DeepLearningExamples, TensorRT, Megatron-LM, TensorRT-LLM), PyTorch "
         "(torchtitan, gpt-fast), Lambda, NCCL's issue trackers (all-reduce bus bandwidths) and the seed articles, and "
         "claims built to be caught (issue 22), each at the "
         "conditions its source states (`src/gpuarena/data/published_claims.csv`, read by `gpuarena.data.evidence`). "
         "Regenerate with `scripts/claims_table.sh`.", "",
         ("`gpuarena check --csv src/gpuarena/data/published_claims.csv --format json` judged the whole file."
          if whole else f"`gpuarena check --csv src/gpuarena/data/published_claims.csv` refuses the file ({cell(refusal)}), "
          "so each row went through `gpuarena check --csv` alone."), "",
         f"gpuarena agrees with the expert on {len(agree)} of {len(claims)}; it disagrees on {len(wrong)} "
         f"(rows {', '.join(map(str, wrong)) or 'none'}) and refuses {len(refused)} (rows {', '.join(map(str, refused)) or 'none'}).",
         "", "| # | GPU | workload | precision | batch | conditions | claimed | expert | gpuarena | agree | why (expert) | "
         "gpuarena's reason | source (date) |", "|" + "---|" * 13]
for i, (c, (v, reason)) in enumerate(zip(claims, verdicts), 1):
    mark = "yes" if i in agree else ("refused" if v == "refused" else "**no**")
    lines.append("| " + " | ".join(cell(x) for x in (
        i, c.gpu, c.workload, c.precision, c.batch_size if c.batch_size is not None else "-", conditions(c), claimed(c),
        c.expected, v, mark, c.why, reason, f"{c.source} ({c.date})")) + " |")
lines += ["", END, ""]
section = "\n".join(lines)
page = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
if START in page and END in page:
    head, rest = page.split(START, 1)
    page = head + section + rest.split(END, 1)[1].lstrip("\n")
else:
    page = page.rstrip("\n") + "\n\n" + section
open(out, "w", encoding="utf-8").write(page)
print(f"wrote {out}: {len(agree)} of {len(claims)} verdicts agree, {len(wrong)} disagree, {len(refused)} refused")
PY
