"""Prices on one basis: every price has its market, source, date and confidence,
and a table is priced from one market only.

Markets: ``list`` and ``street`` are purchase prices in $ per GPU; ``cloud`` is
on-demand $ per GPU-hour.  A table takes one *basis*: ``cloud`` (the default:
the most uniform and current market, every catalog figure from one provider's
price list on one date) or ``purchase`` (one purchase market: the catalog's
``list`` prices, or the market a ``--prices`` file gives).  A card without a
price on the basis is shown as unpriced, never dropped and never priced from
another market.

``order_flags`` is the sanity check: a card at least as good as another on
paper (memory, bandwidth, every dense peak, NVLink) yet priced lower on the
same basis is flagged, since such a price comes from another market, year or
deal and would crown the wrong card per dollar.

This module is a leaf (no catalog import): catalog.py builds on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuarena.errors import UserError, pydantic_error_line

BASES = ("cloud", "purchase")
DEFAULT_BASIS = "cloud"
MARKETS = {"list": "purchase", "street": "purchase", "cloud": "cloud"}   # market -> basis
CATALOG_MARKET = {"cloud": "cloud", "purchase": "list"}                 # the catalog's market per basis
CONFIDENCE = ("high", "medium", "low")
UNIT = {"cloud": "$/GPU-h", "purchase": "$"}
MAX_PRICE_FILE = 1 << 20
_DATE = re.compile(r"^(19|20)\d\d(-\d\d(-\d\d)?)?$")
# what "at least as good on paper" compares: a missing figure counts as 0
_PAPER = ("memory_gb", "memory_bandwidth_gbs", "nvlink_gbs")
_PEAKS = ("fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Price:
    """One price: usd is $ per GPU (purchase markets) or $ per GPU-hour (cloud); None = unpriced,
    and then source says why."""
    usd: float | None
    source: str
    date: str                  # YYYY, YYYY-MM or YYYY-MM-DD; "undated" only for an unpriced entry
    market: str = "list"       # list | street | cloud
    confidence: str = "medium"  # high | medium | low

    @property
    def basis(self) -> str:
        return MARKETS[self.market]

    @property
    def rankable(self) -> bool:
        """A price a per-dollar winner may be picked on: present and not low-confidence."""
        return self.usd is not None and self.confidence != "low"

    @property
    def label(self) -> str:
        """'source [date, market, confidence]', or 'unpriced: why'."""
        if self.usd is None:
            return f"unpriced: {self.source}"
        return f"{self.source} [{self.date}, {self.market}, {self.confidence} confidence]"

    @property
    def snapshot(self) -> tuple[str, str, str]:
        return (self.market, self.source, self.date)


def check_basis(basis: str) -> str:
    if basis not in BASES:
        raise UserError(f"--price-basis {basis!r}: choose cloud ($ per GPU-hour, on-demand) or purchase ($ per GPU)")
    return basis


def unpriced(basis: str, why: str) -> Price:
    return Price(None, why, "undated", CATALOG_MARKET[basis], "low")


def fmt(price: Price) -> str:
    """'$3.43/GPU-h', '$16,250' or 'unpriced'."""
    if price.usd is None:
        return "unpriced"
    return f"${price.usd:.2f}/GPU-h" if price.market == "cloud" else f"${price.usd:,.0f}"


def sources(pairs) -> list[str]:
    """[(card name, Price)] -> one line per snapshot: 'provider [date, market, confidence]: card (detail); ...'.
    A source reads 'provider: per-card detail' (split at the last ': '); the provider part names the snapshot."""
    groups: dict[tuple, list[str]] = {}
    for name, p in pairs:
        if p.usd is None:
            continue
        who, _, detail = p.source.rpartition(": ")
        who, detail = (who, detail) if who else (detail, "")
        groups.setdefault((who, p.date, p.market, p.confidence), []).append(f"{name} ({detail})" if detail else name)
    return [f"{who} [{date}, {market}, {conf} confidence]: {'; '.join(cards)}"
            for (who, date, market, conf), cards in groups.items()]


# --- the --prices file ---------------------------------------------------------

def parse_file(path: str) -> list[dict]:
    """Read and validate a YAML price file -> [{gpu, basis, price: Price, whole_list}] (names not yet matched).

    Format (see data/article_prices.yaml)::

        prices:
          - gpu: A100 40GB SXM4        # matched loosely against the catalog
            purchase_usd: 15000        # and/or cloud_usd_per_hr
            market: street             # list or street, for purchase_usd (default list)
            source: "where the figure comes from"
            date: "2023-10"            # YYYY, YYYY-MM or YYYY-MM-DD
            confidence: low            # high, medium or low (default medium)

    With ``whole_list: true`` at the top, the file is one provider's whole list: on each basis it
    prices, the catalog's prices are not used (a card the file does not name is unpriced), so the
    table comes from that one snapshot.  A file gives one purchase market: list and street prices in
    one file are refused, since a table never mixes markets.
    """
    from pydantic import ValidationError

    price_file = _price_file_model()
    data = _read_yaml(path)
    try:
        pf = price_file.model_validate(data)
    except ValidationError as exc:
        raise UserError(f"--prices {path}: {pydantic_error_line(exc)}") from None
    markets = {e.market for e in pf.prices if e.purchase_usd is not None}
    if len(markets) > 1:
        raise UserError(f"--prices {path}: purchase prices from both list and street markets; "
                        "one market per file (a table never mixes markets)")
    out = []
    for e in pf.prices:
        if e.purchase_usd is not None:
            out.append({"gpu": e.gpu, "basis": "purchase", "whole_list": pf.whole_list,
                        "price": Price(e.purchase_usd, e.source, e.date, e.market, e.confidence)})
        if e.cloud_usd_per_hr is not None:
            out.append({"gpu": e.gpu, "basis": "cloud", "whole_list": pf.whole_list,
                        "price": Price(e.cloud_usd_per_hr, e.source, e.date, "cloud", e.confidence)})
    return out


def _read_yaml(path: str):
    """The file's YAML, size-bounded, with dates kept as text (YAML reads 2023-10-01 as a date)."""
    from gpuarena.safeio import load_yaml, read_text

    data = load_yaml(read_text(path, f"--prices {path}", MAX_PRICE_FILE), f"--prices {path}")
    if isinstance(data, dict) and isinstance(data.get("prices"), list):
        for e in data["prices"]:
            if isinstance(e, dict) and "date" in e and not isinstance(e["date"], str):
                e["date"] = str(e["date"])
    return data


def _price_file_model():
    """The pydantic schema of a --prices file (pydantic imported here, on first use: this module is a leaf)."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

    class Entry(BaseModel):
        model_config = ConfigDict(extra="forbid")
        gpu: str = Field(min_length=1, max_length=200)
        purchase_usd: float | None = Field(None, gt=0, lt=10_000_000)
        cloud_usd_per_hr: float | None = Field(None, gt=0, lt=10_000)
        market: Literal["list", "street"] | None = None     # purchase_usd's market; None = list
        source: str = Field(min_length=1, max_length=2000)
        date: str = Field(min_length=4, max_length=10)
        confidence: Literal["high", "medium", "low"] = "medium"

        @field_validator("purchase_usd", "cloud_usd_per_hr", mode="before")
        @classmethod
        def _a_number(cls, v):
            if isinstance(v, bool):        # YAML's true/yes: pydantic would take it as $1
                raise ValueError("a price is a number, not true/false")
            return v

        @field_validator("source")
        @classmethod
        def _printable(cls, v: str) -> str:
            """Shown in every table, note and error: no terminal escape or bidi control, one line."""
            from gpuarena.safeio import printable

            line = " ".join(printable(v).split())
            if not line:
                raise ValueError("a source names where the price comes from")
            return line

        @field_validator("date")
        @classmethod
        def _dated(cls, v: str) -> str:
            if not _DATE.match(v):
                raise ValueError("a date is YYYY, YYYY-MM or YYYY-MM-DD")
            return v

        @model_validator(mode="after")
        def _one_price(self):
            if self.purchase_usd is None and self.cloud_usd_per_hr is None:
                raise ValueError("give purchase_usd and/or cloud_usd_per_hr")
            if self.market and self.purchase_usd is None:
                raise ValueError("market (list or street) is for purchase_usd; a cloud price's market is cloud")
            self.market = self.market or "list"
            return self

    class PriceFile(BaseModel):
        model_config = ConfigDict(extra="forbid")
        whole_list: bool = False
        prices: list[Entry] = Field(min_length=1, max_length=1000)

    return PriceFile


# --- sanity: the same basis must not price a better card below a worse one ------

def _paper(g) -> list[float]:
    return [float(getattr(g, k) or 0) for k in _PAPER] + [float(g.peaks.get(p) or 0) for p in _PEAKS]


def at_least_as_good(a, b) -> bool:
    """a >= b on every paper figure (memory, bandwidth, NVLink, each dense peak) and a != b."""
    pa, pb = _paper(a), _paper(b)
    return a.name != b.name and all(x >= y for x, y in zip(pa, pb))


def order_flags(gpus, basis: str) -> list[dict]:
    """Pairs priced against paper on one basis: [{gpu, cheaper_than, text}], the better card first.
    `gpus` carry .price(basis), .name, .short, memory/bandwidth/NVLink and .peaks."""
    priced = [g for g in gpus if g.price(basis).usd is not None]
    out = []
    for a in priced:
        for b in priced:
            pa, pb = a.price(basis), b.price(basis)
            if at_least_as_good(a, b) and pa.usd < pb.usd and _paper(a) != _paper(b):
                out.append({"gpu": a.name, "cheaper_than": b.name,
                            "text": f"{a.short} ({fmt(pa)}) costs less than {b.short} ({fmt(pb)}) though at "
                                    "least as good on paper: read per-dollar figures of this pair with care"})
    return out
