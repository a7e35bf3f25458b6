"""BERT-Large inference (article 000, section 3.2) and training (article 001, section 2.1).

Both build the model from a ``BertConfig`` with bert-large-uncased's values and
random weights (no hub is reachable, and the weights do not change the speed);
the inputs are random token ids.  ``seed`` is the articles' code with the
library's defaults; every other variant is one named tuning tip.

transformers 4.x and 5.x both accept ``attn_implementation`` through
``Model._from_config``; what the library chose for ``seed`` is stored in extra().
"""

from __future__ import annotations

from gpuarena.store.figures import Name, Text
from gpuarena.workloads import quant_rungs
from gpuarena.workloads.facts import first_int
from gpuarena.workloads.figures import Quantized
from gpuarena.workloads.resnet50_train.spec import COMPILE_MODES
from gpuarena.workloads.spec import Param, WorkloadSpec, activation_traffic

# bert-large-uncased's config.json (huggingface.co/google-bert/bert-large-uncased):
# 24 layers, hidden 1024, 16 heads, intermediate 4096, vocab 30522, 512 positions.
LARGE = {"layers": 24, "hidden": 1024, "heads": 16, "ffn": 4096}
VOCAB = 30522
MAX_POSITIONS = 512
MLM_SHARE = 0.15  # BERT paper (Devlin et al. 2019, 3.1): 15% of tokens are masked
# Why "encoder" is the default scope: traced as a whole (torch.compile(model)), transformers
# 5.17's BertModel cannot see that the all-ones mask may be dropped (masking_utils skips that
# check while tracing), so it hands SDPA a materialised 4-D mask and the flash kernel is
# ruled out; attention then stores B x heads x S x S scores (+1 GiB at batch 64 on an H200,
# and slower than eager).  Compiling bert.encoder leaves the mask to eager code, which passes
# None, and SDPA keeps its flash kernel.  tests/workloads pin which mask the graph receives.
COMPILE_SCOPES = ("encoder", "model")


def arch_params(default_seq: int, default_batch: int) -> tuple[Param, ...]:
    """The parameters both BERT workloads share; tiny values run in seconds on a CPU."""
    return (
        Param("batch_size", int, default_batch, "sequences per step", tiny=2, min=1, max=65536),
        Param("seq_len", int, default_seq, "tokens per sequence", tiny=16, min=1, max=MAX_POSITIONS),
        Param("layers", int, LARGE["layers"], "encoder layers (bert-large: 24)", tiny=2, min=1, max=256),
        Param("hidden", int, LARGE["hidden"], "hidden size (bert-large: 1024)", tiny=64, min=8, max=65536),
        Param("heads", int, LARGE["heads"], "attention heads (bert-large: 16)", tiny=2, min=1, max=1024),
        Param("ffn", int, LARGE["ffn"], "feed-forward size (bert-large: 4096)", tiny=128, min=8, max=262144),
        Param("compile_mode", str, "default", "torch.compile mode of the compile variant", choices=COMPILE_MODES),
        Param("compile_scope", str, "encoder", "what the compile variants compile: the encoder stack "
              "(the attention mask is built outside the graph) or the whole model, as article 001 did",
              choices=COMPILE_SCOPES),
    )


def encoder_flops(p: dict) -> float:
    """Forward FLOPs of the encoder for one sequence (multiply-add = 2 FLOPs).

    Per layer and token: Q, K, V and output projections 4*H^2 MACs, the FFN 2*H*F
    MACs (Kaplan et al. 2020, table 1, "2 x non-embedding params per token");
    per layer and sequence the attention scores Q K^T and the context (scores V)
    cost S^2*H MACs each.  Embedding look-ups, softmax and LayerNorm are left out
    (under 1% at bert-large sizes).  At S=512: 0.335 TFLOP (DIGEST.md's rough ~0.37);
    tests pin this formula to FlopCounterMode with eager attention.
    """
    s, h, f, n = p["seq_len"], p["hidden"], p["ffn"], p["layers"]
    per_layer = 2 * s * (4 * h * h + 2 * h * f) + 2 * 2 * s * s * h
    return float(n * per_layer)


def bert_param_count(p: dict, pretraining: bool) -> int:
    """Trainable parameters of BertModel (pooler included) or BertForPreTraining, from the
    config alone: embeddings (word, position, 2 token types, LayerNorm), per layer the four
    attention projections, the FFN and two LayerNorms, the pooler; pretraining adds the MLM
    transform (dense + LayerNorm), the decoder bias (its weight is tied to the word
    embeddings) and the NSP classifier.  bert-large: 335,141,888 and 336,226,108, pinned by
    tests/workloads against the built models."""
    h, f, n = p["hidden"], p["ffn"], p["layers"]
    embeddings = (VOCAB + MAX_POSITIONS + 2) * h + 2 * h
    layer = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 2 * 2 * h
    total = embeddings + n * layer + (h * h + h)
    if pretraining:
        total += (h * h + h + 2 * h) + VOCAB + (2 * h + 2)
    return total


class BertFigures(Quantized):
    attn_implementation: Name = None
    flops_formula: Text = None


class _BertSpec(WorkloadSpec):
    item = "sequence"
    figures = BertFigures
    # Lambda's DLE PyTorch runs (SQuAD at 384 tokens): one encoder arithmetic for training and inference
    published_family, family_settings = "BERT-Large SQuAD fine-tuning (DLE PyTorch", {"seq_len": 384}
    axis = "batch_size"
    dominant_op = "matmul"
    exclusive = (frozenset({"fp32", "tf32", "amp-bf16", "amp-fp16", "bf16", "fp16"}), frozenset({"sdpa", "eager"}),
                 frozenset({"compile", "compile-max-autotune"}))
    default_warmup = 5
    default_steps = 10

    @classmethod
    def published_params(cls, setting: str) -> dict:
        return {"seq_len": first_int(setting)}

    @classmethod
    def bytes_per_item(cls, params: dict, element_bytes: int) -> float:
        """Per layer and token about 18 x hidden activation elements with fused attention (Q, K, V,
        context, output projection, two residual sums and LayerNorms, the FFN's input, GELU and
        output); the S x S scores are not counted (SDPA never writes them)."""
        p = params
        elements = p["layers"] * p["seq_len"] * 18 * p["hidden"]
        return activation_traffic(elements, element_bytes, cls.trains, cls.param_count(p), p["batch_size"])


class BertLargeInferSpec(quant_rungs.QuantRungs, _BertSpec):
    name = "bert-large-infer"
    runner = "gpuarena.workloads.bert.run:BertLargeInfer"
    version = 3     # 3: check() flags an output far from the FP32 reference (quant.output_flags)
    description = "HF BertModel (bert-large-uncased config), random token ids, torch.inference_mode()"
    source = "article 000, section 3.2"
    kind = "inference"
    published_as = ("BERT-Large inference (article 000 3.2, HF BertModel, inference_mode)",)
    params = arch_params(512, 64)
    variants = {
        "seed": "the article's code: FP32, the library's default attention, PyTorch defaults (matmul TF32 off)",
        "fp32": "true FP32: TF32 off for matmul and cuDNN",
        "tf32": "TF32 on (article 001's tip)",
        "amp-fp16": "autocast to float16 (the article's FP16 test)",
        "amp-bf16": "autocast to bfloat16",
        "fp16": "model and activations cast to float16 (no autocast)",
        "bf16": "model and activations cast to bfloat16 (no autocast)",
        "sdpa": "attn_implementation='sdpa' (flash / memory-efficient attention kernels)",
        "eager": "attn_implementation='eager' (explicit matmul-softmax-matmul)",
        "compile": "torch.compile (mode from compile_mode, scope from compile_scope); compile time recorded apart",
        **{r: quant_rungs.VARIANT_DOCS[r] + "; BERT: every linear layer (attention stays in the model's dtype)"
           for r in quant_rungs.RUNGS},
    }
    exclusive = _BertSpec.exclusive + (frozenset(quant_rungs.RUNGS),)
    flops_formula = "encoder (see bert.encoder_flops) + pooler 2*H^2"

    @classmethod
    def flops(cls, params: dict) -> float:
        # BertModel's pooler: one H x H dense on the [CLS] token.
        return encoder_flops(params) + 2.0 * params["hidden"] ** 2

    @classmethod
    def param_count(cls, params: dict) -> int:
        return bert_param_count(params, pretraining=False)


class BertLargeTrainSpec(_BertSpec):
    name = "bert-large-train"
    runner = "gpuarena.workloads.bert.run:BertLargeTrain"
    version = 2
    description = "HF BertForPreTraining (bert-large-uncased config), AdamW, synthetic MLM + NSP labels"
    source = "article 001, section 2.1"
    kind = "training"
    ddp_name = "bert-large"
    published_as = ("BERT-Large pre-training (LAMB, phase1/phase2)", "BERT-Large pre-training")
    # Batch 32: article 001 gives none; 32 x 512 tokens fits FP32 training with eager attention.
    params = arch_params(512, 32) + (
        Param("lr", float, 5e-5, "AdamW learning rate (the article's 5e-5)", min=0.0, max=1.0),
    )
    variants = {
        "seed": "the article's code without compile: FP32, default attention, AdamW (foreach)",
        "fp32": "true FP32: TF32 off for matmul and cuDNN",
        "tf32": "TF32 on (article 001's TF32 run)",
        "amp-bf16": "autocast to bfloat16",
        "amp-fp16": "autocast to float16 with a GradScaler (article 001's AMP run)",
        "sdpa": "attn_implementation='sdpa' (article 001's flash SDP tip)",
        "eager": "attn_implementation='eager'",
        "compile": "torch.compile (mode from compile_mode, scope from compile_scope)",
        "compile-max-autotune": "torch.compile(mode='max-autotune'), article 001's call "
                                "(its whole-model scope with --set compile_scope=model)",
        "grad-checkpointing": "recompute activations in backward (article 001's memory tip; costs speed)",
        "fused-adamw": "AdamW(fused=True): one kernel for the optimizer step",
    }
    flops_formula = "3 x (encoder + pooler 2H^2 + MLM transform 2SH^2 + MLM decoder 2SHV + NSP 4H)"

    @classmethod
    def flops(cls, params: dict) -> float:
        # Pretraining heads (BertForPreTraining): pooler H x H on [CLS]; the MLM head's
        # H x H transform and H x V decoder on every token (HF scores all positions,
        # not only the masked 15%); the NSP classifier H x 2.  Backward = 2 x forward.
        s, h = params["seq_len"], params["hidden"]
        heads = 2 * h * h + 2 * s * h * h + 2 * s * h * VOCAB + 2 * h * 2
        return 3.0 * (encoder_flops(params) + heads)

    @classmethod
    def param_count(cls, params: dict) -> int:
        return bert_param_count(params, pretraining=True)
