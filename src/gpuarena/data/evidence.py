"""The evidence gpuarena's physics is judged by, typed: published claims and hold-out ratios.

published_claims.csv: figures published by MLPerf, NVIDIA (DeepLearningExamples, TensorRT,
Megatron-LM, TensorRT-LLM), PyTorch (torchtitan, gpt-fast), Lambda and the two seed articles,
plus claims built to be caught (issue 22), each with the conditions its source states, the
verdict an expert gives it (plausible, implausible, impossible) and why.  Its first columns
are those `gpuarena check --csv` reads, `model`, `prompt_len` and `new_tokens` (the LLM
conditions) included.

holdout_ratios.csv: cross-GPU throughput ratios (gpu_b over gpu_a, same engine, same GPU
count) from sources no projection fit uses: MLPerf Training time-to-train, MLPerf Inference
Offline, NVIDIA's A100-against-V100 tables.  They are the hold-out of `advise --validate`.

Every row of both keeps its source (repository and path at a commit, or a URL) and a date.

ceilings.csv: the best throughput credibly reached on a model workload (MLPerf, NVIDIA's
DeepLearningExamples and TensorRT, Lambda, gpuarena's H200 runs) at the conditions its source
states: the evidence analysis/physics/credible.py judges model claims by.  Its engine_class says whether the
engine was built for the figure ("tuned": MLPerf submissions, TensorRT, DeepSpeed's kernels) or is a
framework's own ("framework"): a ceiling set by framework figures alone only warns (analysis/physics/limits.py).

micro_ceilings.csv: the best figure a micro-benchmark (matmul TFLOP/s, membw, h2d, d2h GB/s,
allreduce bus bandwidth) reached on a GPU, published or measured here, each with its engine
and source: the evidence analysis/physics/micro_check.py judges micro claims by.  pcie_links.csv: a
PCIe generation's x16 rate per direction after encoding, the bound of a host link.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, fields
from pathlib import Path

from gpuarena.errors import UserError

DATA = Path(__file__).parent
CLAIMS_CSV = DATA / "published_claims.csv"
HOLDOUT_CSV = DATA / "holdout_ratios.csv"
CEILINGS_CSV = DATA / "ceilings.csv"
MICRO_CSV = DATA / "micro_ceilings.csv"
PCIE_CSV = DATA / "pcie_links.csv"
ENGINE_CLASSES = ("tuned", "framework")   # a ceiling's engine: built for the figure, or a framework's own
REGIMES = ("", "nvls", "ring")      # an all-reduce's: reduced in the NVSwitch (NVLink SHARP) or a ring
VERDICTS = ("plausible", "implausible", "impossible")
# the columns `gpuarena check --csv` reads, in its order (analysis.check REQUIRED + OPTIONAL)
CHECK_COLUMNS = ("gpu", "workload", "precision", "batch_size", "throughput", "latency", "seq_len", "image_size",
                 "steps", "gpus", "scaling", "model", "prompt_len", "new_tokens", "source", "replicas", "ttft", "vs",
                 "ratio")


@dataclass(frozen=True, slots=True)
class Claim:
    """One published figure as its source states it, and the verdict an expert gives it."""
    gpu: str                    # as the catalog matches it (data/catalog.py match)
    workload: str               # a gpuarena workload name
    precision: str              # as `check --precision` takes it (default, fp32, tf32, bf16, fp16, fp8, int8)
    batch_size: int | None      # items per step as the source states it; None where it states none
    throughput: float | None    # items/s, all GPUs together
    latency: float | None       # seconds per item
    seq_len: int | None
    image_size: int | None
    steps: int | None           # diffusion steps
    gpus: int                   # GPUs the throughput or scaling is for
    scaling: float | None       # multi-GPU scaling coefficient
    model: str | None           # LLM shape (workloads/llm/shapes.py SHAPES) for llm-train and llm-serve
    prompt_len: int | None      # llm-serve: prompt tokens per request
    new_tokens: int | None      # llm-serve: generated tokens per request
    source: str
    date: str
    expected: str               # plausible | implausible | impossible
    why: str
    # llm-serve forms (issue 39), the file's last columns, empty on rows of other kinds (a short row
    # reads them as empty): independent copies of the model over `gpus`, a time to the first token,
    # and a throughput ratio over a second GPU
    replicas: int | None = None
    ttft: float | None = None   # seconds to the first token of prompt_len tokens
    vs: str | None = None
    ratio: float | None = None  # throughput of gpu over vs's

    def check_row(self) -> dict:
        """The claim as `gpuarena check --csv` reads a row (absent values as empty strings)."""
        return {k: "" if getattr(self, k) is None else str(getattr(self, k)) for k in CHECK_COLUMNS}


@dataclass(frozen=True, slots=True)
class HoldoutRatio:
    """Throughput of gpu_b over gpu_a, both measured by one publisher with one engine at one GPU count."""
    workload: str
    precision: str              # gpu_a's precision, as check takes it
    precision_b: str            # gpu_b's when it differs (MLPerf's FP8 H100 against an FP16 A100), else the same
    gpu_a: str
    gpu_b: str
    ratio_b_over_a: float
    engine: str
    num_gpus: int
    source: str
    date: str
    note: str


@dataclass(frozen=True, slots=True)
class ModelCeiling:
    """The best throughput reached on one model workload on one GPU, at the conditions its source states."""
    workload: str
    precision: str              # as `check --precision` takes it
    gpu: str                    # as the catalog matches it
    throughput: float | None    # items/s; None where the source gives only a latency
    latency_s: float | None     # seconds per step of batch_size items (one where no batch is given)
    batch_size: int | None
    seq_len: int | None
    image_size: int | None
    steps: int | None           # diffusion steps
    engine: str
    engine_class: str           # ENGINE_CLASSES: "tuned" (MLPerf, TensorRT, DeepSpeed's kernels, NVIDIA's MXNet +
    #                             DALI) or "framework" (a framework's own kernels: PyTorch eager or compiled, Paddle)
    source: str

    @property
    def items_per_s(self) -> float:
        return self.throughput if self.throughput is not None else (self.batch_size or 1) / self.latency_s

    def conditions(self) -> dict:
        """The conditions as a claim states them (analysis.roofline.workload_params reads these)."""
        return {k: getattr(self, k) for k in ("batch_size", "seq_len", "image_size", "steps")}


@dataclass(frozen=True, slots=True)
class MicroCeiling:
    """The best figure of one micro-benchmark on one GPU (or n of them) as its source states it."""
    workload: str               # matmul, membw, h2d, d2h or allreduce
    gpu: str                    # as the catalog matches it
    precision: str              # matmul's, as check takes it; "" for a copy or a collective
    value: float                # in unit
    unit: str                   # TFLOP/s (matmul) or GB/s
    gpus: int
    algorithm: str              # an all-reduce's regime (REGIMES); "" where the source names none
    engine: str
    source: str


@dataclass(frozen=True, slots=True)
class PcieLink:
    """One PCIe generation's x16 link."""
    gen: int
    gt_per_s: float
    encoding: str
    x16_gbs_per_direction: float   # after encoding: the bound of a host copy
    source: str


def _rows(path: Path, what: str, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise UserError(f"{what} {path}: no such file")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise UserError(f"{what} {path}: missing column(s) {', '.join(missing)}")
        return [(i, {k: (v or "").strip() for k, v in r.items()}) for i, r in enumerate(reader, start=2)]


def _number(row: dict, key: str, where: str, kind=float, positive: bool = True):
    text = row.get(key, "")
    if text == "":
        return None
    try:
        x = kind(text) if kind is float else int(float(text))
    except ValueError:
        raise UserError(f"{where}: {key} {text!r} is not a number") from None
    if kind is int and float(text) != x:
        raise UserError(f"{where}: {key} {text!r} is not a whole number")
    if not math.isfinite(x) or (positive and x <= 0):
        raise UserError(f"{where}: {key} {text!r} must be a finite positive number")
    return x


def _needed(row: dict, key: str, where: str, kind=float):
    x = _number(row, key, where, kind)
    if x is None:
        raise UserError(f"{where}: {key} is empty")
    return x


def _text(row: dict, key: str, where: str) -> str:
    if not row.get(key):
        raise UserError(f"{where}: {key} is empty")
    return row[key]


def claims(path: str | Path | None = None) -> tuple[Claim, ...]:
    """The published claims, typed; UserError naming the line of the first malformed row."""
    p = Path(path or CLAIMS_CSV)
    required = tuple(f.name for f in fields(Claim) if f.default is not None)   # the serving forms' are optional
    out = []
    for line, row in _rows(p, "claims", required):
        where = f"{p.name} line {line}"
        expected = _text(row, "expected", where)
        if expected not in VERDICTS:
            raise UserError(f"{where}: expected {expected!r} is not one of {', '.join(VERDICTS)}")
        n = {k: _number(row, k, where, int) for k in ("batch_size", "seq_len", "image_size", "steps", "gpus",
                                                      "prompt_len", "new_tokens", "replicas")}
        x = {k: _number(row, k, where) for k in ("throughput", "latency", "scaling", "ttft", "ratio")}
        if all(v is None for v in x.values()):
            raise UserError(f"{where}: give a throughput, a latency, a scaling coefficient, a ttft or a ratio")
        if (x["ratio"] is None) != (row.get("vs") in (None, "")):
            raise UserError(f"{where}: a ratio claim gives both vs and ratio")
        out.append(Claim(gpu=_text(row, "gpu", where), workload=_text(row, "workload", where),
                         precision=_text(row, "precision", where), gpus=n.pop("gpus") or 1, **n, **x,
                         model=row["model"] or None, source=_text(row, "source", where), vs=row.get("vs") or None,
                         date=_text(row, "date", where), expected=expected, why=_text(row, "why", where)))
    return tuple(out)


def holdout_ratios(path: str | Path | None = None) -> tuple[HoldoutRatio, ...]:
    """The hold-out cross-GPU ratios, typed; UserError naming the line of the first malformed row."""
    p = Path(path or HOLDOUT_CSV)
    required = tuple(f.name for f in fields(HoldoutRatio))
    out = []
    for line, row in _rows(p, "hold-out ratios", required):
        where = f"{p.name} line {line}"
        t = {k: _text(row, k, where) for k in ("workload", "precision", "gpu_a", "gpu_b", "engine", "source", "date")}
        ratio = _needed(row, "ratio_b_over_a", where)
        out.append(HoldoutRatio(**t, precision_b=row["precision_b"] or t["precision"], ratio_b_over_a=ratio,
                                num_gpus=_number(row, "num_gpus", where, int) or 1, note=row["note"]))
    return tuple(out)


def model_ceilings(path: str | Path | None = None) -> tuple[ModelCeiling, ...]:
    """The model workloads' ceilings, typed; UserError naming the line of the first malformed row."""
    p = Path(path or CEILINGS_CSV)
    out = []
    for line, row in _rows(p, "ceilings", tuple(f.name for f in fields(ModelCeiling))):
        where = f"{p.name} line {line}"
        x = {k: _number(row, k, where) for k in ("throughput", "latency_s")}
        if x["throughput"] is None and x["latency_s"] is None:
            raise UserError(f"{where}: give a throughput or a latency_s")
        t = {k: _text(row, k, where) for k in ("workload", "precision", "gpu", "engine", "engine_class", "source")}
        if t["engine_class"] not in ENGINE_CLASSES:
            raise UserError(f"{where}: engine_class {t['engine_class']!r} is not one of {', '.join(ENGINE_CLASSES)}")
        n = {k: _number(row, k, where, int) for k in ("batch_size", "seq_len", "image_size", "steps")}
        out.append(ModelCeiling(**t, **x, **n))
    return tuple(out)


def micro_ceilings(path: str | Path | None = None) -> tuple[MicroCeiling, ...]:
    """The micro-benchmark ceilings, typed; UserError naming the line of the first malformed row."""
    p = Path(path or MICRO_CSV)
    out = []
    for line, row in _rows(p, "micro ceilings", tuple(f.name for f in fields(MicroCeiling))):
        where = f"{p.name} line {line}"
        if row["algorithm"] not in REGIMES:
            raise UserError(f"{where}: algorithm {row['algorithm']!r} is not one of {', '.join(REGIMES[1:])} "
                            "(or empty)")
        t = {k: _text(row, k, where) for k in ("workload", "gpu", "unit", "engine", "source")}
        out.append(MicroCeiling(**t, precision=row["precision"], value=_needed(row, "value", where),
                                gpus=_number(row, "gpus", where, int) or 1, algorithm=row["algorithm"]))
    return tuple(out)


def pcie_links(path: str | Path | None = None) -> tuple[PcieLink, ...]:
    """The PCIe generations, typed, one row each; UserError naming the line of the first malformed row."""
    p = Path(path or PCIE_CSV)
    out: list[PcieLink] = []
    for line, row in _rows(p, "PCIe links", tuple(f.name for f in fields(PcieLink))):
        where = f"{p.name} line {line}"
        gen = _needed(row, "gen", where, int)
        if any(link.gen == gen for link in out):
            raise UserError(f"{where}: PCIe gen {gen} is given twice")
        out.append(PcieLink(gen, _needed(row, "gt_per_s", where), _text(row, "encoding", where),
                            _needed(row, "x16_gbs_per_direction", where), _text(row, "source", where)))
    return tuple(out)

