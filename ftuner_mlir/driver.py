"""Run a pipeline that mixes upstream passes (by their textual name) and ftuner passes.

Upstream `PassManager.parse` cannot name a Python pass, so the pipeline text is split at the top
level and each element becomes either an upstream pipeline element or a Python pass callback, all in
one PassManager (so `--mlir-print-ir-after-all`-style instrumentation still sees every stage).
"""
from __future__ import annotations

import re
import traceback
from pathlib import Path

from mlir import ir, passmanager

from .hardware.cpu import CpuTarget
from .ir.diagnostics import PassFailure
from .passes import REGISTRY, ModulePass


def split_top_level(text: str) -> list[str]:
    """Split at commas that are not inside (), {} or []; unwrap a surrounding builtin.module(...)."""
    text = text.strip()
    m = re.fullmatch(r"builtin\.module\((.*)\)", text, re.S)
    if m:
        text = m.group(1)
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced pipeline: {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise ValueError(f"unbalanced pipeline: {text!r}")
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def instantiate(element: str, target: CpuTarget | None) -> ModulePass | str:
    """An ftuner pass object for `name{opts}` when `name` is ours, else the element text unchanged."""
    name, _, rest = element.partition("{")
    cls = REGISTRY.get(name.strip())
    if cls is None:
        return element
    if rest and not rest.endswith("}"):
        raise ValueError(f"malformed pass options in {element!r}")
    return cls.from_options(rest[:-1] if rest else "", target)


def parse_pipeline(text: str, target: CpuTarget | None) -> list[ModulePass | str]:
    return [instantiate(e, target) for e in split_top_level(text)]


def _run_step(step, op, pass_, name: str) -> None:
    """A Python step inside the pass manager: a rejection becomes an error diagnostic at the op and the
    pass's failure, so the pass manager stops and reports like it does for upstream passes. ValueError
    and TypeError (bad options, no target) go to the caller as before; any other exception is a bug of
    the step: an "internal error" diagnostic naming the step, the exception and where it was raised (not
    a traceback unwinding through the C++ pass manager)."""
    try:
        step(op)
    except PassFailure as failure:
        (failure.loc or ir.Location.unknown()).emit_error(failure.message)
        pass_.signal_pass_failure()
    except (MemoryError, ValueError, TypeError):
        raise                       # out of memory; bad options or targets (the callers report these)
    except Exception as err:        # noqa: BLE001 - every other failure is reported the same way
        frame = traceback.extract_tb(err.__traceback__)[-1]
        op.location.emit_error(f"internal error in {name}: {type(err).__name__}: {err} (raised at "
                               f"{Path(frame.filename).name}:{frame.lineno}; a bug in ftuner-mlir: please report "
                               f"it with this input)")
        pass_.signal_pass_failure()


def build_pass_manager(stages: list[ModulePass | str], context: ir.Context) -> passmanager.PassManager:
    """One pass manager entry per step of each pass; a Python step shows under its pass's flag (under
    `flag:function` when the pass has several)."""
    pm = passmanager.PassManager("builtin.module", context)
    for stage in stages:
        for leaf in stage.passes() if not isinstance(stage, str) else [stage]:
            if isinstance(leaf, str):
                pm.add(leaf)
                continue
            steps = leaf.steps()
            several = sum(map(callable, steps)) > 1
            for step in steps:
                if not callable(step):
                    pm.add(step)
                    continue
                name = f"{leaf.name}:{getattr(step, '__name__', 'step')}" if several else leaf.name
                pm.add(lambda op, pass_, step=step, name=name: _run_step(step, op, pass_, name), name=name,
                       argument=name, description=leaf.summary)
    return pm


def run_pipeline(module: ir.Module, stages: list[ModulePass | str], instrument: dict | None = None) -> None:
    """Raises ir.MLIRError on failure, with the diagnostics of ftuner and upstream passes alike. `instrument`:
    print_before_all / print_after_all / print_after_failure (IR to stderr around each pass, as
    mlir-opt's --mlir-print-ir-*), timing (a pass timing report to stderr)."""
    instrument = instrument or {}
    with module.context, ir.Location.unknown():
        pm = build_pass_manager(stages, module.context)
        printing = {k: instrument.get(k, False) for k in ("print_before_all", "print_after_all", "print_after_failure")}
        if any(printing.values()):
            pm.enable_ir_printing(**printing)
        if instrument.get("timing"):
            pm.enable_timing()
        pm.run(module.operation)
