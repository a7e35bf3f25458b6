"""What a flag means, said once where the flag first appears (console and report)."""

from __future__ import annotations

from gpuarena.store.flags import FlagKind
from gpuarena.store.result import Result

NOISY_TINY = ("noisy: tiny cases on a CPU check that the install works, not how fast anything is; "
              "their spread is high and they are not for comparing (run on a GPU at full size for that)")
NAN = ("NaN: the article's recipe diverges (ResNet-50's `loss = output.sum()` at lr 0.1 turns to NaN), "
       "and a diverging run can be faster than a finite one; for a finite loss run "
       "`gpuarena run -w resnet50-train --set loss=cross-entropy`")


def is_noisy(r: Result) -> bool:
    return any(f.kind is FlagKind.noisy for f in r.flags)


def results_notes(results: list[Result]) -> list[str]:
    """The notes a set of results needs: one per flag present, in the order flags are shown."""
    out = []
    if any(is_noisy(r) and r.size == "tiny" and r.device == "cpu" for r in results):
        out.append(NOISY_TINY)
    if any(f.kind is FlagKind.nan for r in results for f in r.flags):
        out.append(NAN)
    return out
