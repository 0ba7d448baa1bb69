"""Model families beyond BERT and GPT-2, as a user brings them (transformers configs, tiny sizes, random
weights), every dim a serving system varies declared dynamic at once, one compilation each: decoders
with RoPE / RMSNorm / grouped-query attention, T5 (encoder-decoder, relative position buckets), RoBERTa's
cumsum position ids, a ViT, a ResNet whose image sizes are multiples of 32, a ConvNeXt (depthwise
convolutions), a ViT at any image size (interpolated position embeddings; exported at its own size too), Whisper's encoder (conv1d) and wav2vec2 (strided conv1d over audio whose length is a
multiple of 10, group norm). Each is checked against its float64 copy at 5 or more shapes never
exported, 1 and primes included; three of them also through torch.compile(backend="ftuner")."""
import copy

import numpy as np
import pytest

import ftuner_mlir.torch as ftorch      # before torch: one OpenMP runtime
import torch
import transformers as T
from torch.export import Dim
from ftuner_mlir import compiler
from ftuner_mlir.torch import exporting

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


class EncoderDecoder(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, decoder_ids):
        return self.model(input_ids=ids, attention_mask=torch.ones_like(ids),
                          decoder_input_ids=decoder_ids).last_hidden_state


def _ids(rng, *shape):
    return torch.from_numpy(rng.integers(3, 100, shape))


def _normal(rng, *shape):
    return torch.from_numpy(rng.standard_normal(shape).astype("float32"))


TEXT_SHAPES = [(1, 1), (3, 7), (16, 128), (5, 61), (2, 97), (11, 2)]


def _text(model, rng):
    """(model, example args, dynamic_shapes, [args of each checked call])"""
    return model, (_ids(rng, 2, 8),), ({0: BATCH, 1: Dim("T", min=1, max=128)},), \
        [(_ids(rng, b, t),) for b, t in TEXT_SHAPES]


def _images(model, rng, example, dims, shapes):
    return model, (_normal(rng, *example),), (dims,), [(_normal(rng, *shape),) for shape in shapes]


def _llama(rng):
    return _text(TextModel(T.LlamaModel(T.LlamaConfig(**TEXT, num_key_value_heads=2))), rng)


def _t5(rng):
    """Encoder-decoder: batch, source and target lengths all dynamic."""
    config = T.T5Config(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4,
                        vocab_size=100, decoder_start_token_id=0, pad_token_id=0)
    dims = ({0: BATCH, 1: Dim("S", min=1, max=100)}, {0: BATCH, 1: Dim("T", min=1, max=100)})
    calls = [(_ids(rng, b, s), _ids(rng, b, t)) for b, s, t in ((1, 1, 1), (3, 7, 2), (5, 61, 13), (2, 100, 100),
                                                               (7, 3, 29))]
    return EncoderDecoder(T.T5Model(config)), (_ids(rng, 2, 8), _ids(rng, 2, 5)), dims, calls


def _distilbert(rng):
    config = T.DistilBertConfig(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=100)
    return _text(TextModel(T.DistilBertModel(config)), rng)


def _roberta(rng):
    model, example, dims, _ = _text(RobertaWithoutMask(T.RobertaModel(T.RobertaConfig(**TEXT))), rng)
    return model, example, dims, [(_ids(rng, b, t),) for b, t in TEXT_SHAPES if t <= 100]   # 2 + T <= 514 positions


def _vit(rng):
    config = T.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         image_size=32, patch_size=8)
    return _images(Features(T.ViTModel(config)), rng, (2, 3, 32, 32), {0: BATCH},
                   [(b, 3, 32, 32) for b in (1, 3, 7, 16, 13)])


class InterpolatingViT(Features):
    def forward(self, x):
        return self.model(x, interpolate_pos_encoding=True).last_hidden_state


def _vit_any_size(rng):
    """Image sizes dynamic: the position embeddings interpolated (bicubic) to the patch grid. Exported
    at a size other than the config's, so the trace takes the interpolation."""
    config = T.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                         image_size=32, patch_size=8)
    dims = {0: BATCH, 2: 8 * Dim("h", min=2, max=8), 3: 8 * Dim("w", min=2, max=8)}
    return _images(InterpolatingViT(T.ViTModel(config)), rng, (2, 3, 48, 64), dims,
                   [(1, 3, 32, 32), (3, 3, 48, 64), (2, 3, 64, 24), (5, 3, 16, 56), (1, 3, 40, 40)])


def _resnet(rng):
    config = T.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    dims = {0: BATCH, 2: 32 * Dim("h", min=2, max=4), 3: 32 * Dim("w", min=2, max=4)}
    return _images(Features(T.ResNetModel(config)), rng, (2, 3, 64, 64), dims,
                   [(1, 3, 64, 128), (3, 3, 96, 64), (5, 3, 128, 96), (1, 3, 96, 96), (2, 3, 128, 128)])


def _convnext(rng):
    config = T.ConvNextConfig(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2)
    dims = {0: BATCH, 2: 8 * Dim("h", min=2, max=16), 3: 8 * Dim("w", min=2, max=16)}    # total stride 8
    return _images(Features(T.ConvNextModel(config)), rng, (2, 3, 64, 48), dims,
                   [(1, 3, 32, 32), (3, 3, 64, 64), (2, 3, 40, 72), (5, 3, 16, 56), (1, 3, 128, 24)])


def _whisper_encoder(rng):
    config = T.WhisperConfig(d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                             num_mel_bins=16, max_source_positions=50, decoder_layers=1, decoder_attention_heads=4,
                             decoder_ffn_dim=128, vocab_size=100, pad_token_id=0, bos_token_id=0, eos_token_id=0,
                             decoder_start_token_id=0)
    return _images(Features(T.WhisperModel(config).encoder), rng, (2, 16, 100), {0: BATCH},
                   [(b, 16, 100) for b in (1, 3, 5, 7, 16)])


def _wav2vec2(rng):
    config = T.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                              conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_feat_extract_layers=2,
                              num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    dims = {0: BATCH, 1: 10 * Dim("L", min=100, max=1000)}
    return _images(Features(T.Wav2Vec2Model(config)), rng, (2, 4000), dims,
                   [(1, 1000), (3, 5230), (2, 9990), (5, 1370), (1, 2030)])


FAMILIES = {"llama": _llama, "t5": _t5, "distilbert": _distilbert, "roberta": _roberta, "vit": _vit, "vit-any-size": _vit_any_size,
            "resnet": _resnet, "convnext": _convnext, "whisper-encoder": _whisper_encoder, "wav2vec2": _wav2vec2}


def _double(value):
    return value.double() if value.is_floating_point() else value


@pytest.mark.parametrize("family", FAMILIES)
def test_family_with_its_dims_dynamic(family, rng):
    torch.manual_seed(0)
    model, example, dims, calls = FAMILIES[family](rng)
    model = model.eval()
    compiled = ftorch.compile(model, example, dynamic_shapes=dims)
    reference = copy.deepcopy(model).double()
    for args in calls:
        with torch.no_grad():
            expected = reference(*map(_double, args))
        got = compiled(*args)
        assert got.shape == expected.shape and got.dtype == torch.float32
        assert relative_error(got, expected) < TOLERANCE, (family, [tuple(a.shape) for a in args])


# families whose graph at a size of 1 is their general graph at that size (the same ops and arguments):
# Dynamo's size-1 graph is then served by the code compiled before (size_one.py). The others branch on the
# size (T5's decoder builds no causal mask for one token, a ViT skips its interpolation at its own image
# size) or bring new graphs for other reasons (duck-sized image sides), and compile what differs.
SIZE_ONE_REUSED = ("llama", "distilbert", "roberta", "vit", "convnext", "wav2vec2")


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_through_torch_compile(family, rng):
    """The Dynamo route: one ftuner compilation serves every batch size and length >= 2; a size of 1
    (which Dynamo traces as a constant: a new graph) costs no compilation where that graph is the general
    one at size 1, and is exact either way. RoBERTa included: Dynamo's length has no upper bound, and
    the cumsum rewrite's steps then shift by a gather, never more than the tensor's own size. Whisper's
    frame count, served at one size only, is compiled per size (NarrowTrace)."""
    torch.manual_seed(0)
    model, example, _, calls = FAMILIES[family](rng)
    model = model.eval()
    fast = torch.compile(model, backend="ftuner", dynamic=True)
    reference = copy.deepcopy(model).double()
    general = [args for args in calls if all(1 not in a.shape for a in args)]
    ones = [args for args in calls if any(1 in a.shape for a in args)]

    def check(args):
        expected = reference(*map(_double, args))
        assert relative_error(fast(*args), expected) < TOLERANCE, (family, [tuple(a.shape) for a in args])

    with torch.no_grad():
        fast(*example)
        before = compiler.compilations + compiler.cache_loads
        for args in general:
            check(args)
        assert compiler.compilations + compiler.cache_loads == before
        for args in ones:
            check(args)
    if family in SIZE_ONE_REUSED:
        assert ones and compiler.compilations + compiler.cache_loads == before


def test_a_derived_dim_takes_only_its_multiples(rng):
    model, example, dims, _ = _wav2vec2(rng)
    compiled = ftorch.compile(model.eval(), example, dynamic_shapes=dims)
    with pytest.raises(ValueError, match=r"input #0 dim 1 is 1235, not one of 1000, 1010, 1020, \.\.\."):
        compiled(_normal(rng, 2, 1235))


def test_an_example_that_skips_the_general_path_is_exported_again_at_other_sizes(rng):
    """A ViT exported at its own image size skips the interpolation (a branch on the sizes), and the
    code would refuse every other size: compile() exports it again at other sizes (the example tiled)
    and the one module serves every size, the example's own included (fails without the re-export:
    NarrowTrace)."""
    torch.manual_seed(0)
    model, _, dims, calls = _vit_any_size(rng)
    model = model.eval()
    compiled = ftorch.compile(model, (_normal(rng, 2, 3, 32, 32),), dynamic_shapes=dims)
    reference = copy.deepcopy(model).double()
    for (x,) in calls + [(_normal(rng, 2, 3, 32, 32),), (_normal(rng, 3, 3, 24, 16),)]:
        with torch.no_grad():
            expected = reference(x.double())
        got = compiled(x)
        assert got.shape == expected.shape and relative_error(got, expected) < TOLERANCE, tuple(x.shape)


def test_general_example_tiles_each_tensor_to_other_sizes():
    """The re-export's example: each narrow symbol to its own other value (h != w), tensors tiled or cut,
    their values taken from the example's."""
    class Grid(torch.nn.Module):
        def forward(self, x, mask):
            return x.sum(1) * mask

    x = torch.arange(2 * 3 * 16 * 16, dtype=torch.float32).reshape(2, 3, 16, 16)
    mask = torch.ones(2, 16, 16)
    h, w = 8 * Dim("h", min=1, max=4), 8 * Dim("w", min=1, max=4)
    program = torch.export.export(Grid(), (x, mask), dynamic_shapes=({2: h, 3: w}, {1: h, 2: w}))
    moved_args, moved_kwargs = exporting.general_example(program, (x, mask), None, [(0, 2), (0, 3)])
    assert moved_kwargs is None
    assert moved_args[0].shape == (2, 3, 24, 32) and moved_args[1].shape == (2, 24, 32)
    assert torch.equal(moved_args[0][:, :, :16, :16], x) and bool((moved_args[1] == 1).all())
    assert torch.equal(moved_args[0][:, :, 16:, :16], x[:, :, :8]) and torch.equal(moved_args[0][:, :, :16, 16:], x[..., :16])
    assert exporting.general_example(program, (x, mask), None, []) is None
