"""The PyTorch route under everyday misuse (tiny BERT and GPT-2, random weights): threads mixing valid
and invalid calls, views through the Dynamo backend, torch.compile's options and modes, models left in
train mode, weights changed after compilation, compiles from two threads, an unwritable temporary
directory. Each case ends correct or with one clear exception.

The thread test makes FTUNER_RELIABILITY_CALLS calls (default 10,000: about 10 s); raise it for a
longer run, like the fuzz suite's FTUNER_FUZZ_CASES."""
import os
import random
import tempfile
import threading

import numpy as np
import pytest

import ftuner_mlir.torch as ftorch      # before torch: one OpenMP runtime for torch and the compiled code
import torch
from torch.export import Dim
from ftuner_mlir.errors import CompileError, InvalidOptions
from ftuner_mlir.runtime.function import AssertionFailure

from .models import MAX_T, VOCAB, ids, reference_f64, relative_error, tiny

TOLERANCE = 1e-4
CALLS = int(os.environ.get("FTUNER_RELIABILITY_CALLS", 10_000))
THREADS = 8


def _mixed_calls(call, model, calls: int, seed: int) -> list[str]:
    """`calls` calls from THREADS threads, half with a token id past the vocabulary; what went wrong."""
    rng = np.random.default_rng(seed)
    pool = [ids(rng, 2, int(rng.integers(2, 20))) for _ in range(16)]
    with torch.no_grad():
        expected = [_last_hidden(reference_f64(model)(x)) for x in pool]
    failures = []

    def worker(k):
        pick = random.Random(seed + k)
        for _ in range(calls // THREADS):
            i = pick.randrange(len(pool))
            x = pool[i]
            bad = pick.random() < 0.5
            if bad:
                x = x.clone()
                x[pick.randrange(2), pick.randrange(x.shape[1])] = pick.choice([VOCAB, VOCAB + 7, 10**9])
            try:
                with torch.no_grad():
                    got = _last_hidden(call(x))
            except AssertionFailure:
                if not bad:
                    failures.append(f"spurious assert on a valid call (pool #{i})")
                continue
            except Exception as err:            # noqa: BLE001 - a thread's exception would be lost
                failures.append(f"{type(err).__name__}: {err}"[:300])
                continue
            if bad:
                failures.append(f"missed assert (pool #{i})")
            elif relative_error(got, expected[i]) > TOLERANCE:
                failures.append(f"wrong result (pool #{i})")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_threads_mixing_valid_and_invalid_calls(rng):
    """The batch stays 2: with batch and length dynamic torch-mlir pins a dim (issue 37)."""
    model = tiny("bert").eval()
    compiled = ftorch.compile(model, (ids(rng, 2, 12),), ({1: Dim("T", min=2, max=MAX_T)},))
    failures = _mixed_calls(compiled, model, CALLS, int(rng.integers(1 << 30)))
    assert not failures, f"{len(failures)} of {CALLS} calls went wrong; first: {failures[:3]}"


def test_threads_through_the_dynamo_backend(rng):
    """Warmed up on this thread first: Dynamo's own tracing is not thread-safe (two threads tracing
    one frame fail inside torch.fx), the calls into the compiled graph are."""
    torch._dynamo.reset()
    model = tiny("gpt2", seed=9).eval()
    fast = torch.compile(model, backend="ftuner")
    with torch.no_grad():
        fast(_length_dynamic(ids(rng, 2, 7)))
    failures = _mixed_calls(fast, model, CALLS // 5, int(rng.integers(1 << 30)))
    assert not failures, f"{len(failures)} of {CALLS // 5} calls went wrong; first: {failures[:3]}"


def _last_hidden(out):
    return out if isinstance(out, torch.Tensor) else out[0]


def test_views_through_the_dynamo_backend(rng):
    torch._dynamo.reset()
    model = tiny("gpt2", seed=3).eval()
    fast = torch.compile(model, backend="ftuner", dynamic=True)
    reference = reference_f64(model)
    wide = ids(rng, 2, 41)
    views = {"shift": wide[:, :-1], "offset": wide[:, 1:], "every other": wide[:, ::2]}
    with torch.no_grad():
        for name, view in views.items():
            assert not view.is_contiguous() or view.storage_offset() > 0, name
            assert relative_error(_last_hidden(fast(view)), _last_hidden(reference(view.contiguous()))) < TOLERANCE, name


def _length_dynamic(x):
    """Only the length symbolic (torch.compile(dynamic=True) makes the batch symbolic too, and the
    backend then compiles twice, issue 37): one compile per test."""
    torch._dynamo.mark_dynamic(x, 1)
    return x


def test_torch_compile_options_and_modes(rng):
    model = tiny("gpt2", seed=10).eval()
    x = _length_dynamic(ids(rng, 2, 13))
    reference = _last_hidden(reference_f64(model)(x))
    for kwargs in (dict(options={"num_threads": 1}), dict(mode="reduce-overhead")):   # torch takes one of them
        torch._dynamo.reset()
        fast = torch.compile(model, backend="ftuner", **kwargs)
        with torch.no_grad():
            assert relative_error(_last_hidden(fast(x)), reference) < TOLERANCE, kwargs
    for kwargs, message in ((dict(options={"threads": 1}), r"unknown compile option threads; the options are num_threads"),
                            (dict(options={"timeout_s": 0}), r"timeout_s is a number of seconds above 0"),
                            (dict(options={"on_weight_change": "warn"}), r"on_weight_change must be one of"),
                            (dict(mode="max-autotune"), r"takes mode 'default' or 'reduce-overhead', not 'max-autotune'")):
        torch._dynamo.reset()
        fast = torch.compile(model, backend="ftuner", **kwargs)
        with pytest.raises(Exception, match=message):
            fast(x)


def test_train_mode(rng):
    model = tiny("bert", seed=4).train()
    x = ids(rng, 2, 9)
    compiled = ftorch.compile(model, (x,), ({1: Dim("T", min=2, max=MAX_T)},))
    assert model.training and all(m.training for m in model.modules()), "the model's own mode was changed"
    with torch.no_grad():
        first, second = compiled(x), compiled(x)
        assert torch.equal(first, second), "dropout was compiled in"
        assert relative_error(first, reference_f64(model)(x)) < TOLERANCE   # reference_f64 is in eval mode
    torch._dynamo.reset()
    fast = torch.compile(model, backend="ftuner", dynamic=True)
    with pytest.raises(Exception, match=r"compiles for inference, and the model runs in training mode: dropout at "
                                        r"File \".*modeling_bert.py\", line \d+"):
        fast(x)


def _bump(model):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.25)


def test_weights_changed_after_compilation_through_compile(rng):
    x = ids(rng, 2, 11)
    for policy in ("raise", "recompile", "ignore"):
        model = tiny("bert", seed=5).eval()
        before = reference_f64(model)(x)
        compiled = ftorch.compile(model, (x,), ({1: Dim("T", min=2, max=MAX_T)},), on_weight_change=policy)
        _bump(model)
        after = reference_f64(model)(x)
        if policy == "raise":
            with pytest.raises(ftorch.StaleWeights, match=r"model\.embeddings\.word_embeddings\.weight changed"):
                compiled(x)
        else:
            with torch.no_grad():
                assert relative_error(compiled(x), after if policy == "recompile" else before) < TOLERANCE, policy


def test_weights_changed_after_compilation_through_dynamo(rng):
    x = ids(rng, 2, 11)
    for policy in ("raise", "recompile"):
        torch._dynamo.reset()
        model = tiny("gpt2", seed=6).eval()
        fast = torch.compile(model, backend="ftuner", options={"on_weight_change": policy})
        _length_dynamic(x)
        with torch.no_grad():
            fast(x)
        _bump(model)
        with torch.no_grad():
            if policy == "raise":
                with pytest.raises(ftorch.StaleWeights, match=r"L\['self'\].*changed after the graph was compiled"):
                    fast(x)
            else:
                assert relative_error(_last_hidden(fast(x)), _last_hidden(reference_f64(model)(x))) < TOLERANCE


def test_compiles_from_two_threads(rng):
    fused = torch.nn.functional.scaled_dot_product_attention
    models = [tiny(kind, seed=7) for kind in ("bert", "gpt2")]
    x = ids(rng, 2, 10)
    results, errors = {}, []

    def build(k):
        try:
            results[k] = ftorch.compile(models[k], (x,), ({1: Dim("T", min=2, max=MAX_T)},))
        except Exception as err:            # noqa: BLE001 - reported below
            errors.append(repr(err))

    threads = [threading.Thread(target=build, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert torch.nn.functional.scaled_dot_product_attention is fused, "a torch global was left patched"
    with torch.no_grad():
        for k, model in enumerate(models):
            assert relative_error(_last_hidden(results[k](x)), _last_hidden(reference_f64(model)(x))) < TOLERANCE


def test_an_unwritable_temporary_directory(monkeypatch, tmp_path, rng):
    blocker = tmp_path / "tmp-is-a-file"
    blocker.write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(blocker))
    with pytest.raises(CompileError, match=f"temporary directory {blocker}"):
        ftorch.compile(tiny("bert", seed=8), (ids(rng, 2, 5),), ({1: Dim("T", min=2, max=MAX_T)},), cache=False)


def test_a_full_temporary_directory(monkeypatch, full_folder, rng):
    """torch's serializer, writing to a full disk itself, aborted the process (SIGABRT): the program is
    saved through memory, its tensors written by Python (program_tensors.py), and the first failed write
    is a CompileError naming the folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(full_folder))
    with pytest.raises(CompileError, match=f"cannot write the exported program into {full_folder}/ftuner-torch-.*"
                                           f"No space left on device"):
        ftorch.compile(tiny("bert", seed=8), (ids(rng, 2, 5),), ({1: Dim("T", min=2, max=MAX_T)},), cache=False)
    assert [p.name for p in full_folder.iterdir()] == ["filler"], "a scratch folder was left behind"


def test_options_are_checked_before_exporting(rng):
    with pytest.raises(InvalidOptions, match="memory_mb is a whole number"):
        ftorch.compile(tiny("bert"), (ids(rng, 2, 5),), memory_mb=1.5)
    with pytest.raises(InvalidOptions, match="unknown compile option num_thread;"):
        ftorch.compile(tiny("bert"), (ids(rng, 2, 5),), num_thread=1)
