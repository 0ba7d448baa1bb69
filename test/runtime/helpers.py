"""Shared checks for kernel tests: float64 references, poisoned outputs, tolerance relative to |A||B|."""
from pathlib import Path

import numpy as np


def poisoned(shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype)


def assert_matches(result, reference, scale, rtol=1e-4):
    """Every element within rtol of the magnitude its dot product accumulates (|A| |B|), and the
    norm-wise relative error under rtol. NaN (an unwritten poisoned element) always fails."""
    assert np.isfinite(result).all(), f"{np.count_nonzero(~np.isfinite(result))} elements unwritten or not finite"
    err = np.abs(result.astype(np.float64) - reference)
    bound = rtol * np.maximum(scale, 1.0)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert (err <= bound).all(), f"element {worst}: got {result[worst]}, want {reference[worst]}"
    # norm-wise, relative to the reference; a reference cancelled more than 100-fold below its |A| |B|
    # magnitude (a 1x1 product of random vectors can land near zero) is judged against that magnitude
    # / 100 instead: float32 rounding scales with |A| |B|, not with the cancelled result
    floor = 1e-2 * np.linalg.norm(np.broadcast_to(scale, np.shape(reference)))
    rel = np.linalg.norm(result - reference) / max(np.linalg.norm(reference), floor, 1e-30)
    assert rel < rtol, f"relative error {rel:.2e}"


def random(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def compile_here(source, target, **options):
    """ftuner_mlir.compile for a preset target; where this machine cannot run the preset's code (an
    AVX-512 preset on an AVX2 host), check that compile refuses it with a clear error, then skip."""
    import pytest

    import ftuner_mlir
    from ftuner_mlir.errors import InvalidOptions
    from ftuner_mlir.hardware.cpu import missing_host_features
    from ftuner_mlir.hardware.targets import parse_target

    missing = missing_host_features(parse_target(target))
    if not missing:
        return ftuner_mlir.compile(source, target, **options)
    with pytest.raises(InvalidOptions, match=f"target '{target}'.*lacks.*{missing[0]}"):
        ftuner_mlir.compile(source, target, **options)
    pytest.skip(f"this machine lacks {', '.join(missing)}: only the refusal to run {target} code was checked")


def resident_kb(address: int) -> int:
    """Rss of this process's mapping that holds `address` (/proc/self/smaps)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            low, high = (int(part, 16) for part in head.split("-"))
            inside = low <= address < high
        elif inside and head == "Rss:":
            return int(line.split()[1])
    raise AssertionError("no mapping holds the address")
