"""Published results as database rows (source='published').

`gpuarena import --published` replaces every published row of a database with
the rows of published_results.csv that map to a gpuarena workload, in one
transaction.  They are never mixed with measured rows: their source is
'published', their origin is the citation, and they carry no raw samples, so
compare shows them without a confidence interval.

Only rows that describe the same work as a gpuarena workload are loaded
(single-GPU throughput or latency of the same model and mode); MLPerf
time-to-train, TensorRT and SQuAD-length rows describe different work and are
left out of comparisons (`published_rows(all_rows=True)` lists them too).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from gpuarena.data import catalog
from gpuarena.workloads import registry

PUBLISHED_CSV = Path(__file__).parent / "published_results.csv"


def _workload(row: dict) -> str | None:
    """gpuarena workload for a published row (the workloads' ``published_as`` names), or None
    when it is different work: several GPUs, or a figure other than items/s or s/image."""
    metric = row["metric"].lower()
    if row["num_gpus"].strip() != "1" or "xla" in row["precision"].lower():
        return None
    if metric != "throughput" and not (metric == "latency" and row["unit"] == "seconds/image"):
        return None
    return registry.published_names().get(row["workload"])


def _variant(row: dict) -> str:
    """The gpuarena variant closest to the published precision."""
    p = row["precision"].lower()
    if row["source"].startswith("article-"):
        return "seed"                 # the article's own code, run as written
    if re.search(r"\bamp\b|mixed", p):     # not "Ampere"
        return "amp-fp16"
    if "tf32" in p and "tf32 off" not in p:
        return "tf32"
    if p.startswith("fp32"):
        return "fp32"
    return "seed" if p.startswith("fp16") else p


def _int(text: str) -> int | None:
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else None


def to_result(row: dict, workload: str) -> dict | None:
    value = float(row["value"])
    unit = row["unit"]
    if row["metric"] == "latency":      # seconds per image at batch 1 -> images/s
        value, unit = 1.0 / value, "images/s"
    bs = _int(row["batch_size"])
    if bs is None or value <= 0:
        return None
    params: dict = {"batch_size": bs}
    if workload == "resnet50-train":
        params["image_size"] = _int(row["seq_len_or_resolution"]) or 224
    elif workload.startswith("bert"):
        params["seq_len"] = _int(row["seq_len_or_resolution"])
    gpu = catalog.find(row["gpu"])
    unit = unit.replace(" (total)", "")
    return {
        "run_id": None, "case_key": f"published:{workload}:{row['gpu']}:{row['precision']}:{bs}:{row['source'][:80]}",
        "source": "published", "workload": workload, "workload_version": None, "code_hash": None,
        "variant": _variant(row), "params": params, "size": "full", "gpus": 1, "device": "cuda",
        "device_name": gpu.name if gpu else row["gpu"], "status": "ok", "unit": unit,
        "precision": row["precision"], "throughput_median": value, "throughput": None, "samples": None,
        "warnings": [], "extra": {"gpu_text": row["gpu"], "software": row["software"], "note": row["note"],
                                  "published_workload": row["workload"], "metric": row["metric"],
                                  "value": row["value"], "published_unit": row["unit"]},
        "origin": row["source"],
    }


def published_rows(path: str | None = None, all_rows: bool = False) -> list[dict]:
    """Result dicts for the published rows that map to a gpuarena workload."""
    out = []
    with open(path or PUBLISHED_CSV, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            w = _workload(row)
            r = to_result(row, w) if w else None
            if r is not None:
                out.append(r)
            elif all_rows:
                out.append({"source": "published", "workload": None, "origin": row["source"], "row": row})
    return out


def load_into(store) -> int:
    """Replace the database's published rows with the shipped ones; returns how many."""
    rows = published_rows()
    store.replace_published(rows)
    return len(rows)
