"""`ftuner bench --models` on a tiny GPT-2: ftuner compiled once and checked against torch eager, the
torch eager and torch.compile(dynamic=True) baselines each measured by a process of its own on the same
model and inputs, the table, models.json and models.png written."""
import json

import pytest

from ftuner_mlir.bench import model_bench

from .models import TINY_CONFIGS


def test_model_benchmark_runs_every_column(tmp_path):
    lines = []
    results = model_bench.run(["gpt2"], [2], (5, 17), min_time=0.02, out=tmp_path, machine={"cpu": "test"},
                              config=TINY_CONFIGS["gpt2"], log=lines.append)
    (result,) = results
    assert result["failures"] == 0
    assert [r["T"] for r in result["rows"]] == [5, 17]
    for row in result["rows"]:
        assert row["rel_err"] <= model_bench.TOLERANCE
        for mode in model_bench.BASELINES:
            assert row[f"{mode}_s"] > 0 and row[f"{mode}_first_call_s"] > 0
            assert row[f"{mode}_same_output"], f"{mode} ran another model or other inputs"
    # torch.compile compiles on its first call: far slower than a timed call
    assert result["rows"][0]["torch_compile_first_call_s"] > 10 * result["rows"][0]["torch_compile_s"]
    for mode in model_bench.BASELINES:
        ratios = [r[f"{mode}_s"] / r["ftuner_s"] for r in result["rows"]]
        assert abs(result["speedup_worst"][mode] - min(ratios)) < 1e-12
    table = "\n".join(lines)
    assert "gpt2 batch 2" in table and "torch_compile/ftuner" in table and "geomean speedup" in table
    saved = json.loads((tmp_path / "models.json").read_text())
    assert saved["machine"] == {"cpu": "test"} and saved["models"][0]["rows"][1]["T"] == 17
    assert (tmp_path / "models.png").stat().st_size > 1000


# the families beyond text encoders, tiny; sizes not exported (text 24, images 160 x 192, audio 16000)
FAMILIES = {
    "llama": (dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, vocab_size=100), (3, 17), "T"),
    "vit": (dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128), (48, 112),
            "image side"),
    "resnet": (dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic"), (64, 96),
               "image side"),
    "convnext": (dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2), (64, 96), "image side"),
    "t5": (dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4, vocab_size=100,
                decoder_start_token_id=0), (3, 17), "T"),
    "wav2vec2": (dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                      conv_dim=(16,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4), (960, 3200),
                 "samples"),
}


@pytest.mark.parametrize("kind", FAMILIES)
def test_model_benchmark_takes_other_families(kind, tmp_path):
    """A decoder with RoPE and grouped-query attention, an encoder-decoder (T5), a ViT, a ResNet and a
    ConvNeXt whose image side varies, and wav2vec2 over a varying number of samples: one compilation each, checked and timed at two sizes
    against torch eager in its own process."""
    config, sizes, size_name = FAMILIES[kind]
    lines = []
    (result,) = model_bench.run([kind], [2], sizes, min_time=0.02, out=tmp_path, baselines=("torch_eager",),
                                config=config, log=lines.append)
    assert result["failures"] == 0 and [r["T"] for r in result["rows"]] == list(sizes)
    for row in result["rows"]:
        assert row["rel_err"] <= model_bench.TOLERANCE and row["torch_eager_same_output"]
    title, head = lines[1].splitlines()[:2]
    assert title == f"{kind} batch 2" and head.lstrip().startswith(size_name)


def test_model_demo_shares_one_openmp_runtime_with_torch():
    """`ftuner demo --model` times torch eager beside the compiled code in one process: torch must be
    imported after ftuner_mlir.torch (else two OpenMP runtimes slow each other and a RuntimeWarning says
    so). A fresh interpreter, since this one imported torch long ago; warnings are errors there."""
    import subprocess
    import sys

    script = ("import sys; from ftuner_mlir.bench import model_demo\n"
              "assert 'torch' not in sys.modules\n"
              f"r = model_demo.run('gpt2', None, 2, (3, 11), 0.01, 0, config={TINY_CONFIGS['gpt2']!r})\n"
              "import ftuner_mlir.torch.openmp as omp\n"
              "assert omp.shared and r['failures'] == 0 and [row['T'] for row in r['rows']] == [3, 11]\n")
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", script], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "geomean torch/ftuner" in done.stdout
