"""The model state a compiled module was built from, watched for changes.

The compiled code holds the weights as constants (packed for the uKernels at compile time). A later
in-place change of a parameter or buffer (an optimizer step, a LoRA merge with `add_`, `copy_` under
no_grad) would leave it computing with the old values while eager sees the new ones. Each call compares
every tensor's version counter (bumped by every in-place op) and data pointer (a `p.data = ...`
rebinding) with their values at compile time: about 0.1 µs a tensor. Writes through `p.data` (a
separate version counter) are not seen: after those, compile again.

What a change does is the user's choice, `on_weight_change=`:
  "raise"      (default) a StaleWeights error naming the tensor;
  "recompile"  compile again from the current weights (a full compile), then call;
  "ignore"     keep computing with the weights as they were at compile time.
"""
from __future__ import annotations

from ..errors import InvalidOptions

POLICIES = ("raise", "recompile", "ignore")


class StaleWeights(RuntimeError):
    """A parameter or buffer changed after compilation, and on_weight_change="raise"."""


def check_policy(policy) -> str:
    if policy not in POLICIES:
        raise InvalidOptions(f"on_weight_change must be one of {', '.join(map(repr, POLICIES))}, got {policy!r}")
    return policy


class WeightWatch:
    """(name, tensor) pairs and their version counters and data pointers as they are now."""

    def __init__(self, named_tensors):
        self._entries = [(name, t, t._version, t.data_ptr()) for name, t in named_tensors]

    def changed(self) -> str | None:
        """The name of the first tensor changed since, or None."""
        for name, t, version, address in self._entries:
            if t._version != version or t.data_ptr() != address:
                return name
        return None

    def stale(self, policy: str, where: str) -> bool:
        """Whether a tensor changed since; under policy "raise", a StaleWeights naming it instead."""
        name = self.changed()
        if name is not None and policy == "raise":
            raise StaleWeights(f"{name} changed after {where} was compiled (an in-place update); the compiled "
                               f"code still holds the old values. Compile again, or pass on_weight_change="
                               f"'recompile' (compile again on such a change) or 'ignore' (keep the weights of "
                               f"compile time)")
        return name is not None


def module_tensors(module) -> list:
    """A module's parameters and buffers by name (each tensor once)."""
    return list(module.named_parameters()) + list(module.named_buffers())
