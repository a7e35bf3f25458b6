"""A workload's figures: the typed model of what it stores in a result's ``extra``.

Each workload class names its model (``figures``, a subclass of ``Figures``): a built-in's lies
beside its spec (workloads/<name>/spec.py, torch-free), a plugin's beside its class.  ``Figures``
itself holds the keys the runner adds to every result (timings of the case, memory, telemetry
reasons, ranks, processes).  The store sits below the workloads and imports none: the workloads
registry hands it, when imported, the lookup from a workload's name to its model (``read_with``),
and the store reads each result with ``model_for`` its workload.

Where a model is applied (the policy for keys a model does not declare):

* on write, a new measurement (runner/executor.py, ``check_written``): against the model of
  the workload that made it, every key declared and of its type; a wrong type or an undeclared
  key refuses the result with one line naming both (the measurement is kept in a file);
* on read and import (``model_for``: its own workload's model, with what imports and older
  versions left, ``Imported``, and a published row's ``PublishedFigures``): each declared key of
  its type; an undeclared key (one an older gpuarena wrote, or a plugin's not installed here) is
  kept as stored and noted (``Result.undeclared``, ``Store.undeclared``; ``import`` warns in one
  line), so no database already written becomes unreadable.  A figure some model declares that a
  result's own model does not reads None (``r.extra.max_batch`` of a training result), so a reader
  that asks every result for one figure meets only values their workload typed.

The field types say what a figure is (a time, a rate, a share, a size, a name) and carry its
bounds, so a model is a list of names and meanings.
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Callable, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model

from gpuarena.store.checks import (MAX_DEPTH_PARAMS, MAX_PARAM_STR, MAX_PARAMS_CHARS, MAX_THROUGHPUT, finite,
                                   valid_bounded, valid_name, valid_number, valid_text)


def within(lo: float, hi: float) -> AfterValidator:
    def check(v, info):
        return valid_number(v, info.field_name or "figure", lo, hi)
    return AfterValidator(check)


Seconds = Annotated[Optional[float], within(0.0, 1e9)]
Ms = Seconds                                                   # a time in milliseconds
Rate = Annotated[Optional[float], within(0.0, MAX_THROUGHPUT)]    # items, tokens, requests or GB per second
Share = Annotated[Optional[float], within(0.0, 1e3)]          # may pass 1: a catalog peak below the executed one
TFlops = Annotated[Optional[float], within(0.0, 1e6)]
Ratio = Annotated[Optional[float], within(0.0, 1e30)]         # a non-negative quantity of its own unit
Bytes = Annotated[Optional[int], Field(ge=0, le=1 << 60)]
Count = Annotated[Optional[int], Field(ge=0, le=1 << 40)]
Ranks = Annotated[Optional[int], Field(ge=1, le=1_000_000)]
Name = Annotated[Optional[str], Field(max_length=200), AfterValidator(valid_name)]
Text = Annotated[Optional[str], Field(max_length=20_000), AfterValidator(valid_text)]
Record = Optional[dict[str, Any]]        # a nested record (bounded by the Result's size limits)
Records = Optional[list[dict[str, Any]]]


def valid_params(v: Optional[dict]) -> Optional[dict]:
    """A case's params: bounded, names without control characters, numbers finite and >= 0."""
    if v is None:
        return v
    valid_bounded(v, "params", MAX_PARAMS_CHARS, MAX_DEPTH_PARAMS)
    for k, x in v.items():
        valid_name(k)
        if isinstance(x, str):
            if len(x) > MAX_PARAM_STR:
                raise ValueError(f"params.{k} is longer than {MAX_PARAM_STR} characters")
            try:
                valid_name(x)
            except ValueError:
                raise ValueError(f"params.{k} contains a control character") from None
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            valid_number(x, f"params.{k}", 0.0, 1e18)   # sizes, counts, rates: none is negative
    return v


Params = Annotated[Optional[dict[str, Any]], AfterValidator(valid_params)]


# Every figure name a model declares (filled as models are defined): one a result lacks reads None.
_DECLARED: set[str] = set()


class ProcessMean(BaseModel):
    """One fresh process of a case measured with --processes N (runner/pool.py)."""

    model_config = ConfigDict(extra="allow", strict=True)
    throughput_mean: Rate = None
    repeats: Optional[int] = Field(None, ge=1, le=1_000_000)
    first_step_s: Rate = None


class Figures(BaseModel):
    """The keys the runner adds to every workload's figures; a workload's model subclasses it.
    Strict: "2" is not 2, 1 is not True."""

    model_config = ConfigDict(extra="allow", strict=True)
    # runner/measure_case.py, executor.py
    setup_s: Seconds = None
    first_step_s: Seconds = None
    wall_s: Seconds = None
    protocol: Count = None
    nan: Optional[bool] = None                 # a flag of kind nan (store/flags.py)
    peak_reserved_bytes: Bytes = None
    peak_rss_bytes: Bytes = None
    throttle_reasons: Optional[list[str]] = Field(None, max_length=64)    # NVML's names
    energy: Record = None      # the window's energy: counter and sampled joules, counter step, source used
    traceback: Text = None
    stderr_tail: Text = None
    # runner/pool.py: --processes N
    processes: Optional[list[ProcessMean]] = Field(None, max_length=100)
    process_means_cv: Ratio = None
    processes_disagree: Optional[bool] = None
    # runner/rank.py: N ranks
    world_size: Ranks = None
    node_rank: Optional[int] = Field(None, ge=0, le=1_000_000)
    per_gpu_throughput: Rate = None
    per_rank: Optional[list[dict[str, Any]]] = Field(None, max_length=100_000)
    failed_ranks: Optional[list[int]] = None
    host: Name = None
    env: Optional[dict[str, Optional[str]]] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs):
        super().__pydantic_init_subclass__(**kwargs)
        _DECLARED.update(cls.model_fields)

    def __getattr__(self, name: str):
        """A figure some workload's model declares and this result's does not: None, even when the
        row carries a value under that name (kept as stored, noted undeclared, never read as if this
        workload had typed it).  Another stored key is read as stored; any other name is an
        AttributeError, as a typo."""
        if name in _DECLARED:
            return None
        return super().__getattr__(name)


_DECLARED.update(Figures.model_fields)


class Imported(Figures):
    """What import (store/bundle.py) and older gpuarena versions left in ``extra``: read, never
    written by a measurement.  The derived figures were stored before they were computed when
    read (store/derived.py); analysis/rows/derived.py carries them into ``Result.derived``."""

    bundle_key: Annotated[Optional[str], Field(max_length=2200), AfterValidator(valid_name)] = None
    origin_run_id: Name = None
    origin_source: Name = None
    date: Name = None
    ceiling: Record = None
    share_of_ceiling: Share = None
    scaling_efficiency: Share = None
    scaling_baseline_id: Optional[int] = None
    scaling_n: Ranks = None
    scaling_efficiency_ci95: Optional[list[Optional[float]]] = None
    expected: Record = None
    mfu: Share = None                      # llm-train froze these before MFU was computed when read
    mfu_vs_bf16_peak: Share = None
    peak_tflops: TFlops = None
    bf16_peak_tflops: TFlops = None
    catalog_gpu: Name = None


class PublishedFigures(Figures):
    """A published row (analysis/rows/published.py): what its source said, as it said it."""

    gpu_text: Name = None
    software: Name = None
    note: Text = None
    engine: Name = None
    published_workload: Text = None
    metric: Name = None
    value: Any = None
    published_unit: Name = None


@functools.lru_cache(maxsize=None)
def compose(name: str, *models: type[Figures]) -> type[Figures]:
    """One model holding every key of ``models`` (their validators too): a key two models
    declare with different types takes either (llm-train's ``shape`` is a name, matmul's m, n, k)."""
    seen: dict[str, list] = {}
    for m in models:
        for key, f in m.model_fields.items():
            typ = Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation
            if all(repr(typ) != repr(t) for t in seen.setdefault(key, [])):
                seen[key].append(typ)
    either = {k: (Union[tuple(ts)], None) for k, ts in seen.items() if len(ts) > 1}
    return create_model(name, __base__=tuple(dict.fromkeys(models)), **either)


def undeclared(model: type[BaseModel], extra: dict) -> list[str]:
    """Keys of ``extra`` that ``model`` does not declare."""
    return [k for k in extra if k not in model.model_fields]


def check_written(workload: str, model: type[Figures], extra: dict) -> None:
    """A new measurement's figures against its workload's model: ValueError, one line, naming
    the figure and why (a wrong type, a value out of range, a key the model does not declare)."""
    from gpuarena.errors import pydantic_error_line

    extra = json.loads(json.dumps(finite(extra), default=str)) or {}   # as the store keeps it: inf, NaN as None
    try:
        model.model_validate(extra)
    except ValidationError as exc:
        raise ValueError(f"extra.{pydantic_error_line(exc)[:240]} (a figure of {workload})") from None
    extra_keys = undeclared(model, extra)
    if extra_keys:
        raise ValueError(f"extra.{', extra.'.join(extra_keys[:5])}: not declared by {workload}'s figures "
                         f"({model.__name__}; a workload declares what it stores in its `figures` model)")


# --- reading a stored result with its own workload's model ---------------------------------
# name, params -> the workload's figures model, or None (a workload this installation lacks).
# Handed in from above (workloads/registry.py, when imported): the store imports no workload.
_lookup: Optional[Callable[[str, dict], Optional[type[Figures]]]] = None


def read_with(lookup: Optional[Callable[[str, dict], Optional[type[Figures]]]]) -> None:
    """Install the lookup from a workload's name (and a result's params) to its figures model."""
    global _lookup
    _lookup = lookup


def model_for(workload: Optional[str], source: Optional[str] = None, params: Optional[dict] = None) -> type[Figures]:
    """The model a stored result's ``extra`` is read with: what imports and older versions left
    (``Imported``), a published row's own keys, and its workload's figures when this installation
    has the workload (else its keys are kept as stored, noted as undeclared)."""
    own = None
    if _lookup is not None and workload:
        try:
            own = _lookup(workload, params if isinstance(params, dict) else {})
        except Exception:  # noqa: BLE001 - a plugin's model that fails leaves its keys as stored, no more
            own = None
    if not (isinstance(own, type) and issubclass(own, Figures)):
        own = None
    models = (Imported, *((PublishedFigures,) if source == "published" else ()), *((own,) if own else ()))
    if len(models) == 1:
        return Imported
    return compose(f"{(own or PublishedFigures).__name__}Read", *models)


def declared(key: str) -> bool:
    """Whether any figures model defined so far declares ``key``."""
    return key in _DECLARED
