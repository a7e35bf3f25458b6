"""Summarise one MLPerf Training result folder: the figures data/published_claims.csv and
data/holdout_ratios.csv take from MLPerf Training logs.

    python scripts/mlperf_train_summary.py REPO FOLDER
    e.g. REPO = a clone of github.com/mlcommons/training_results_v4.0,
         FOLDER = NVIDIA/results/h200_ngc24.04_mxnet/resnet

Per run (result_*.txt): time to train (run_stop - run_start), its status, the median of the
logged `throughput` values after the first (ResNet-50 logs one per epoch; newer logs inside
`tracked_stats`), or, where none is logged, train_samples over the run time (BERT).  Then the olympic mean of the
times (best and worst dropped, as MLPerf scores them, before its RCP scaling factor) and the
median of the runs' epoch throughputs.  Reads the folder at HEAD of REPO (a git checkout or a
bare mirror); prints, writes nothing.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def events(text: str):
    for line in text.splitlines():
        m = re.search(r":::MLLOG (\{.*\})", line)
        if m:
            try:
                yield json.loads(m.group(1))
            except json.JSONDecodeError:
                continue


def run_summary(text: str) -> dict:
    r: dict = {"throughput": [], "tracked": []}
    for d in events(text):
        k, v = d["key"], d.get("value")
        if k in ("run_start", "run_stop"):
            r[k] = d["time_ms"]
            if k == "run_stop":
                r["status"] = d.get("metadata", {}).get("status")
        elif k == "throughput":
            r["throughput"].append(float(v))
        elif k == "tracked_stats" and isinstance(v, dict) and "throughput" in v:
            r["tracked"].append(float(v["throughput"]))
        elif k in ("train_samples", "global_batch_size", "d_batch_size", "submission_platform"):
            r.setdefault(k, v)
            if k == "train_samples":
                r[k] = v            # the last one: samples seen when the target was reached
    thr = r["throughput"] or r["tracked"]
    r["epoch_throughput"] = statistics.median(thr[1:] if len(thr) > 2 else thr) if thr else None
    r["minutes"] = (r["run_stop"] - r["run_start"]) / 60000
    # ResNet-50's train_samples is the epoch size, not the samples seen: only where no throughput is logged
    r["samples_per_s"] = (r["train_samples"] / (r["minutes"] * 60)
                          if r.get("train_samples") and not thr else None)
    return r


def main(repo: str, folder: str) -> None:
    files = sorted(f for f in git(repo, "ls-tree", "--name-only", "HEAD", folder.rstrip("/") + "/").split()
                   if re.search(r"result_\d+\.txt$", f))
    if not files:
        sys.exit(f"no result_*.txt under {folder}")
    runs = [run_summary(git(repo, "show", f"HEAD:{f}")) for f in files]
    for f, r in zip(files, runs):
        print(f"{f.rsplit('/', 1)[-1]}: {r['minutes']:.3f} min ({r.get('status')}), epoch throughput "
              f"{r['epoch_throughput'] or '-'}, samples/s to target {r['samples_per_s'] or '-'}")
    first = runs[0]
    print(f"platform {first.get('submission_platform')}, global batch {first.get('global_batch_size')}, "
          f"per-device batch {first.get('d_batch_size')}")
    times = sorted(r["minutes"] for r in runs)
    print(f"olympic mean time to train: {statistics.mean(times[1:-1]):.3f} min over {len(times)} runs")
    thr = [r["epoch_throughput"] for r in runs if r["epoch_throughput"]]
    if thr:
        print(f"median logged throughput: {statistics.median(thr):,.1f} items/s (all GPUs)")
    rates = [r["samples_per_s"] for r in runs if r["samples_per_s"]]
    if rates:
        print(f"median samples/s to target: {statistics.median(rates):,.0f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
