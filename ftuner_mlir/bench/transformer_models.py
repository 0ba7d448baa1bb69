"""The benchmark's end-to-end models from their transformers configs, random weights (nothing downloaded):
one input whose size varies -> the last hidden state. Text models take input_ids [B, T] (the paper's
T); the vision models pixels [B, 3, S, S] (S, the image side); the audio model a waveform [B, S]
(S samples). A process that also runs compiled code imports ftuner_mlir.torch before this module (torch
then shares the compiled code's OpenMP runtime); a baseline process (model_worker.py) imports torch as a
user would."""
from __future__ import annotations

import torch
from transformers import (BertConfig, BertModel, ConvNextConfig, ConvNextModel, DistilBertConfig, DistilBertModel,
                          GPT2Config, GPT2Model, LlamaConfig, LlamaModel, ResNetConfig, ResNetModel, RobertaConfig,
                          RobertaModel, T5Config, T5EncoderModel, T5Model, ViTConfig, ViTModel, Wav2Vec2Config,
                          Wav2Vec2Model)

from .model_demo import EXPORT_SIZE, MODELS

_BERT_LARGE = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096)
# LlamaConfig() is Llama-2-7B (27 GB in fp32, more than these machines hold): SmolLM-135M's shape instead,
# a released Llama-architecture model (RoPE, RMSNorm, gated MLP, 9 query heads over 3 key/value heads)
_SMOLLM_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, vocab_size=49152, max_position_embeddings=2048, rms_norm_eps=1e-5,
                    tie_word_embeddings=True)


class LastHidden(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        if isinstance(self.model, (GPT2Model, LlamaModel)):
            # without a mask, transformers' mask code runs a cumsum (tm_tensor.scan after torch-mlir)
            mask = torch.ones_like(ids)
            return self.model(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state
        if isinstance(self.model, ViTModel):           # any image side: position embeddings interpolated
            return self.model(ids, interpolate_pos_encoding=True).last_hidden_state
        if isinstance(self.model, (ResNetModel, ConvNextModel, Wav2Vec2Model)):
            return self.model(ids).last_hidden_state
        if isinstance(self.model, T5Model):             # the decoder reads the source as its target
            return self.model(input_ids=ids, decoder_input_ids=ids).last_hidden_state
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
    "t5": (T5Config, {}, T5Model),                                                          # encoder-decoder
    "llama": (LlamaConfig, _SMOLLM_135M, LlamaModel),
    "vit": (ViTConfig, {}, lambda cfg: ViTModel(cfg, add_pooling_layer=False)),          # ViT-B/16
    "resnet": (ResNetConfig, {}, ResNetModel),                                              # ResNet-50
    "convnext": (ConvNextConfig, {}, ConvNextModel),                                        # ConvNeXt-T
    "wav2vec2": (Wav2Vec2Config, {}, Wav2Vec2Model),                                        # wav2vec2-base
}
# config class -> (its field of layers, its field of the hidden size)
_FIELDS = {BertConfig: ("num_hidden_layers", "hidden_size"), RobertaConfig: ("num_hidden_layers", "hidden_size"),
           GPT2Config: ("n_layer", "n_embd"), DistilBertConfig: ("n_layers", "dim"), T5Config: ("num_layers", "d_model"),
           LlamaConfig: ("num_hidden_layers", "hidden_size"), ViTConfig: ("num_hidden_layers", "hidden_size"),
           Wav2Vec2Config: ("num_hidden_layers", "hidden_size")}
# the sizes an image or waveform may take, as torch.export dims: ViT's side a multiple of its patch,
# ResNet's of its total stride 32, wav2vec2's of its feature encoder's stride 320 (the strided convs'
# output lengths stay exact)
_SIZE_STEP = {"vit": 16, "resnet": 32, "convnext": 32, "wav2vec2": 320}
_SIZE_BOUNDS = {"vit": (2, 32), "resnet": (2, 16), "convnext": (2, 16), "wav2vec2": (2, 1000)}
_PER_STAGE = (ResNetConfig, ConvNextConfig)      # depths and widths per stage


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
    if kind in ("resnet", "convnext"):
        raise ValueError(f"{kind}: its depth is per stage (its config's depths), not one number of layers")
    return {_FIELDS[_FAMILIES[kind][0]][0]: depth}


def layers(cfg) -> int:
    return sum(cfg.depths) if isinstance(cfg, _PER_STAGE) else getattr(cfg, _FIELDS[type(cfg)][0])


def hidden(cfg) -> int:
    return cfg.hidden_sizes[-1] if isinstance(cfg, _PER_STAGE) else getattr(cfg, _FIELDS[type(cfg)][1])


def _input(kind: str, cfg, batch: int, size, generator) -> torch.Tensor:
    """A batch of token ids (size: T), audio (size: samples) or images (size: a side, or (h, w))."""
    if kind in ("vit", "resnet", "convnext"):
        h, w = size if isinstance(size, tuple) else (size, size)
        return torch.randn(batch, 3, h, w, generator=generator)
    if kind == "wav2vec2":
        return torch.randn(batch, size, generator=generator)
    return torch.randint(0, cfg.vocab_size, (batch, size), generator=generator)


def inputs(kind: str, cfg, batch: int, sizes, seed: int) -> list[torch.Tensor]:
    """One input per size, the same for every process that measures this model."""
    generator = torch.Generator().manual_seed(seed + 1)
    return [_input(kind, cfg, batch, size, generator) for size in sizes]


def example_and_dims(kind: str, cfg, batch: int, sizes, seed: int) -> tuple:
    """(example args, dynamic_shapes) of the one compilation that serves every size. An image is
    exported at a size other than the config's (and not square), so the trace keeps the position
    embeddings' interpolation; its sides vary independently."""
    generator = torch.Generator().manual_seed(seed)
    if kind in _SIZE_STEP:
        step, (low, high) = _SIZE_STEP[kind], _SIZE_BOUNDS[kind]
        high = max(high, -(-max(sizes) // step))
        if kind == "wav2vec2":
            return (_input(kind, cfg, batch, EXPORT_SIZE[kind], generator),), \
                ({1: step * torch.export.Dim("frames", min=low, max=high)},)
        h, w = EXPORT_SIZE[kind]
        dims = {2: step * torch.export.Dim("h", min=low, max=high), 3: step * torch.export.Dim("w", min=low, max=high)}
        return (_input(kind, cfg, batch, (h, w), generator),), (dims,)
    t = EXPORT_SIZE["text"]
    return (_input(kind, cfg, batch, t, generator),), ({1: torch.export.Dim("T", min=2, max=max(max(sizes), t))},)
