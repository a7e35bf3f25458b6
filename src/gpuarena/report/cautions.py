"""Cautions grouped by what they change about a figure, read from a result's typed flags
(store/flags.py: the statistics, the telemetry's throttle reasons, a workload's NaN check and
the process pool set them where they arise), never from a warning's words.  A result at the
card's power cap is a card doing its job (its figure is the sustained speed), so it is not a
caution; a diverged run, a wide spread, too few repeats or a clock slowed by heat are, each
with what it means."""

from __future__ import annotations

from gpuarena.store.flags import FlagKind, flags_of

POWER_CAP = "sw_power_cap"        # NVML's reason name (measure/telemetry.py THROTTLE_BITS)
HEAT = "slowed by heat or power brake"
OTHER = ("other", "read the warning before using the figure")
SLOWED = {"hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"}   # NVML's names for heat and the brake
DROPPED = ("clock dropped (no reason given)", "the SM clock fell more than 10% below its mean in the timed "
                                              "window: compare with care")
INFO = ("at the power cap", "the card's normal limit under full load: the figure is its sustained speed")
KINDS = {   # flag kind -> (caution, what it changes), in the order they are shown
    FlagKind.nan: ("diverged (NaN)", "not a speed record: a diverging run can be faster than a finite one; "
                                     "never used for advice or the answer"),
    FlagKind.noisy: ("noisy (CV > 5%)", "a difference smaller than its interval is not a difference"),
    FlagKind.few_samples: ("few repeats", "the interval is wide: compare with care"),
    FlagKind.throttled: (HEAT, "below the card's sustained speed: re-run with better cooling before comparing"),
    FlagKind.processes: ("processes disagree", "the figure depends on the process: use the interval"),
}
ORDER = [*KINDS.values(), DROPPED, OTHER, INFO]


def at_power_cap_only(r) -> bool:
    """Throttled only by the power cap: the card at its normal limit, not a caution."""
    return bool(r.throttled) and (r.extra.throttle_reasons or []) == [POWER_CAP]


def shown_flags(r, flags: list[str]) -> list[str]:
    """A result's flags as a reader should see them: "throttled" left out when only the power cap did it."""
    return [f for f in flags if not (f == "throttled" and at_power_cap_only(r))]


def kinds_of(r) -> list[tuple[str, str]]:
    """The cautions of one result (each once): its flags' kinds, the power cap apart."""
    out = []
    for f in flags_of(r):
        k = _throttle_kind(r) if f.kind is FlagKind.throttled else KINDS.get(f.kind, OTHER)
        if k not in out:
            out.append(k)
    return out


def _throttle_kind(r) -> tuple[str, str]:
    reasons = set(r.extra.throttle_reasons or [])
    return (KINDS[FlagKind.throttled] if reasons & SLOWED else INFO if reasons == {POWER_CAP}
            else DROPPED if not reasons else OTHER)


def grouped(rows: list) -> dict[tuple[str, str], list]:
    """{(kind, what it changes): results carrying it}, kinds in ORDER, the power cap last."""
    out: dict[tuple[str, str], list] = {}
    for r in rows:
        for k in kinds_of(r):
            out.setdefault(k, []).append(r)
    return {k: out[k] for k in ORDER if k in out}


def caution_counts(rows: list) -> list[tuple[str, int]]:
    """[(kind, results)] for the kinds that change how a figure may be used (not the power cap)."""
    return [((SHORT.get(k[0], k[0]) if len(rs) > 1 else ONE.get(k[0], k[0])), len(rs))
            for k, rs in grouped(rows).items() if k != INFO]


SHORT = {"diverged (NaN)": "diverged runs (never shown or used here)", "few repeats": "with few repeats"}
ONE = {"diverged (NaN)": "diverged run (never shown or used here)", "few repeats": "with few repeats"}
