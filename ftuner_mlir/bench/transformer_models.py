"""The paper's end-to-end models from their transformers configs, random weights (nothing downloaded):
input_ids [B, T] int64 -> last hidden state [B, T, H]. A process that also runs compiled code imports
ftuner_mlir.torch before this module (torch then shares the compiled code's OpenMP runtime); a
baseline process (model_worker.py) imports torch as a user would."""
from __future__ import annotations

import torch
from transformers import (BertConfig, BertModel, DistilBertConfig, DistilBertModel, GPT2Config, GPT2Model,
                          RobertaConfig, RobertaModel, T5Config, T5EncoderModel)

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


# kind -> (config class, its default overrides, the model from a config); RoBERTa computes its position
# ids with a cumsum, T5's encoder has relative position buckets and RMS norms
_FAMILIES = {
    "bert": (BertConfig, {}, lambda cfg: BertModel(cfg, add_pooling_layer=False)),
    "bert-large": (BertConfig, _BERT_LARGE, lambda cfg: BertModel(cfg, add_pooling_layer=False)),
    "gpt2": (GPT2Config, {}, GPT2Model),
    "roberta": (RobertaConfig, {}, lambda cfg: RobertaModel(cfg, add_pooling_layer=False)),
    "distilbert": (DistilBertConfig, {}, DistilBertModel),
    "t5-encoder": (T5Config, {}, T5EncoderModel),
}
# config class -> (its field of layers, its field of the hidden size)
_FIELDS = {BertConfig: ("num_hidden_layers", "hidden_size"), RobertaConfig: ("num_hidden_layers", "hidden_size"),
           GPT2Config: ("n_layer", "n_embd"), DistilBertConfig: ("n_layers", "dim"), T5Config: ("num_layers", "d_model")}


def build(kind: str, seed: int = 0, **config) -> tuple[LastHidden, object]:
    """(model in eval mode, its config); `config` overrides fields (num_hidden_layers / n_layer, ...)."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; choose from {', '.join(MODELS)}")
    torch.manual_seed(seed)
    config_class, defaults, model = _FAMILIES[kind]
    cfg = config_class(**{**defaults, **config})
    return LastHidden(model(cfg)).eval(), cfg


def layer_overrides(kind: str, depth: int | None) -> dict:
    """The config field that sets the number of layers to `depth` (none when depth is None)."""
    if not depth:
        return {}
    return {_FIELDS[_FAMILIES[kind][0]][0]: depth}


def layers(cfg) -> int:
    return getattr(cfg, _FIELDS[type(cfg)][0])


def hidden(cfg) -> int:
    return getattr(cfg, _FIELDS[type(cfg)][1])
