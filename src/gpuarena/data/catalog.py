"""The GPU catalog: typed records from gpu_specs.csv, loose name matching and
user price overrides.

Every figure keeps its source: the CSV carries a source column per group of
figures, and a price override must name its source and date.  Matching is by
tokens ("A100 40GB SXM4", "a100-sxm4-40gb", "NVIDIA A100-SXM4-40GB" are the
same card); an ambiguous name is a UserError listing the candidates.
"""

from __future__ import annotations

import csv
import functools
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuarena.errors import UserError, pydantic_error_line

DATA = Path(__file__).parent
SPECS_CSV = DATA / "gpu_specs.csv"

# Precision names gpuarena uses -> catalog column of dense peak TFLOP/s.
PEAK_COLUMNS = {"fp64": "fp64_tflops", "fp32": "fp32_tflops", "tf32": "tf32_tflops",
                "bf16": "bf16_tflops", "fp16": "fp16_tflops", "fp8": "fp8_tflops", "int8": "int8_tops"}
# "default" (PyTorch's defaults: FP32 matmuls) is checked against the FP32 peak.
PRECISION_ALIASES = {"default": "fp32", "float32": "fp32", "float16": "fp16", "half": "fp16",
                     "bfloat16": "bf16", "amp-fp16": "fp16", "amp-bf16": "bf16", "amp": "fp16",
                     "mixed": "fp16", "fp8-mixed": "fp8"}
_DATE = re.compile(r"\b(20\d\d-\d\d(?:-\d\d)?)\b")


def norm_precision(p: str) -> str:
    p = str(p).strip().lower()
    p = PRECISION_ALIASES.get(p, p)
    if p not in PEAK_COLUMNS:
        raise UserError(f"precision {p!r}: choose one of {', '.join([*PEAK_COLUMNS, 'default', 'amp-fp16', 'amp-bf16'])}")
    return p


@dataclass(frozen=True)
class Price:
    usd: float | None
    source: str
    date: str  # "undated" when the source gives no date


@dataclass(frozen=True)
class GPU:
    name: str
    architecture: str
    memory_gb: float
    memory_type: str
    memory_bandwidth_gbs: float | None
    nvlink_gbs: float | None      # NVIDIA's figure: total bidirectional per GPU
    pcie_gen: float | None
    tdp_w: float | None
    sm_count: int | None
    peaks: dict[str, float]       # precision -> dense peak TFLOP/s (TOP/s for int8)
    purchase: Price
    cloud: Price                  # usd = $ per GPU-hour
    source: str
    note: str
    raw: dict = field(default_factory=dict, repr=False)

    def peak(self, precision: str) -> float | None:
        return self.peaks.get(norm_precision(precision))

    @property
    def short(self) -> str:
        return self.name.replace("NVIDIA ", "").replace("GeForce ", "").replace("Tesla ", "")


def _num(text: str) -> float | None:
    """'25000-30000' -> 27500 (midpoint), '~30000' -> 30000, '' -> None."""
    t = (text or "").strip().replace(",", "").lstrip("~")
    if not t:
        return None
    if "-" in t:
        lo, hi = t.split("-", 1)
        return (float(lo) + float(hi)) / 2
    return float(t)


def _date(source: str) -> str:
    m = _DATE.search(source or "")
    return m.group(1) if m else "undated"


def _record(row: dict) -> GPU:
    peaks = {p: _num(row[c]) for p, c in PEAK_COLUMNS.items() if _num(row.get(c, ""))}
    price_src = row["price_source"] or "no source"
    if _num(row["launch_price_usd"]) and "-" in row["launch_price_usd"]:
        price_src += f" (range {row['launch_price_usd']}: midpoint used)"
    return GPU(
        name=row["name"], architecture=row["architecture"], memory_gb=float(row["memory_gb"]),
        memory_type=row["memory_type"], memory_bandwidth_gbs=_num(row["memory_bandwidth_gbs"]),
        nvlink_gbs=_num(row["nvlink_bandwidth_gbs"]), pcie_gen=_num(row["pcie_gen"]),
        tdp_w=_num(row["tdp_w"]), sm_count=int(_num(row["sm_count"]) or 0) or None, peaks=peaks,
        purchase=Price(_num(row["launch_price_usd"]), price_src, _date(row["price_source"])),
        cloud=Price(_num(row["cloud_price_usd_per_gpu_hr"]), row["cloud_price_source"] or "no source",
                    _date(row["cloud_price_source"])),
        source=row["source"], note=row["note"], raw=dict(row))


@functools.lru_cache(maxsize=4)
def load(path: str | None = None) -> tuple[GPU, ...]:
    with open(path or SPECS_CSV, newline="", encoding="utf-8") as f:
        return tuple(_record(r) for r in csv.DictReader(f))


# --- loose matching ----------------------------------------------------------

_NOISE = {"nvidia", "tesla", "geforce", "gpu", "hgx", "dgx"}


@functools.lru_cache(maxsize=8192)   # a report matches every result's device name: once per name
def _tokens(text: str) -> frozenset[str]:
    text = re.sub(r"\([^)]*\)", " ", str(text).lower())          # "(DGX A100)", "(700 W)"
    text = re.sub(r"(\d+)\s*gb\b", r"\1gb", text)                 # "40 GB" -> "40gb"
    toks = {t for t in re.split(r"[^a-z0-9.]+", text) if t} - _NOISE
    out = set(toks)
    for t in toks:
        m = re.fullmatch(r"(sxm|pcie)\d*", t)
        if m:
            out.add(m.group(1))                                   # "sxm4" also means "sxm"
    return frozenset(out)


def _row_tokens(g: GPU) -> frozenset[str]:
    return _name_tokens(g.name, g.memory_gb, g.memory_type)


@functools.lru_cache(maxsize=1024)
def _name_tokens(name: str, mem: float, memory_type: str) -> frozenset[str]:
    extra = {f"{int(mem)}gb" if mem == int(mem) else f"{mem}gb", memory_type.lower().split()[0]}
    return _tokens(name) | extra


def candidates(name: str, gpus: tuple[GPU, ...] | None = None) -> list[GPU]:
    """Catalog rows whose tokens include every token of `name` (exact name first)."""
    gpus = gpus or load()
    for g in gpus:
        if g.name.lower() == str(name).strip().lower():
            return [g]
    want = _tokens(name)
    if not want:
        return []
    return [g for g in gpus if want <= _row_tokens(g)]


def find(name: str, gpus: tuple[GPU, ...] | None = None) -> GPU | None:
    """The one matching row, or None when nothing or several match (no error)."""
    if gpus is None:
        return _find_in_catalog(str(name))
    c = candidates(name, gpus)
    return c[0] if len(c) == 1 else None


@functools.lru_cache(maxsize=4096)   # a report asks for every result's device: once per name
def _find_in_catalog(name: str) -> GPU | None:
    c = candidates(name)
    return c[0] if len(c) == 1 else None


def match(name: str, gpus: tuple[GPU, ...] | None = None) -> GPU:
    """The catalog row for a loosely written GPU name; UserError if unknown or ambiguous."""
    gpus = gpus or load()
    c = candidates(name, gpus)
    if len(c) == 1:
        return c[0]
    if not c:
        import difflib

        close = difflib.get_close_matches(str(name), [g.name for g in gpus], n=3, cutoff=0.3)
        hint = f"; closest: {', '.join(close)}" if close else ""
        raise UserError(f"GPU {name!r} is not in the catalog{hint} (`gpuarena gpus` lists the catalog)")
    raise UserError(f"GPU {name!r} is ambiguous: {', '.join(g.name for g in c)}; add memory size or SXM/PCIe "
                    "(`gpuarena gpus` lists the catalog)")


def identity(device_name: str | None) -> str:
    """What compare groups by: the catalog name when one row matches, else the name as given."""
    if not device_name:
        return "unknown"
    g = find(device_name)
    return g.name if g else str(device_name)


# --- user price overrides ----------------------------------------------------

MAX_PRICE_FILE = 1 << 20


def load_prices(path: str | None) -> dict[str, dict[str, Price]]:
    """Read a YAML price file -> {catalog name: {"purchase": Price, "cloud": Price}}.

    Format (see data/article_prices.yaml)::

        prices:
          - gpu: A100 40GB SXM4        # matched loosely
            purchase_usd: 15000        # and/or cloud_usd_per_hr
            source: "where the figure comes from"
            date: "2023-10"
    """
    if not path:
        return {}
    from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

    class Entry(BaseModel):
        model_config = ConfigDict(extra="forbid")
        gpu: str = Field(min_length=1, max_length=200)
        purchase_usd: float | None = Field(None, gt=0, lt=10_000_000)
        cloud_usd_per_hr: float | None = Field(None, gt=0, lt=10_000)
        source: str = Field(min_length=1, max_length=2000)
        date: str = Field(min_length=4, max_length=40)

        @model_validator(mode="after")
        def _one_price(self):
            if self.purchase_usd is None and self.cloud_usd_per_hr is None:
                raise ValueError("give purchase_usd and/or cloud_usd_per_hr")
            return self

    class PriceFile(BaseModel):
        model_config = ConfigDict(extra="forbid")
        prices: list[Entry] = Field(min_length=1, max_length=1000)

    from gpuarena.safeio import load_yaml, read_text

    data = load_yaml(read_text(path, f"--prices {path}", MAX_PRICE_FILE), f"--prices {path}")
    if isinstance(data, dict) and "prices" in data and isinstance(data["prices"], list):
        for e in data["prices"]:   # YAML reads 2023-10-01 as a date: keep it as text
            if isinstance(e, dict) and "date" in e and not isinstance(e["date"], str):
                e["date"] = str(e["date"])
    try:
        pf = PriceFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"--prices {path}: {pydantic_error_line(exc)}") from None
    out: dict[str, dict[str, Price]] = {}
    for e in pf.prices:
        g = match(e.gpu)
        d = out.setdefault(g.name, {})
        if e.purchase_usd is not None:
            d["purchase"] = Price(e.purchase_usd, e.source, e.date)
        if e.cloud_usd_per_hr is not None:
            d["cloud"] = Price(e.cloud_usd_per_hr, e.source, e.date)
    return out


def with_prices(gpu: GPU, overrides: dict[str, dict[str, Price]]) -> GPU:
    o = overrides.get(gpu.name)
    if not o:
        return gpu
    return replace(gpu, purchase=o.get("purchase", gpu.purchase), cloud=o.get("cloud", gpu.cloud))


def priced(overrides: dict | None = None) -> tuple[GPU, ...]:
    """The catalog with user prices applied."""
    return tuple(with_prices(g, overrides or {}) for g in load())


def is_finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def catalog_rows(gpus: tuple[GPU, ...] | None = None) -> list[dict]:
    """The catalog as flat rows, every figure with its source (`gpuarena gpus`)."""
    out = []
    for g in gpus or load():
        out.append({
            "name": g.name, "short": g.short, "architecture": g.architecture, "memory_gb": g.memory_gb,
            "memory_type": g.memory_type, "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
            **{f"{p}_peak": g.peaks.get(p) for p in PEAK_COLUMNS},
            "nvlink_gbs": g.nvlink_gbs, "pcie_gen": g.pcie_gen, "tdp_w": g.tdp_w,
            "purchase_usd": g.purchase.usd, "purchase_source": g.purchase.source, "purchase_date": g.purchase.date,
            "cloud_usd_per_hr": g.cloud.usd, "cloud_source": g.cloud.source, "cloud_date": g.cloud.date,
            "spec_source": g.source, "note": g.note,
        })
    return out
