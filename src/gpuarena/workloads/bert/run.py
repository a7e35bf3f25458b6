"""The BERT workloads' bodies: the model, setup and step (their facts are in spec.py)."""

from __future__ import annotations

import torch

from gpuarena.store.flags import nan_flag
from gpuarena.workloads import quant, quant_rungs
from gpuarena.workloads.base import Workload, apply_math_mode, autocast_dtype, backward_and_step
from gpuarena.workloads.bert.spec import (
    MAX_POSITIONS,
    MLM_SHARE,
    VOCAB,
    BertLargeInferSpec,
    BertLargeTrainSpec,
    _BertSpec,
)


def build_config(p: dict):
    from transformers import BertConfig

    if p["hidden"] % p["heads"]:
        raise ValueError(f"hidden={p['hidden']} is not a multiple of heads={p['heads']}")
    return BertConfig(vocab_size=VOCAB, hidden_size=p["hidden"], num_hidden_layers=p["layers"],
                      num_attention_heads=p["heads"], intermediate_size=p["ffn"],
                      max_position_embeddings=MAX_POSITIONS)


def make_model(cls, p: dict, variants: frozenset[str]):
    """The model as the recipe asks: library default attention for seed, else sdpa/eager."""
    config = build_config(p)
    for impl in ("sdpa", "eager"):
        if impl in variants:
            return cls._from_config(config, attn_implementation=impl)
    return cls(config)


def attn_impl(model) -> str:
    return str(getattr(model.config, "_attn_implementation", None) or "unknown")


class _Bert(_BertSpec, Workload):
    def random_ids(self):
        bs, s = self.p["batch_size"], self.p["seq_len"]
        return torch.randint(0, VOCAB, (bs, s), device=self.device)

    def compile_if_asked(self, model):
        """torch.compile per the variant: the encoder in place (default scope) or the whole model."""
        v = self.ctx.variants
        if "compile-max-autotune" in v:
            mode = "max-autotune"
        elif "compile" in v:
            mode = None if self.p["compile_mode"] == "default" else self.p["compile_mode"]
        else:
            return model
        if self.p["compile_scope"] == "model":
            return torch.compile(model, mode=mode)
        base = getattr(model, "bert", model)   # BertForPreTraining wraps the BertModel as .bert
        base.encoder = torch.compile(base.encoder, mode=mode)
        return model

    def extra(self) -> dict:
        return {"attn_implementation": self.attn, "flops_formula": self.flops_formula}


class BertLargeInfer(BertLargeInferSpec, _Bert):
    def setup(self) -> None:
        from transformers import BertModel

        v = self.ctx.variants
        rung = quant_rungs.rung_of(v)
        if rung:
            quant.require(rung, self.device)
        apply_math_mode(v)
        model = make_model(BertModel, self.p, v).to(self.device).eval()
        self.ids = self.random_ids()
        self.ref = quant.fp32_reference(model, lambda m: m(input_ids=self.ids).last_hidden_state)
        if "fp16" in v:
            model = model.half()
        elif "bf16" in v:
            model = model.to(torch.bfloat16)
        self.attn = attn_impl(model)
        self.amp = autocast_dtype(v)
        self.quant = quant.quantize(model, rung) if rung else None
        self.model = self.compile_if_asked(model)
        self.out = None

    @torch.inference_mode()
    def step(self) -> None:
        with torch.autocast(self.device.type, dtype=self.amp, enabled=self.amp is not None):
            self.out = self.model(input_ids=self.ids).last_hidden_state

    def check(self) -> list:
        return quant.output_flags(self.ref, self.out, logits=False)

    def extra(self) -> dict:
        out = super().extra()
        out.update(self.quant or {})
        if self.out is not None:
            out["accuracy"] = quant.agreement(self.ref, self.out, logits=False)
        return out


class BertLargeTrain(BertLargeTrainSpec, _Bert):
    def setup(self) -> None:
        from transformers import BertForPreTraining

        v = self.ctx.variants
        apply_math_mode(v)
        model = make_model(BertForPreTraining, self.p, v).to(self.device).train()
        if "grad-checkpointing" in v:
            model.gradient_checkpointing_enable()
        self.attn = attn_impl(model)
        self.opt = torch.optim.AdamW(model.parameters(), lr=self.p["lr"], fused=True if "fused-adamw" in v else None)
        self.amp = autocast_dtype(v)
        self.scaler = torch.amp.GradScaler(self.device.type) if "amp-fp16" in v else None
        self.ids = self.random_ids()
        masked = torch.rand(self.ids.shape, device=self.device) < MLM_SHARE
        self.mlm_labels = torch.where(masked, self.ids, torch.full_like(self.ids, -100))
        self.nsp_labels = torch.randint(0, 2, (self.p["batch_size"],), device=self.device)
        self.model = self.compile_if_asked(model)
        self.loss = None

    def step(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        with torch.autocast(self.device.type, dtype=self.amp, enabled=self.amp is not None):
            loss = self.model(input_ids=self.ids, labels=self.mlm_labels, next_sentence_label=self.nsp_labels).loss
        backward_and_step(loss, self.opt, self.scaler)
        self.loss = loss

    def check(self) -> list:
        if self.loss is not None and not torch.isfinite(self.loss.detach()).item():
            return [nan_flag("loss turned to NaN/inf")]
        return []
