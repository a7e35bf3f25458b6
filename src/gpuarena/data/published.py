"""Published results as database rows (source='published').

`gpuarena import --published` replaces every published row of a database with
the rows of published_results.csv that map to a gpuarena workload, in one
transaction.  They are never mixed with measured rows: their source is
'published', their origin is the citation, and they carry no raw samples, so
compare shows them without a confidence interval.

Only rows that describe the same work as a gpuarena workload are loaded
(single-GPU throughput or latency of the same model and mode); MLPerf rows
(time to train, offline scenarios) are left out (`published_rows(all_rows=True)`
lists them too).  Every loaded row keeps its origin in `extra`: the engine
class (PyTorch eager or compiled, TensorRT, MXNet, TensorFlow, PaddlePaddle),
the software as published, the date where the source gives one, and its
settings in `params` (batch, sequence length, image size, steps), so that
comparisons and rankings only set like beside like.  Rows never replace each
other: each source's row is its own case.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import re
from pathlib import Path

from gpuarena.data import catalog
from gpuarena.workloads import registry

PUBLISHED_CSV = Path(__file__).parent / "published_results.csv"

# The engine classes figures are compared within (analysis/rows/engine.py classes a measured result by them).
EAGER, COMPILED, TENSORRT = "PyTorch eager", "PyTorch compiled", "TensorRT"


def engine_class(software: str) -> str:
    """The engine a published figure ran on, as a class: figures of different classes are not compared."""
    s = (software or "").lower()
    for key, name in (("tensorrt", TENSORRT), ("mxnet", "MXNet"), ("tensorflow", "TensorFlow"),
                      ("paddle", "PaddlePaddle"), ("compile", COMPILED)):
        if key in s:
            return name
    return EAGER if ("pytorch" in s or "diffusers" in s or "torch" in s) else "other"


def _date(row: dict) -> str:
    """YYYY-MM from the source or software text (an NGC release 21.03 is 2021-03); 'undated' if none."""
    text = f"{row['source']} {row['software']}"
    m = re.search(r"\b(20\d\d)-(\d\d)\b", text)
    if m:
        return f"{m.group(1)}-{m.group(2)}"
    m = re.search(r"\b(?:NGC|pytorch:)\s*(\d\d)\.(\d\d)\b", row["software"], re.I)
    return f"20{m.group(1)}-{m.group(2)}" if m else "undated"


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
    # the settings the row states, as the workload's params (the class reads its own text)
    params: dict = {"batch_size": bs, **registry.get(workload).published_params(row["seq_len_or_resolution"])}
    gpu = catalog.find(row["gpu"])
    unit = unit.replace(" (total)", "")
    return {
        "run_id": None,
        "case_key": "published:" + hashlib.sha256(json.dumps(row, sort_keys=True).encode()).hexdigest()[:20],
        "source": "published", "workload": workload, "workload_version": None, "code_hash": None,
        "variant": _variant(row), "params": params, "size": "full", "gpus": 1, "device": "cuda",
        "device_name": gpu.name if gpu else row["gpu"], "status": "ok", "unit": unit,
        "precision": row["precision"], "throughput_median": value, "throughput": None, "samples": None,
        "warnings": [], "extra": {"gpu_text": row["gpu"], "software": row["software"], "note": row["note"],
                                  "engine": engine_class(row["software"]), "date": _date(row),
                                  "published_workload": row["workload"], "metric": row["metric"],
                                  "value": row["value"], "published_unit": row["unit"]},
        "origin": row["source"],
    }


def csv_paths() -> list[Path]:
    """The shipped published_results.csv, then each workload's own (``published_csv``)."""
    own = [cls.published_csv_path() for cls in registry.classes().values() if cls.published_csv]
    return [PUBLISHED_CSV, *own]


def published_rows(path: str | None = None, all_rows: bool = False) -> list[dict]:
    """Result dicts for the published rows that map to a gpuarena workload: of ``path``, else of
    every file of csv_paths()."""
    out = []
    for p in [path] if path else csv_paths():
        with open(p, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                w = _workload(row)
                r = to_result(row, w) if w else None
                if r is not None:
                    out.append(r)
                elif all_rows:
                    out.append({"source": "published", "workload": None, "origin": row["source"], "row": row})
    return out


@functools.lru_cache(maxsize=1)
def published_results() -> list:
    """The shipped published rows as typed Results (store/result.py), as the store would read them back."""
    from gpuarena.store.rows import validated

    return [validated(r) for r in published_rows()]


def load_into(store) -> int:
    """Replace the database's published rows with the shipped ones; returns how many."""
    rows = published_rows()
    store.replace_published(rows)
    return len(rows)


HOLDOUT_CSV = Path(__file__).parent / "holdout_ratios.csv"


def holdout_ratios(path: Path | None = None) -> list[dict]:
    """Cross-GPU ratios from independent sources (MLPerf, vendor pages) that no projection fit uses:
    the hold-out set of ``advise --validate``.  [] while the file is absent."""
    p = Path(path or HOLDOUT_CSV)
    if not p.is_file():
        return []
    with open(p, newline="", encoding="utf-8") as f:
        return [{"workload": r["workload"], "precision": r["precision"], "gpu_a": r["gpu_a"], "gpu_b": r["gpu_b"],
                 "ratio": float(r["ratio_b_over_a"]), "engine": r.get("engine", ""), "source": r["source"]}
                for r in csv.DictReader(f) if r.get("ratio_b_over_a")]


def reference_rows(names: tuple[str, ...]) -> list[dict]:
    """The published figures a workload sets its best recipe against (its class's ``reference_as``):
    the rows of published_results.csv under those names, at any GPU count, as a figure per GPU."""
    if not names:
        return []
    with open(PUBLISHED_CSV, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["workload"] in names and r["metric"] == "throughput"]
    out = []
    for r in rows:
        n = _int(r["num_gpus"]) or 1
        gpu = catalog.find(r["gpu"])
        out.append({"gpu": gpu.name if gpu else r["gpu"], "name": r["workload"], "precision": r["precision"],
                    "per_gpu": float(r["value"]) / n, "num_gpus": n, "unit": r["unit"].replace(" (total)", ""),
                    "software": r["software"], "source": r["source"]})
    return out
