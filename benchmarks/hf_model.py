"""A Hugging Face Llama folder with random weights, of one of llm-serve's shapes, for `transformers serve`.

    python3 benchmarks/hf_model.py FOLDER SHAPE [DEVICE]      # SHAPE: llm/shapes.py SHAPES (llama-1b, ...)

The architecture is llm-serve's own (llm/shapes.py SHAPES: hidden size, layers, heads, KV heads,
FFN width, vocabulary, RoPE theta, RMSNorm epsilon, untied output head), so `transformers serve`
on this folder and `gpuarena run -w llm-serve --set shape=SHAPE` run the same model.  bf16 weights,
built on DEVICE (cuda: seconds for 8B).  The tokenizer is word-level (built with `tokenizers`,
nothing downloaded): endpoint-serve's prompt words are one token each, so a prompt of N words is N
tokens, and every other id of the vocabulary decodes to a word of its own.  The model has no
end-of-sequence token (eos_token_id None), so every request generates max_tokens, as llm-serve's
new_tokens and vLLM's ignore_eos (which transformers serve refuses) do.
"""

from __future__ import annotations

import sys
import time


def tokenizer(vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from gpuarena.workloads.endpoint.load import WORDS

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for w in WORDS:
        vocab.setdefault(w, len(vocab))
    if len(vocab) > vocab_size:
        raise SystemExit(f"vocabulary {vocab_size} is smaller than endpoint-serve's {len(vocab)} words")
    for i in range(len(vocab), vocab_size):       # every id decodes to a word
        vocab[f"w{i}"] = i
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")   # joins words with spaces
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    fast.chat_template = "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }} {% endfor %}assistant :"
    return fast


def build(folder: str, shape: str, device: str = "cpu") -> dict:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from gpuarena.workloads.llm.flops import param_counts
    from gpuarena.workloads.llm.shapes import SHAPES

    s = SHAPES[shape]
    cfg = LlamaConfig(vocab_size=s.vocab_size, hidden_size=s.dim, intermediate_size=s.ffn_dim,
                      num_hidden_layers=s.n_layers, num_attention_heads=s.n_heads, num_key_value_heads=s.n_kv_heads,
                      max_position_embeddings=s.max_seq_len, rms_norm_eps=s.norm_eps, tie_word_embeddings=False,
                      rope_parameters={"rope_type": "default", "rope_theta": s.rope_theta},
                      bos_token_id=1, eos_token_id=None, pad_token_id=0, dtype="bfloat16")
    t0 = time.perf_counter()
    tokenizer(s.vocab_size).save_pretrained(folder)
    torch.manual_seed(0)
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)        # built in bf16 (8B in fp32 first would be 32 GB more)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(cfg)
    finally:
        torch.set_default_dtype(before)
    model.generation_config.eos_token_id = None
    built = time.perf_counter() - t0
    model.save_pretrained(folder)
    n = sum(p.numel() for p in model.parameters())
    return {"folder": folder, "shape": shape, "parameters": n, "llm_serve_parameters": param_counts(s)[0],
            "build_s": round(built, 1), "save_s": round(time.perf_counter() - t0 - built, 1)}


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    info = build(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "cpu")
    print(" ".join(f"{k}={v}" for k, v in info.items()))
    if info["parameters"] != info["llm_serve_parameters"]:
        raise SystemExit("the Hugging Face model's parameter count differs from llm-serve's shape")
