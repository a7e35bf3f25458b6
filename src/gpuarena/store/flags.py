"""Flags: why a figure deserves caution, each with a kind that code asks instead of reading
its text.  A flag is typed where it arises (a workload's check() returns Flag(kind=nan) for
a NaN; the statistics, the telemetry and the process pool set the fields that say noisy,
throttled, process-dependent); `flags_of` reads them off a typed Result, the
one place a result's flags are listed."""

from __future__ import annotations

import enum
from typing import Union

from pydantic import BaseModel, ConfigDict

CV_WARN = 0.05    # a spread above 5% of the mean is flagged (measure/stats.py writes the warning)
WRONG_COSINE = 0.9   # an output whose worst row's cosine with the FP32 reference is below this is wrong, not lossy


class FlagKind(str, enum.Enum):
    """What a flag says."""

    nan = "nan"
    noisy = "noisy"
    few_samples = "few_samples"
    throttled = "throttled"
    processes = "processes"
    teardown = "teardown"
    other = "other"


# the one-word form the report's tables show
WORDS = {FlagKind.nan: "NaN", FlagKind.noisy: "noisy", FlagKind.few_samples: "few repeats",
         FlagKind.throttled: "throttled", FlagKind.processes: "process-dependent"}


class Flag(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: FlagKind
    message: str

    @property
    def word(self) -> str:
        return WORDS.get(self.kind, self.message)


def nan_flag(message: str) -> Flag:
    """A workload's check(): the output or the loss stopped being finite."""
    return Flag(kind=FlagKind.nan, message=message)


def as_flag(x: Union[Flag, str]) -> Flag:
    """A check's finding: a Flag as it is; plain text is a flag of no known kind (never guessed from its words)."""
    return x if isinstance(x, Flag) else Flag(kind=FlagKind.other, message=str(x))


def flag_of(message: str) -> Flag:
    """The kind of a stored warning's text.  Only for telling the warnings that restate a typed
    field (the statistics' spread and repeats, throttling, NaN, processes) from the others."""
    low = message.lower()
    kind = (FlagKind.nan if "nan" in low else FlagKind.noisy if "spread" in low
            else FlagKind.few_samples if "samples of" in low else FlagKind.throttled if "throttl" in low
            else FlagKind.processes if "process-dependent" in low
            else FlagKind.teardown if "teardown" in low else FlagKind.other)
    return Flag(kind=kind, message=message)


def wrong_cosine(cos: float | None) -> str | None:
    """Why an output whose worst row has cosine ``cos`` with the FP32 model's output on the same input
    is wrong rather than lossy, or None.  Lossy rungs keep 0.998 or more (H200, session 8); a CUDA graph
    replaying over freed weights stored finite logits at cosine 0.00 (session 10)."""
    if cos is not None and cos >= WRONG_COSINE:
        return None
    shown = f"{cos:.2f}" if cos is not None else "not a number"
    return f"output is wrong: its worst row's cosine with the FP32 reference is {shown} (< {WRONG_COSINE})"


def wrong_output(r) -> str | None:
    """``wrong_cosine`` of a stored result, read from its stored accuracy (workloads/quant.py), or None
    where no accuracy was stored."""
    acc = getattr(r.extra, "accuracy", None)   # a workload's figure: the store may not know its model
    acc = acc if isinstance(acc, dict) else None
    return wrong_cosine(acc["cosine_min"]) if acc and "cosine_min" in acc else None


def diverged(r) -> bool:
    """The computation stopped being right: its output or loss not finite (typed when measured), or
    its output far from the FP32 reference.  Such a result is no speed record and has no cost."""
    return bool(r.extra.nan) or wrong_output(r) is not None


def flags_of(r) -> list[Flag]:      # r: a store.result.Result (which imports this module)
    """The flags of a result: from its typed fields, then the warnings those fields do not restate."""
    out = []
    thr = r.throughput
    if r.throttled:
        out.append(Flag(kind=FlagKind.throttled, message="throttled"))
    if thr is not None and thr.cv is not None and thr.cv > CV_WARN:
        out.append(Flag(kind=FlagKind.noisy, message=f"CV {thr.cv:.1%}"))
    if r.extra.nan:
        out.append(Flag(kind=FlagKind.nan, message="NaN"))
    elif (why := wrong_output(r)) is not None:
        out.append(Flag(kind=FlagKind.nan, message=why))
    if r.extra.processes_disagree:
        out.append(Flag(kind=FlagKind.processes, message="process-dependent"))
    typed = {FlagKind.throttled, FlagKind.noisy, FlagKind.nan, FlagKind.processes}   # restated above
    out += [f for f in map(flag_of, r.all_warnings) if f.kind not in typed]
    return out
