"""``extra``: the figures a workload adds to its result.  Every key that analysis or the
report reads has a type here (a string "abc" where a time belongs is refused on import and
on write, never met by a report section); other keys pass, bounded in size."""

from __future__ import annotations

from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpuarena.store.checks import MAX_DEPTH_PARAMS, MAX_PARAM_STR, MAX_PARAMS_CHARS, MAX_THROUGHPUT, _bounded, _name, _number

class ProcessMean(BaseModel):
    """One fresh process of a case measured with --processes N (runner/pool.py)."""

    model_config = ConfigDict(extra="allow", strict=True)
    throughput_mean: Optional[float] = None
    repeats: Optional[int] = Field(None, ge=1, le=1_000_000)
    first_step_s: Optional[float] = None

    @field_validator("throughput_mean", "first_step_s")
    @classmethod
    def _finite(cls, v, info):
        return _number(v, info.field_name, 0.0, MAX_THROUGHPUT)


_SECONDS = ("wall_s", "setup_s", "first_step_s", "ttft_s", "comm_exposed_s", "comm_total_s", "time_per_call_s")
_MS = ("tpot_ms_median", "tpot_ms_p99")
_RATES = ("per_gpu_throughput", "prefill_tokens_per_s", "decode_tokens_per_s", "tokens_per_s_per_gpu",
          "tokens_per_s", "output_tokens_per_s", "goodput_tokens_per_s", "goodput_requests_per_s",
          "rate_requests_per_s")
_GBS = ("decode_bandwidth_gbs", "busbw_gbs", "algbw_gbs")
_SHARES = ("share_of_ceiling", "scaling_efficiency", "overlap_fraction", "comm_exposed_share", "mfu",
           "mfu_vs_bf16_peak", "slo_attainment")
_TFLOPS = ("prefill_tflops", "peak_tflops", "bf16_peak_tflops")
_BYTES = ("kv_cache_bytes", "kv_cache_live_bytes", "weights_bytes", "size_bytes", "peak_rss_bytes",
          "peak_reserved_bytes")
_NAMES = ("inner_workload", "model", "origin_run_id", "origin_source", "engine", "software", "op", "dtype",
          "cache", "prefill", "decode", "quantization", "catalog_gpu", "host", "date")


class Spread(BaseModel):
    """Mean and percentiles of a latency in milliseconds (workloads/endpoint/metrics.py spread_ms)."""

    model_config = ConfigDict(extra="allow", strict=True)
    mean: Optional[float] = None
    p50: Optional[float] = None
    p90: Optional[float] = None
    p99: Optional[float] = None

    @field_validator("mean", "p50", "p90", "p99")
    @classmethod
    def _ms(cls, v, info):
        return _number(v, info.field_name, 0.0, 1e12)


def _declare(names, annotation, default=None):
    return {n: (annotation, default) for n in names}


class Extra(BaseModel):
    """``extra``: the keys readers use are typed (strictly: "2" is not 2, 1 is not True);
    others pass, bounded in size.  A share of a peak may pass 1 (a catalog peak below the
    executed precision's), so its bound is a thousand, not one."""

    model_config = ConfigDict(extra="allow", strict=True)
    nan: Optional[bool] = None
    capped: Optional[bool] = None
    processes_disagree: Optional[bool] = None
    processes: Optional[list[ProcessMean]] = Field(None, max_length=100)   # --processes N: one entry each
    world_size: Optional[int] = Field(None, ge=1, le=1_000_000)
    node_rank: Optional[int] = Field(None, ge=0, le=1_000_000)
    accum_steps: Optional[int] = Field(None, ge=1, le=1_000_000)
    scaling_n: Optional[int] = Field(None, ge=1, le=1_000_000)
    batch: Optional[int] = Field(None, ge=1, le=1 << 40)
    max_batch: Optional[int] = Field(None, ge=0, le=1 << 40)
    inner_params: Optional[dict[str, Any]] = None
    server_gpus: Optional[int] = Field(None, ge=1, le=1_000_000)          # endpoint-serve: the server's GPUs
    concurrency: Optional[int] = Field(None, ge=1, le=1_000_000)          # endpoint-serve: requests in flight (None: no cap)
    throttle_reasons: Optional[list[str]] = Field(None, max_length=64)    # NVML's names (measure/telemetry.py)
    per_rank: Optional[list[dict[str, Any]]] = Field(None, max_length=100_000)   # runner/rank.py
    shape: Optional[Union[str, list[Optional[int]]]] = None   # llm-train: the model shape; matmul: [m, n, k]
    loss_first: Optional[float] = None                        # llm-train: the loss at the first and last step
    loss_last: Optional[float] = None
    params: Optional[float] = Field(None, ge=0, le=1e15)          # llm-serve: the model's parameter count
    failed: Optional[int] = Field(None, ge=0, le=1 << 40)        # endpoint-serve: requests that failed
    ttft_ms: Optional[Spread] = None                              # endpoint-serve: percentiles of each
    tpot_ms: Optional[Spread] = None
    itl_ms: Optional[Spread] = None
    e2e_ms: Optional[Spread] = None
    mesh_shape: Optional[list[int]] = Field(None, max_length=8)   # llm-train: the device mesh
    for _n in _SECONDS + _MS + _RATES + _GBS + _SHARES + _TFLOPS:
        __annotations__[_n] = "Optional[float]"
        locals()[_n] = None
    for _n in _BYTES:
        __annotations__[_n] = "Optional[int]"
        locals()[_n] = Field(None, ge=0, le=1 << 60)
    for _n in _NAMES:
        __annotations__[_n] = "Optional[str]"
        locals()[_n] = Field(None, max_length=200)
    del _n

    @field_validator(*_SECONDS, *_MS)
    @classmethod
    def _times(cls, v, info):
        return _number(v, info.field_name, 0.0, 1e9)

    @field_validator(*_RATES, *_GBS)
    @classmethod
    def _rates(cls, v, info):
        return _number(v, info.field_name, 0.0, MAX_THROUGHPUT)

    @field_validator(*_SHARES)
    @classmethod
    def _shares(cls, v, info):
        return _number(v, info.field_name, 0.0, 1e3)

    @field_validator(*_TFLOPS)
    @classmethod
    def _tflops(cls, v, info):
        return _number(v, info.field_name, 0.0, 1e6)

    @field_validator("inner_params")
    @classmethod
    def _inner(cls, v):
        return _params(v)

    _names = field_validator(*_NAMES)(_name)

    @model_validator(mode="after")
    def _decode_has_prefill(self):
        """A serving result's decode figures come with the prefill and batch they were timed at
        (workloads/llm/serve.py writes them together; the Serving section reads them together)."""
        if self.tpot_ms_median is not None and (self.ttft_s is None or self.batch is None):
            raise ValueError("tpot_ms_median without ttft_s and batch (a serving result's figures come together)")
        return self


def _params(v: Optional[dict]) -> Optional[dict]:
    if v is None:
        return v
    _bounded(v, "params", MAX_PARAMS_CHARS, MAX_DEPTH_PARAMS)
    for k, x in v.items():
        _name(k)
        if isinstance(x, str):
            if len(x) > MAX_PARAM_STR:
                raise ValueError(f"params.{k} is longer than {MAX_PARAM_STR} characters")
            try:
                _name(x)
            except ValueError:
                raise ValueError(f"params.{k} contains a control character") from None
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            _number(x, f"params.{k}", 0.0, 1e18)   # sizes, counts, rates: none is negative
    return v
