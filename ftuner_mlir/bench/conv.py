"""ResNet-50's convolutions through ftuner (each layer compiled once, dynamic batch, height and width)
against PyTorch eager (oneDNN) measured in its own process, over batch sizes and input resolutions.

    ftuner bench-conv [--batch 1,4,16] [--res 160,224,320] [--torch-python PATH] [--json PATH]

Each layer is the torch-mlir form of `nn.Conv2d` (models.conv2d: NCHW, padding, bias). Every layer is
checked against a float64 numpy convolution at the smallest batch and resolution before it is timed;
the other points are covered by the test suite's shapes. Reported: per point the time ratio
torch / ftuner (> 1: ftuner faster), the geometric mean over layers and points, and the whole
network's conv time (each layer weighted by how often ResNet-50 runs it).
"""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class ConvLayer:
    name: str
    channels: int
    filters: int
    kernel: int
    stride: int
    padding: int
    scale: int          # input height = resolution // scale
    count: int          # how many times ResNet-50 (torchvision v1.5: stride on the 3x3) runs it

    def input_shape(self, batch: int, res: int) -> tuple[int, int, int, int]:
        side = res // self.scale
        return (batch, self.channels, side, side)

    def flops(self, batch: int, res: int) -> float:
        side = res // self.scale
        out = (side + 2 * self.padding - self.kernel) // self.stride + 1
        return 2.0 * batch * self.filters * out * out * self.channels * self.kernel ** 2


def _stage(prefix: str, width: int, inputs: int, scale: int, blocks: int) -> list[ConvLayer]:
    """One bottleneck stage: its first block (stride 2 except stage 1, with the downsample) and the rest."""
    s = 1 if scale == 4 else 2
    into = scale if s == 1 else scale // 2           # the first block's input scale
    out = 4 * width
    return [
        ConvLayer(f"{prefix}.0.conv1", inputs, width, 1, 1, 0, into, 1),
        ConvLayer(f"{prefix}.0.conv2", width, width, 3, s, 1, into, 1),
        ConvLayer(f"{prefix}.0.conv3", width, out, 1, 1, 0, scale, blocks),   # same shape in every block
        ConvLayer(f"{prefix}.0.downsample", inputs, out, 1, s, 0, into, 1),
        ConvLayer(f"{prefix}.1.conv1", out, width, 1, 1, 0, scale, blocks - 1),
        ConvLayer(f"{prefix}.1.conv2", width, width, 3, 1, 1, scale, blocks - 1),
    ]


RESNET50 = ([ConvLayer("conv1", 3, 64, 7, 2, 3, 1, 1)] + _stage("layer1", 64, 64, 4, 3)
            + _stage("layer2", 128, 256, 8, 4) + _stage("layer3", 256, 512, 16, 6) + _stage("layer4", 512, 1024, 32, 3))


def _inputs(layer: ConvLayer, batch: int, res: int, seed: int = 0):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(layer.input_shape(batch, res), dtype=np.float32)
    w = rng.standard_normal((layer.filters, layer.channels, layer.kernel, layer.kernel), dtype=np.float32)
    w *= 1.0 / math.sqrt(layer.channels * layer.kernel ** 2)
    b = rng.standard_normal(layer.filters, dtype=np.float32)
    return x, w, b


def reference(x, w, b, stride: int, pad: int):
    """Float64 NCHW convolution, one filter tap at a time."""
    import numpy as np
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    w = w.astype(np.float64)
    _, _, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.broadcast_to(b.astype(np.float64)[None, :, None, None], (x.shape[0], w.shape[0], oh, ow)).copy()
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j], optimize=True)
    return out


def torch_worker() -> None:
    """Child process: JSON lines {layer, batch, res, min_time} in, {seconds} out."""
    import torch

    from .measure import median_times
    torch.set_grad_enabled(False)
    layers = {layer.name: layer for layer in RESNET50}
    print(json.dumps({"version": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        layer = layers[req["layer"]]
        x, w, b = (torch.from_numpy(a) for a in _inputs(layer, req["batch"], req["res"]))
        fn = lambda: torch.nn.functional.conv2d(x, w, b, stride=layer.stride, padding=layer.padding)  # noqa: E731
        print(json.dumps({"seconds": median_times({"torch": fn}, req["min_time"])["torch"]}), flush=True)


class TorchColumn:
    def __init__(self, python: str):
        env_path = str(Path(__file__).resolve().parents[2])
        self.proc = subprocess.Popen([python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                                      "from ftuner_mlir.bench.conv import torch_worker; torch_worker()", env_path],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.info = json.loads(self.proc.stdout.readline())

    def time(self, layer: ConvLayer, batch: int, res: int, min_time: float) -> float:
        self.proc.stdin.write(json.dumps({"layer": layer.name, "batch": batch, "res": res, "min_time": min_time}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["seconds"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def run(batches, resolutions, torch_python: str, min_time: float = 0.5, target: str = "host", log=print) -> dict:
    import numpy as np

    import ftuner_mlir
    from .. import models
    from .measure import median_times

    torch = TorchColumn(torch_python)
    log(f"torch {torch.info['version']} ({torch.info['threads']} threads) in its own process; "
        f"ftuner target {target}")
    log(f"{'layer':<20} {'batch':>5} {'res':>4} {'ftuner ms':>10} {'torch ms':>9} {'GF/s':>6} {'torch/ftuner':>12}")
    rows, total = [], {"ftuner": {}, "torch": {}}
    try:
        for layer in RESNET50:
            t0 = time.perf_counter()
            exe = ftuner_mlir.compile(models.conv2d(layer.channels, layer.filters, layer.kernel, layer.stride,
                                                    layer.padding), target)
            compile_s = time.perf_counter() - t0
            x, w, b = _inputs(layer, min(batches), min(resolutions))
            ref = reference(x, w, b, layer.stride, layer.padding)
            err = float(np.abs(exe(x, w, b) - ref).max() / np.abs(ref).max())
            if err > 1e-4:
                raise AssertionError(f"{layer.name}: relative error {err:.1e} against float64")
            for batch in batches:
                for res in resolutions:
                    x, w, b = _inputs(layer, batch, res)
                    torch_s = torch.time(layer, batch, res, min_time)
                    time.sleep(0.15)                   # torch's threads spin a while after it returns
                    ftuner_s = median_times({"ftuner": lambda: exe(x, w, b)}, min_time)["ftuner"]
                    row = dict(layer=layer.name, batch=batch, res=res, ftuner_s=ftuner_s, torch_s=torch_s,
                               gflops=layer.flops(batch, res) / ftuner_s / 1e9, ratio=torch_s / ftuner_s,
                               compile_s=compile_s, max_rel_err=err)
                    rows.append(row)
                    for name, s in (("ftuner", ftuner_s), ("torch", torch_s)):
                        total[name][(batch, res)] = total[name].get((batch, res), 0.0) + layer.count * s
                    log(f"{layer.name:<20} {batch:>5} {res:>4} {1e3 * ftuner_s:10.2f} {1e3 * torch_s:9.2f} "
                        f"{row['gflops']:6.1f} {row['ratio']:12.2f}")
    finally:
        torch.close()
    geomean = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
    network = {f"{b}x{r}": total["torch"][(b, r)] / total["ftuner"][(b, r)] for (b, r) in total["ftuner"]}
    log(f"\ngeomean torch/ftuner over {len(rows)} layer x point cases: {geomean:.2f}")
    log("whole-network conv time torch/ftuner per batch x resolution: "
        + ", ".join(f"{k}: {v:.2f}" for k, v in network.items()))
    return {"rows": rows, "geomean_torch_over_ftuner": geomean, "network_torch_over_ftuner": network,
            "torch": torch.info}
