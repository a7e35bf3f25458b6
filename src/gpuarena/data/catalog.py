"""The GPU catalog: typed records from gpu_specs.csv, loose name matching and
prices on one basis.

Every figure keeps its source: the CSV carries a source column per group of
figures.  Matching is by tokens ("A100 40GB SXM4", "a100-sxm4-40gb", "NVIDIA
A100-SXM4-40GB" are the same card); an ambiguous name is a UserError listing
the candidates.

Price API (prices.py holds the model: markets, confidence, the sanity check):

- ``g.price(basis) -> Price`` with basis ``"cloud"`` ($ per GPU-hour, on-demand:
  the default, ``prices.DEFAULT_BASIS``) or ``"purchase"`` ($ per GPU).  A Price
  has ``usd`` (None = unpriced, ``source`` says why), ``source``, ``date``,
  ``market`` (list | street | cloud), ``confidence`` (high | medium | low),
  ``rankable`` (priced and not low-confidence: a per-dollar winner is picked
  only among these) and ``label`` (source, date, market, confidence in one).
  ``g.purchase`` and ``g.cloud`` are ``g.price("purchase")``/``g.price("cloud")``.
- ``g.segment``: "datacenter" or "consumer" (GeForce); ``g.consumer``.
- ``g.tf32``, ``g.fp8``, ``g.sparsity_2_4``, ``g.nvlink_sharp``, ``g.family``: data/capabilities.py.
- ``priced(overrides, basis=None, include_consumer=True) -> tuple[GPU]``: the
  catalog with a ``--prices`` file applied (``load_prices``).  With a basis, the
  table is held to one market: where the file prices that basis in another
  market than the catalog's (street against list), the catalog's prices on it
  are dropped to "unpriced", never mixed.  ``include_consumer=False`` leaves
  GeForce cards out; ``consumer_excluded()`` gives the {gpu, reason} rows to
  show for them.
- ``prices.order_flags(gpus, basis)``: cards at least as good on paper yet
  priced lower on that basis (say them beside any per-dollar figure).

The catalog holds one snapshot per basis: cloud = AWS on-demand us-east-1 on
2026-01-21; purchase = Lambda's per-GPU list prices of 2023-02-14.  A card
neither prices is unpriced on that basis.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuarena.data import prices as P
from gpuarena.data.capabilities import capabilities
from gpuarena.data.prices import Price
from gpuarena.errors import UserError

DATA = Path(__file__).parent
SPECS_CSV = DATA / "gpu_specs.csv"

# Precision names gpuarena uses -> catalog column of dense peak TFLOP/s.
PEAK_COLUMNS = {"fp64": "fp64_tflops", "fp32": "fp32_tflops", "tf32": "tf32_tflops",
                "bf16": "bf16_tflops", "fp16": "fp16_tflops", "fp8": "fp8_tflops", "int8": "int8_tops"}
# "default" (PyTorch's defaults: FP32 matmuls) is checked against the FP32 peak.
PRECISION_ALIASES = {"default": "fp32", "float32": "fp32", "float16": "fp16", "half": "fp16",
                     "bfloat16": "bf16", "amp-fp16": "fp16", "amp-bf16": "bf16", "amp": "fp16",
                     "mixed": "fp16", "fp8-mixed": "fp8"}


def norm_precision(p: str) -> str:
    p = str(p).strip().lower()
    p = PRECISION_ALIASES.get(p, p)
    if p not in PEAK_COLUMNS:
        choices = ", ".join([*PEAK_COLUMNS, "default", "amp-fp16", "amp-bf16"])
        raise UserError(f"precision {p!r}: choose one of {choices}")
    return p


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
    purchase: Price               # usd = $ per GPU (list or street market)
    cloud: Price                  # usd = $ per GPU-hour (cloud market)
    source: str
    note: str
    segment: str = "datacenter"   # or "consumer" (GeForce): left out of data-centre advice unless asked
    tf32: bool = False            # TF32 tensor cores (gpu_specs.csv capability columns, capability_source)
    fp8: bool = False             # FP8 tensor cores
    sparsity_2_4: bool = False    # 2:4 structured sparsity (twice the dense tensor peaks)
    nvlink_sharp: bool = False    # the architecture's NVSwitch reduces in the switch (NVLink SHARP)
    raw: dict = field(default_factory=dict, repr=False)

    def peak(self, precision: str) -> float | None:
        return self.peaks.get(norm_precision(precision))

    def price(self, basis: str) -> Price:
        """The card's price on a basis: "cloud" ($/GPU-hour) or "purchase" ($ per GPU)."""
        return self.cloud if P.check_basis(basis) == "cloud" else self.purchase

    @property
    def consumer(self) -> bool:
        return self.segment == "consumer"

    @property
    def family(self) -> str:   # the architecture's family in lower case: "Ada Lovelace (AD102)" -> "ada"
        return self.architecture.split()[0].lower()

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


def _price(row: dict, basis: str, usd_column: str) -> Price:
    """A price from its columns; a price without a market, date, confidence or source is refused."""
    pre = "purchase" if basis == "purchase" else "cloud"
    usd = _num(row[usd_column])
    if usd is None:
        return P.unpriced(basis, row[f"{pre}_source"] or "no price captured")
    market = row.get(f"{pre}_market") or "cloud"
    if P.MARKETS.get(market) != basis or row[f"{pre}_confidence"] not in P.CONFIDENCE \
            or not row[f"{pre}_date"] or not row[f"{pre}_source"]:
        raise ValueError(f"gpu_specs.csv {row['name']}: a {basis} price needs market, date, confidence and source")
    return Price(usd, row[f"{pre}_source"], row[f"{pre}_date"], market, row[f"{pre}_confidence"])


def _record(row: dict) -> GPU:
    peaks = {p: _num(row[c]) for p, c in PEAK_COLUMNS.items() if _num(row.get(c, ""))}
    return GPU(
        name=row["name"], architecture=row["architecture"], memory_gb=float(row["memory_gb"]),
        memory_type=row["memory_type"], memory_bandwidth_gbs=_num(row["memory_bandwidth_gbs"]),
        nvlink_gbs=_num(row["nvlink_bandwidth_gbs"]), pcie_gen=_num(row["pcie_gen"]),
        tdp_w=_num(row["tdp_w"]), sm_count=int(_num(row["sm_count"]) or 0) or None, peaks=peaks,
        purchase=_price(row, "purchase", "purchase_usd"), cloud=_price(row, "cloud", "cloud_usd_per_gpu_hr"),
        source=row["source"], note=row["note"], segment=row.get("segment") or "datacenter",
        **capabilities(row, peaks), raw=dict(row))


@functools.lru_cache(maxsize=4)
def load(path: str | None = None) -> tuple[GPU, ...]:
    with open(path or SPECS_CSV, newline="", encoding="utf-8") as f:
        return tuple(_record(r) for r in csv.DictReader(f))


@functools.lru_cache(maxsize=64)   # workloads/precision.py asks per result; None: a CUDA GPU not named (Ampere on)
def has_tf32(family: str | None) -> bool:
    """Whether a family has TF32 tensor cores; one no catalog card has (a CPU, Turing) has none on record."""
    return family is None or any(g.tf32 for g in load() if g.family == family.lower())


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


# --- prices: user overrides, one basis per table ------------------------------

class Overrides(dict):
    """{catalog name: {"purchase"|"cloud": Price}} from a --prices file; `whole` holds the bases the
    file prices in full (whole_list: true): there the catalog's prices are not used."""
    whole: frozenset = frozenset()
    origin: str = ""


def load_prices(path: str | None) -> Overrides:
    """Read a YAML price file (format: prices.parse_file)."""
    out = Overrides()
    if not path:
        return out
    entries = P.parse_file(path)
    for e in entries:
        prices = out.setdefault(match(e["gpu"]).name, {})
        if e["basis"] in prices:
            raise UserError(f"--prices {path}: {match(e['gpu']).name} priced twice on the {e['basis']} basis "
                            f"({P.fmt(prices[e['basis']])} and {P.fmt(e['price'])}); give one price per card and basis")
        prices[e["basis"]] = e["price"]
    out.whole = frozenset(e["basis"] for e in entries if e["whole_list"])
    out.origin = f"--prices {path}"
    return out


def with_prices(gpu: GPU, overrides: dict[str, dict[str, Price]]) -> GPU:
    o = dict(overrides.get(gpu.name) or {})
    for basis in getattr(overrides, "whole", ()):
        why = f"not in {overrides.origin}, which replaces the catalog's {basis} prices"
        o.setdefault(basis, P.unpriced(basis, why))
    if not o:
        return gpu
    return replace(gpu, purchase=o.get("purchase", gpu.purchase), cloud=o.get("cloud", gpu.cloud))


def table_market(overrides: dict | None, basis: str) -> str:
    """The one market a table on `basis` is priced from: the --prices file's where it prices that
    basis, else the catalog's."""
    given = {p[basis].market for p in (overrides or {}).values() if basis in p}
    return given.pop() if len(given) == 1 else P.CATALOG_MARKET[P.check_basis(basis)]


def priced(overrides: dict | None = None, basis: str | None = None,
           include_consumer: bool = True) -> tuple[GPU, ...]:
    """The catalog with user prices applied.  With a basis, a price from another market than the
    table's (table_market) is dropped to unpriced, with the reason; include_consumer=False leaves
    GeForce cards out (consumer_excluded() says so)."""
    gpus = [with_prices(g, overrides or {}) for g in load() if include_consumer or not g.consumer]
    if basis:
        market = table_market(overrides, basis)
        attr = "cloud" if basis == "cloud" else "purchase"
        for i, g in enumerate(gpus):
            p = getattr(g, attr)
            if p.usd is not None and p.market != market:
                gpus[i] = replace(g, **{attr: P.unpriced(basis, f"only a {p.market} price ({P.fmt(p)}, {p.source}); "
                                                               f"this table is {market} prices")})
    return tuple(gpus)


def consumer_excluded() -> list[dict]:
    """The {gpu, reason} rows for the consumer cards that data-centre advice leaves out."""
    return [{"gpu": g.name, "reason": "consumer card (GeForce), not for the data centre: --include-consumer ranks it"}
            for g in load() if g.consumer]

