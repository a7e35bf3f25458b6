"""The figures each built-in workload stores in ``extra``, one model per workload (its class
names it: ``figures = ...``), torch-free so that the store types every stored key without
loading a workload.  The runner's own keys are in ``Figures`` (store/figures.py); a field's
type says what the figure is and bounds it.  store/extra.py composes these models into the
one model every stored result is read with."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from gpuarena.store.checks import (MAX_DEPTH_PARAMS, MAX_PARAM_STR, MAX_PARAMS_CHARS, valid_bounded, valid_name,
                                   valid_number)
from gpuarena.store.figures import (Bytes, Count, Figures, Ms, Name, Ranks, Rate, Ratio, Record, Records, Seconds,
                                    Share, Text, TFlops, within)


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
Batch = Annotated[Optional[int], Field(ge=1, le=1 << 40)]


class Quantized(Figures):
    """workloads/quant.py: what a quantization rung did, and how far its output lies from FP32's."""

    quantization: Text = None
    quantized_layers: Record = None
    torchao_accuracy: Text = None
    accuracy: Record = None


class Capacity(Figures):
    """workloads/capacity.py: the largest batch that fits (max-batch searches)."""

    max_batch: Optional[int] = Field(None, ge=0, le=1 << 40)
    tries: Records = None
    capped: Optional[bool] = None


class ResNet50TrainFigures(Figures):
    optimizer: Name = None
    cudnn_benchmark: Optional[bool] = None


class ResNet50InferFigures(Quantized):
    deployment: Name = None
    dtype: Name = None
    build_s: Seconds = None
    request: Text = None
    package_bytes: Bytes = None
    fused_convs: Count = None
    instances: Count = None
    per_instance: Records = None
    instance_latency_ms_median: Ms = None


class BertFigures(Quantized):
    attn_implementation: Name = None
    flops_formula: Text = None


class SD15Figures(Capacity):
    attn_processors: Optional[list[str]] = Field(None, max_length=1000)
    batch: Batch = None
    unet_calls_per_image: Count = None
    weights: Text = None
    dtype: Name = None
    search_steps: Count = None
    latency_limit_s: Seconds = None
    max_batch_within_latency: Count = None
    latency_tries: Records = None


class MatmulFigures(Figures):
    sets: Count = None
    shape: Optional[list[Optional[int]]] = Field(None, max_length=8)    # [m, n, k]
    note: Text = None


class MemBandwidthFigures(Figures):
    bytes_per_copy: Bytes = None
    counted: Text = None


class HostCopyFigures(Figures):
    bytes_per_copy: Bytes = None
    pinned: Optional[bool] = None


class CollectiveFigures(Figures):
    op: Name = None
    size_bytes: Bytes = None
    dtype: Name = None
    bus_factor: Ratio = None
    result_check: Name = None
    time_per_call_s: Seconds = None
    algbw_gbs: Rate = None
    busbw_gbs: Rate = None


class Communication(Figures):
    """Communication per step of a multi-rank training job (measure/profile.py)."""

    comm_exposed_s: Seconds = None
    comm_total_s: Seconds = None
    comm_exposed_share: Share = None


class DDPFigures(Communication):
    """ddp-train; the wrapped workload's own figures come with it (DDPTrain.figures_for)."""

    model: Name = None
    inner_workload: Name = None
    inner_params: Params = None
    accum_steps: Optional[int] = Field(None, ge=1, le=1_000_000)
    step_sync_s: Seconds = None
    step_nosync_s: Seconds = None
    overlap_fraction: Share = None


class LLMTrainFigures(Communication):
    shape: Name = None                       # the model shape's name, or the hf_config file
    params_total: Count = None
    params_non_embedding: Count = None
    parallel: Name = None
    dp_degree: Ranks = None
    tp_degree: Ranks = None
    mesh_shape: Optional[list[int]] = Field(None, max_length=8)
    fp8_linears: Count = None
    fused_adamw: Optional[bool] = None
    loss_first: Optional[float] = None
    loss_last: Optional[float] = None
    flops_formula: Text = None
    executed_precision: Record = None
    comm_profiled_s: Seconds = None
    comm_method: Text = None
    tokens_per_s_per_gpu: Rate = None


class LLMServeFigures(Capacity):
    batch: Batch = None
    cache: Name = None
    prefill: Name = None
    decode: Name = None
    projections: Name = None
    decode_attention: Name = None
    inductor: Record = None
    dtype: Name = None
    quantization: Text = None
    matvec: Text = None        # the gemv variant: which layers llm/gemv.py's kernel took
    params: Annotated[Optional[float], within(0.0, 1e15)] = None     # the model's parameter count
    weights_bytes: Bytes = None
    kv_cache_bytes: Bytes = None
    requests_measured: Count = None
    slo_ms: Ms = None
    cudagraph_skips: Count = None
    # llm/flops.py decode_figures: what the medians of TTFT and time per token come to
    ttft_s: Seconds = None
    prefill_tokens_per_s: Rate = None
    prefill_tflops: TFlops = None
    tpot_ms_median: Ms = None
    tpot_ms_p99: Ms = None
    decode_tokens_per_s: Rate = None
    decode_context_mean: Ratio = None
    kv_cache_live_bytes: Bytes = None
    decode_bytes_per_step: Ratio = None
    decode_bandwidth_gbs: Rate = None
    bytes_model: Text = None
    decode_profile: Record = None

    @model_validator(mode="after")
    def _decode_has_prefill(self):
        """A serving result's decode figures come with the prefill and batch they were timed at
        (workloads/llm/serve.py writes them together; the Serving section reads them together)."""
        if self.tpot_ms_median is not None and (self.ttft_s is None or self.batch is None):
            raise ValueError("tpot_ms_median without ttft_s and batch (a serving result's figures come together)")
        return self


class Spread(BaseModel):
    """Mean and percentiles of a latency in milliseconds (workloads/endpoint/metrics.py spread_ms)."""

    model_config = ConfigDict(extra="allow", strict=True)
    mean: Ms = None
    p50: Ms = None
    p90: Ms = None
    p99: Ms = None


class EndpointFigures(Figures):
    engine: Name = None
    model: Name = None
    api: Name = None
    endpoint: Text = None
    server_local: Optional[bool] = None
    server_gpus: Ranks = None
    served_models: Optional[list[str]] = Field(None, max_length=100)
    rate_requests_per_s: Rate = None
    concurrency: Ranks = None                 # requests in flight (None: no cap)
    warmup: Record = None
    metrics_definition: Text = None
    sweep: Record = None
    # workloads/endpoint/metrics.py summarize
    requests: Count = None
    completed: Count = None
    failed: Count = None
    errors: Optional[dict[str, int]] = None
    duration_s: Seconds = None
    output_tokens: Count = None
    prompt_tokens: Count = None
    tokens_from: Optional[list[str]] = Field(None, max_length=20)
    output_tokens_per_s: Rate = None
    requests_per_s: Rate = None
    total_tokens_per_s: Rate = None
    goodput_requests_per_s: Rate = None
    goodput_tokens_per_s: Rate = None
    slo_attainment: Share = None
    slo_ttft_ms: Ms = None
    slo_tpot_ms: Ms = None
    ttft_ms: Optional[Spread] = None
    tpot_ms: Optional[Spread] = None
    itl_ms: Optional[Spread] = None
    e2e_ms: Optional[Spread] = None
    passes: Records = None
    requests_stored_with_gaps: Optional[bool] = None
    request_records: Records = None


class PublishedFigures(Figures):
    """A published row (data/published.py): what its source said, as it said it."""

    gpu_text: Name = None
    software: Name = None
    note: Text = None
    engine: Name = None
    published_workload: Text = None
    metric: Name = None
    value: Any = None
    published_unit: Name = None


BUILT_IN = (ResNet50TrainFigures, ResNet50InferFigures, BertFigures, SD15Figures, MatmulFigures,
            MemBandwidthFigures, HostCopyFigures, CollectiveFigures, DDPFigures, LLMTrainFigures,
            LLMServeFigures, EndpointFigures, PublishedFigures)
