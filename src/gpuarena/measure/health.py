"""A GPU's error counters from NVML, read before and after doctor's checks, and the XID events
raised between (what `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT` and the kernel log's
"NVRM: Xid" lines show; DCGM's diagnostics read the same counters).

- ECC: aggregate corrected and uncorrected counts (since the card was made; the volatile ones in
  the fingerprint reset with the driver);
- row remapping (Ampere and newer): rows remapped for corrected and uncorrected errors, a remap
  pending (needs a GPU reset) and a remap that failed (the card has run out of spare rows);
- retired pages (Volta and older; Ampere+ remaps rows instead): pages retired for double-bit and
  multiple single-bit errors;
- XID critical errors: an NVML event set registered before the checks and drained after.

A counter NVML does not give on this card is None and names nothing; without NVML (a CPU) the
reading says so and fails nothing.
"""

from __future__ import annotations

from gpuarena.measure.telemetry import _nvml, nvml_handle

NO_NVML = "no NVML on this host (a CPU, or no NVIDIA driver): error counters not read"


def _call(fn):
    try:
        v = fn()
        return int(v) if isinstance(v, (bool, int)) else v
    except Exception:
        return None


def _handle(nv, index: int):
    try:
        return nv.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None


def counters(device) -> dict:
    """The error counters of a torch device now ({"available": False, "why": ...} without NVML)."""
    nv, h = nvml_handle(device)
    if h is None:
        return {"available": False, "why": NO_NVML}
    out: dict = {"available": True}
    for key, kind in (("ecc_uncorrected", nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
                      ("ecc_corrected", nv.NVML_MEMORY_ERROR_TYPE_CORRECTED)):
        out[key] = _call(lambda k=kind: nv.nvmlDeviceGetTotalEccErrors(h, k, nv.NVML_AGGREGATE_ECC))
    rows = _call(lambda: nv.nvmlDeviceGetRemappedRows(h))
    if isinstance(rows, (tuple, list)) and len(rows) == 4:
        out.update(rows_remapped_corrected=int(rows[0]), rows_remapped_uncorrected=int(rows[1]),
                   row_remap_pending=bool(rows[2]), row_remap_failed=bool(rows[3]))
    else:
        out.update(rows_remapped_corrected=None, rows_remapped_uncorrected=None,
                   row_remap_pending=None, row_remap_failed=None)
    for key, cause in (("retired_pages_dbe", "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR"),
                       ("retired_pages_sbe", "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS")):
        pages = _call(lambda c=cause: nv.nvmlDeviceGetRetiredPages(h, getattr(nv, c)))
        out[key] = len(pages) if isinstance(pages, (list, tuple)) else None
    return out


# counters that only ever grow while the card is healthy: an increase during the checks is news
GROWING = ("ecc_uncorrected", "ecc_corrected", "rows_remapped_corrected", "rows_remapped_uncorrected",
           "retired_pages_dbe", "retired_pages_sbe")


def changes(before: dict, after: dict) -> dict:
    """{counter: increase} for the counters that grew between two readings, and a remap now pending or
    failed; {} when nothing changed or either reading is unavailable."""
    if not (before.get("available") and after.get("available")):
        return {}
    out = {k: after[k] - before[k] for k in GROWING
           if isinstance(before.get(k), int) and isinstance(after.get(k), int) and after[k] > before[k]}
    for k in ("row_remap_pending", "row_remap_failed"):
        if after.get(k) and not before.get(k):
            out[k] = True
    return out


class XidWatch:
    """XID critical-error events of every GPU from the moment it is entered to ``drain()``."""

    def __init__(self):
        self.nv = _nvml()
        self.es = None
        self.why = "no NVML on this host: XID events not watched" if self.nv is None else None

    def __enter__(self):
        nv = self.nv
        if nv is None:
            return self
        try:
            self.es = nv.nvmlEventSetCreate()
            registered = 0
            for i in range(nv.nvmlDeviceGetCount()):
                try:
                    nv.nvmlDeviceRegisterEvents(_handle(nv, i), nv.nvmlEventTypeXidCriticalError, self.es)
                    registered += 1
                except Exception:
                    pass
            if not registered:
                self.why = "the driver does not report XID events for these GPUs"
        except Exception as exc:
            self.es, self.why = None, f"XID events not available: {exc}"
        return self

    def drain(self) -> list[dict]:
        """The XID events raised since entering: [{"uuid": the GPU's, "xid": n}]."""
        nv, out = self.nv, []
        if self.es is None:
            return out
        while True:
            try:
                ev = nv.nvmlEventSetWait(self.es, 0)
            except Exception:       # NVML_ERROR_TIMEOUT: none left
                break
            uuid = _call(lambda ev=ev: nv.nvmlDeviceGetUUID(ev.device))
            out.append({"uuid": uuid.decode() if isinstance(uuid, bytes) else uuid, "xid": int(ev.eventData)})
        return out

    def __exit__(self, *exc):
        if self.es is not None:
            try:
                self.nv.nvmlEventSetFree(self.es)
            except Exception:
                pass
        return False
