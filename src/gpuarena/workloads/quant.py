"""Low-precision inference rungs (issue 23): torchao's quantisation applied to a built model, and
the accuracy proxy each rung measures against the unquantised FP32 model on the same inputs.

Three rungs, each torchao's stable inference workflow of that name (pytorch/ao
docs/source/workflows/inference.md):

- ``int8-weights``: ``Int8WeightOnlyConfig``: int8 weights, one scale per output channel; the matmul
  runs in the activations' dtype (the weights are dequantised inside it).  Fewer weight bytes only.
- ``int8-dynamic``: ``Int8DynamicActivationInt8WeightConfig``: int8 weights per channel and the
  activations quantised to int8 per token at run time; the matmul runs on the int8 tensor cores
  (``torch._int_mm``), its output rescaled.  Inductor's ``force_fuse_int_mm_with_mul`` is set so
  the rescale rides in the matmul's epilogue (torchao's recommended setting; its other ones,
  coordinate-descent tuning among them, are left off: the rung is the quantisation alone).
- ``fp8-dynamic``: ``Float8DynamicActivationFloat8WeightConfig`` with row-wise scales: float8 e4m3
  weights and activations, ``torch._scaled_mm`` on sm_89+ tensor cores.  Needs bf16 weights.

torchao quantises linear layers.  On the Hopper GPUs here its float8 convolution needs Blackwell
(``mslk``'s ``f8f8bf16_conv``, sm_100), so for ResNet-50 the 1x1 convolutions become linear
layers over the channels (``convs_as_linears``: exact, a 1x1 convolution is a matmul per pixel)
and those and the classifier are quantised; the 3x3 convolutions and the stem stay in the
model's dtype.  What each quantised recipe costs in accuracy: torchao measures it on
Llama-3.1-8B with lm-eval (wikitext perplexity, bf16 7.3315; float8 row-wise 7.4197; int8
weight-only 7.3451; int8 dynamic 7.4535; ``ACCURACY_NOTES``); gpuarena measures a proxy on the
workload itself at run time (``agreement``: the quantised model's output against the FP32
model's on the very inputs it was timed on), stored in ``extra.accuracy``.  The weights are
random, so the proxy says how far the arithmetic moves the output, not what a trained model
loses in accuracy: in a random BERT the sub-layers add little to the residual stream (weights of
standard deviation 0.02), so its error is smaller than a trained model's would be.
"""

from __future__ import annotations

import torch
from torch import nn

from gpuarena.errors import WorkloadSkipped
from gpuarena.store.flags import Flag, nan_flag, wrong_cosine
from gpuarena.workloads.precision import FP8_MIN_CAPABILITY

from gpuarena.workloads.quant_rungs import ACCURACY_NOTES, TORCHAO_ACCURACY, TORCHAO_HINT


def require(rung: str, device) -> None:
    """Skip, with the one-line cause, where the rung cannot run: before any model is built."""
    if rung == "fp8-dynamic":
        if device.type != "cuda":
            raise WorkloadSkipped(f"fp8-dynamic needs a CUDA GPU of compute capability "
                                  f"{FP8_MIN_CAPABILITY[0]}.{FP8_MIN_CAPABILITY[1]}+ (Ada, Hopper); this is a "
                                  f"{device.type.upper()}")
        cap = torch.cuda.get_device_capability(device)
        if tuple(cap) < FP8_MIN_CAPABILITY:
            raise WorkloadSkipped(f"fp8-dynamic needs compute capability 8.9+ (Ada, Hopper); "
                                  f"this GPU is {cap[0]}.{cap[1]}")
    try:
        import torchao  # noqa: F401
    except ImportError:
        raise WorkloadSkipped(f"{rung} needs torchao, which is not installed: {TORCHAO_HINT}") from None


def _config(rung: str):
    import torchao.quantization as q

    if rung == "int8-weights":
        return q.Int8WeightOnlyConfig(set_inductor_config=False)
    if rung == "int8-dynamic":
        torch._inductor.config.force_fuse_int_mm_with_mul = True
        return q.Int8DynamicActivationInt8WeightConfig(set_inductor_config=False)
    return q.Float8DynamicActivationFloat8WeightConfig(granularity=q.PerRow(), set_inductor_config=False)


def is_quantized(weight) -> bool:
    """torchao swaps a quantised layer's weight for a tensor subclass of its own."""
    return type(weight) not in (torch.Tensor, nn.Parameter)


@torch.no_grad()
def quantize(model: nn.Module, rung: str) -> dict:
    """Quantise every linear layer torchao accepts, in place; what was done, as extra() keys
    (``quantization``: one line, as llm-serve's; ``quantized_layers``: the counts)."""
    from torchao.quantization import quantize_

    import torchao

    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    config = _config(rung)
    quantize_(model, config)
    done = sum(is_quantized(m.weight) for m in linears)
    return {"quantization": f"torchao {torchao.__version__} {type(config).__name__}: {done} of {len(linears)} "
                            "linear layers",
            "quantized_layers": {"linears": len(linears), "quantized": done},
            "torchao_accuracy": f"{ACCURACY_NOTES[rung]} ({TORCHAO_ACCURACY})"}


class Conv1x1AsLinear(nn.Module):
    """A 1x1 convolution (groups 1, no padding) as a linear layer over the channels: the same
    arithmetic, in the form torchao quantises.  A stride takes every s-th pixel first.  On a
    channels-last input the permutes are views, so no copy is made."""

    def __init__(self, conv: nn.Conv2d):
        super().__init__()
        self.stride = conv.stride
        self.linear = nn.Linear(conv.in_channels, conv.out_channels, bias=conv.bias is not None,
                                device=conv.weight.device, dtype=conv.weight.dtype)
        self.linear.weight = nn.Parameter(conv.weight.detach().flatten(1), requires_grad=False)
        if conv.bias is not None:
            self.linear.bias = nn.Parameter(conv.bias.detach(), requires_grad=False)

    def forward(self, x):
        sh, sw = self.stride
        if sh > 1 or sw > 1:
            x = x[:, :, ::sh, ::sw]
        return self.linear(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def convs_as_linears(model: nn.Module) -> int:
    """Swap every plain 1x1 convolution for ``Conv1x1AsLinear``, in place; how many."""
    count = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if (isinstance(child, nn.Conv2d) and child.kernel_size == (1, 1) and child.groups == 1
                    and child.padding == (0, 0) and child.dilation == (1, 1)):
                setattr(parent, name, Conv1x1AsLinear(child))
                count += 1
    return count


@torch.inference_mode()
def fp32_reference(model: nn.Module, run) -> torch.Tensor:
    """``run(model)``'s output with IEEE FP32 math (TF32 off for the one call), on the host."""
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        return run(model).float().cpu()
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def agreement(ref: torch.Tensor, out: torch.Tensor, logits: bool) -> dict:
    """How far ``out`` lies from the FP32 reference on the same inputs (rows: the last dimension).

    rel_rms_error: ||out - ref|| / ||ref||; max_abs_error_rel: max |out - ref| / max |ref|;
    cosine_min: the worst row's cosine similarity.  For logits also top1_agreement, the share of
    rows whose arg-max class is the reference's, and top1_agreement_centered, the same on the logits
    less their batch mean: a random-weight ResNet-50 ranks one class first for every image, so the
    plain agreement says little and the centred one compares the part that differs per image."""
    ref, out = ref.float().reshape(-1, ref.shape[-1]), out.detach().float().cpu().reshape(-1, ref.shape[-1])
    diff = out - ref
    res = {"reference": "the same model in FP32 (TF32 off), same inputs",
           "rel_rms_error": float(diff.norm() / ref.norm().clamp_min(1e-30)),
           "max_abs_error_rel": float(diff.abs().max() / ref.abs().max().clamp_min(1e-30)),
           "cosine_min": float(torch.nn.functional.cosine_similarity(out, ref, dim=-1).min())}
    if logits:
        res["top1_agreement"] = float((out.argmax(-1) == ref.argmax(-1)).float().mean())
        cr, co = ref - ref.mean(0), out - out.mean(0)
        res["top1_agreement_centered"] = float((co.argmax(-1) == cr.argmax(-1)).float().mean())
    return res


def output_flags(ref: torch.Tensor | None, out: torch.Tensor | None, logits: bool) -> list[Flag]:
    """An inference workload's check(): its output not finite, or far from the FP32 model's on the same
    input.  Lossy rungs stay close (H200, session 8: FP8 0.9986, int8 0.9997 worst-row cosine); a wrong
    computation lands far off (session 10: a CUDA graph replaying over freed weights at batch 1 gave
    finite logits with cosine 0.00 and errors of 8e20), and a wrong output is no speed record."""
    if out is None:
        return []
    if not torch.isfinite(out.float()).all().item():
        return [nan_flag("output has NaN/inf")]
    if ref is not None and (why := wrong_cosine(agreement(ref, out, logits)["cosine_min"])):
        return [nan_flag(why)]
    return []
