"""The paper's end-to-end models from their transformers configs, random weights (nothing downloaded):
input_ids [B, T] int64 -> last hidden state [B, T, H]. A process that also runs compiled code imports
ftuner_mlir.torch before this module (torch then shares the compiled code's OpenMP runtime); a
baseline process (model_worker.py) imports torch as a user would."""
from __future__ import annotations

import torch
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

from .model_demo import MODELS
_BERT_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)


class LastHidden(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        if isinstance(self.model, GPT2Model):
            # without a mask, transformers' mask code runs a cumsum (tm_tensor.scan after torch-mlir)
            mask = torch.ones_like(ids)
            return self.model(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
        return self.model(input_ids=ids).last_hidden_state


def build(kind: str, seed: int = 0, **config) -> tuple[LastHidden, object]:
    """(model in eval mode, its config); `config` overrides fields (num_hidden_layers / n_layer, ...)."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; choose from {', '.join(MODELS)}")
    torch.manual_seed(seed)
    if kind == "gpt2":
        cfg = GPT2Config(**config)
        return LastHidden(GPT2Model(cfg)).eval(), cfg
    cfg = BertConfig(**({**_BERT_LARGE, **config} if kind == "bert-large" else config))
    return LastHidden(BertModel(cfg, add_pooling_layer=False)).eval(), cfg


def layer_overrides(kind: str, depth: int | None) -> dict:
    """The config field that sets the number of layers to `depth` (none when depth is None)."""
    if not depth:
        return {}
    return {"n_layer": depth} if kind == "gpt2" else {"num_hidden_layers": depth}


def layers(cfg) -> int:
    return cfg.n_layer if isinstance(cfg, GPT2Config) else cfg.num_hidden_layers


def hidden(cfg) -> int:
    return cfg.n_embd if isinstance(cfg, GPT2Config) else cfg.hidden_size
