"""Model families beyond BERT and GPT-2, as a user brings them (transformers configs, tiny sizes, random
weights), every dim a serving system varies declared dynamic at once, one compilation each: decoders
with RoPE / RMSNorm / grouped-query attention, an encoder with relative position buckets, RoBERTa's
cumsum position ids, a ViT, a ResNet whose image sizes are multiples of 32, a ConvNeXt (depthwise
convolutions), Whisper's encoder (conv1d) and wav2vec2 (strided conv1d over audio whose length is a
multiple of 10, group norm). Each is checked against its float64 copy at shapes never exported,
1 and primes included."""
import copy

import numpy as np
import pytest

import ftuner_mlir.torch as ftorch      # before torch: one OpenMP runtime
import torch
import transformers as T
from torch.export import Dim

from .models import relative_error

TOLERANCE = 1e-4
TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=100)
BATCH = Dim("B", min=1, max=16)


class TextModel(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state


class RobertaWithoutMask(TextModel):
    def forward(self, ids):                # position ids from a cumsum over the padding mask
        return self.model(input_ids=ids).last_hidden_state


class Features(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).last_hidden_state


def _text(model, rng):
    example = torch.from_numpy(rng.integers(0, 100, (2, 8)))
    shapes = [(1, 1), (3, 7), (16, 128), (5, 61)]
    return model, example, {0: BATCH, 1: Dim("T", min=1, max=128)}, shapes, "ids"


def _llama(rng):
    return _text(TextModel(T.LlamaModel(T.LlamaConfig(**TEXT, num_key_value_heads=2))), rng)


def _t5_encoder(rng):
    config = T.T5Config(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=100)
    return _text(TextModel(T.T5EncoderModel(config)), rng)


def _distilbert(rng):
    config = T.DistilBertConfig(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=100)
    return _text(TextModel(T.DistilBertModel(config)), rng)


def _roberta(rng):
    model, example, dims, shapes, kind = _text(RobertaWithoutMask(T.RobertaModel(T.RobertaConfig(**TEXT))), rng)
    return model, example + 2, dims, [(b, t) for b, t in shapes if t <= 100], kind     # 2 + T <= 514 positions


def _vit(rng):
    config = T.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         image_size=32, patch_size=8)
    return Features(T.ViTModel(config)), _normal(rng, 2, 3, 32, 32), {0: BATCH}, [(1, 3, 32, 32), (7, 3, 32, 32)], "x"


def _resnet(rng):
    config = T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    dims = {0: BATCH, 2: 32 * Dim("h", min=2, max=4), 3: 32 * Dim("w", min=2, max=4)}
    return Features(T.ResNetModel(config)), _normal(rng, 2, 3, 64, 64), dims, [(1, 3, 64, 128), (3, 3, 96, 64)], "x"


def _convnext(rng):
    config = T.ConvNextConfig(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2)
    return Features(T.ConvNextModel(config)), _normal(rng, 2, 3, 64, 64), {0: BATCH}, [(1, 3, 64, 64), (5, 3, 64, 64)], "x"


def _whisper_encoder(rng):
    config = T.WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                             num_mel_bins=16, max_source_positions=50, decoder_layers=1, decoder_attention_heads=4,
                             decoder_ffn_dim=128, vocab_size=100, pad_token_id=0, bos_token_id=0, eos_token_id=0,
                             decoder_start_token_id=0)
    return Features(T.WhisperModel(config).encoder), _normal(rng, 2, 16, 100), {0: BATCH}, \
        [(1, 16, 100), (3, 16, 100)], "x"


def _wav2vec2(rng):
    config = T.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                              conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_feat_extract_layers=2,
                              num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    dims = {0: BATCH, 1: 10 * Dim("L", min=100, max=1000)}
    return Features(T.Wav2Vec2Model(config)), _normal(rng, 2, 4000), dims, [(1, 1000), (3, 5230), (2, 9990)], "x"


def _normal(rng, *shape):
    return torch.from_numpy(rng.standard_normal(shape).astype("float32"))


FAMILIES = {"llama": _llama, "t5-encoder": _t5_encoder, "distilbert": _distilbert, "roberta": _roberta,
            "vit": _vit, "resnet": _resnet, "convnext": _convnext, "whisper-encoder": _whisper_encoder,
            "wav2vec2": _wav2vec2}


@pytest.mark.parametrize("family", FAMILIES)
def test_family_with_its_dims_dynamic(family, rng):
    torch.manual_seed(0)
    model, example, dims, shapes, kind = FAMILIES[family](rng)
    model = model.eval()
    compiled = ftorch.compile(model, (example,), dynamic_shapes=(dims,))
    reference = copy.deepcopy(model).double()
    for shape in shapes:
        x = torch.from_numpy(rng.integers(3, 100, shape)) if kind == "ids" else _normal(rng, *shape)
        with torch.no_grad():
            expected = reference(x if kind == "ids" else x.double())
        got = compiled(x)
        assert got.shape == expected.shape and got.dtype == torch.float32
        assert relative_error(got, expected) < TOLERANCE, (family, shape)


def test_a_derived_dim_takes_only_its_multiples(rng):
    model, example, dims, _, _ = _wav2vec2(rng)
    compiled = ftorch.compile(model.eval(), (example,), dynamic_shapes=(dims,))
    with pytest.raises(ValueError, match=r"input #0 dim 1 is 1235, not one of 1000, 1010, 1020, \.\.\."):
        compiled(_normal(rng, 2, 1235))
