"""A model cast to bf16 (`model.to(torch.bfloat16)`), compiled as its fp32 twin with bf16 matmuls.

Every bf16 value is an fp32 value, so the twin (`float()` of a copy) holds exactly the model's weights;
compiled with matmul_precision="bf16", its matmuls round their operands back to bf16 (the weights to
themselves) and accumulate in fp32 on the matrix engine, as torch's bf16 matmul does, while softmax,
norms and activations run in fp32 instead of bf16. The compiled module takes the model's bf16 inputs
(widened, exactly) and returns its floating outputs in bf16. fp16 has no such engine here: refused.
"""
from __future__ import annotations

import copy

import torch

from .exporting import UnsupportedModel, named_tensors


def is_bf16_model(module: torch.nn.Module, args: tuple, kwargs: dict | None) -> bool:
    """Whether any weight or input is bf16; an fp16 one is refused, naming it."""
    found = False
    for name, value in named_tensors(module, args, kwargs):
        if value.dtype == torch.float16:
            raise UnsupportedModel(f"{name} is torch.float16: fp16 models are not compiled (no fp16 matrix engine "
                                   f"is targeted). Cast the model to torch.bfloat16, or compile the fp32 model "
                                   f"with matmul_precision='bf16'")
        found |= value.dtype == torch.bfloat16
    return found


def fp32_twin(module: torch.nn.Module) -> torch.nn.Module:
    """A copy of `module` with its floating weights in fp32: exactly the same values."""
    return copy.deepcopy(module).float()


def widened(tree):
    """`tree` (args, kwargs) with every bf16 tensor as fp32 (exact)."""
    return torch.utils._pytree.tree_map(
        lambda v: v.float() if isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16 else v, tree)
