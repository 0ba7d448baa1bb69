"""Tiny versions of the demo's transformers models (2 layers, hidden 64, 2 heads; random weights,
nothing downloaded) and their float64 references."""
import copy

import ftuner_mlir.torch  # noqa: F401  first: torch then shares the compiled code's OpenMP runtime
import torch

from ftuner_mlir.bench.transformer_models import build

VOCAB = 1000
MAX_T = 128
TINY_CONFIGS = {"bert": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=128,
                      vocab_size=VOCAB, max_position_embeddings=MAX_T),
         "gpt2": dict(n_layer=2, n_embd=64, n_head=2, vocab_size=VOCAB, n_positions=MAX_T,
                      eos_token_id=0, bos_token_id=0)}


def tiny(kind: str, seed: int = 0) -> torch.nn.Module:
    """input_ids [B, T] int64 -> last_hidden_state [B, T, 64]."""
    return build(kind, seed, **TINY_CONFIGS[kind])[0]


def reference_f64(model: torch.nn.Module):
    """The same weights in float64: the reference the float32 compiled model is held to."""
    return copy.deepcopy(model).double().eval()


def ids(rng, batch: int, t: int) -> torch.Tensor:
    return torch.from_numpy(rng.integers(0, VOCAB, (batch, t)).astype("int64"))


def relative_error(got: torch.Tensor, reference: torch.Tensor) -> float:
    """max |got - reference| over max |reference|."""
    return float((got.double() - reference).abs().max() / reference.abs().max())


def rms_error(got: torch.Tensor, reference: torch.Tensor) -> float:
    """||got - reference|| over ||reference|| (2-norms): steadier than the max over few outputs."""
    return float((got.double() - reference).norm() / reference.double().norm())
