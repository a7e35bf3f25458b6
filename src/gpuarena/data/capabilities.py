"""Architecture capabilities as catalog columns (gpu_specs.csv), each yes or no, with the row's
capability_source: ``tf32`` and ``fp8`` (tensor cores of that precision; a card with them has that
peak, one without has none: the columns and the peaks are one fact), ``sparsity_2_4`` (2:4 structured
sparsity doubles the tensor peaks), ``nvlink_sharp`` (the architecture's NVSwitch reduces in the
switch, NCCL's NVLS, where one joins the cards).  A card's PCIe generation is its ``pcie_gen`` column,
whose rate is data/pcie_links.csv's.  Read through data/catalog.py's GPU (``g.tf32`` ...)."""

from __future__ import annotations

CAPABILITY_COLUMNS = ("tf32", "fp8", "sparsity_2_4", "nvlink_sharp")


def capabilities(row: dict, peaks: dict[str, float]) -> dict[str, bool]:
    """The yes/no capability columns; a card with TF32 or FP8 tensor cores has that peak, and one
    without them has none (the columns and the peaks are one fact)."""
    out = {}
    for c in CAPABILITY_COLUMNS:
        v = (row.get(c) or "").strip().lower()
        if v not in ("yes", "no"):
            raise ValueError(f"gpu_specs.csv {row['name']}: {c} is {v!r}, not yes or no")
        out[c] = v == "yes"
    for c in ("tf32", "fp8"):
        if out[c] != bool(peaks.get(c)):
            raise ValueError(f"gpu_specs.csv {row['name']}: {c}={row[c]} but {'no' if out[c] else 'a'} {c} peak")
    if any(out.values()) and not row.get("capability_source"):
        raise ValueError(f"gpu_specs.csv {row['name']}: the capability columns need a capability_source")
    return out
