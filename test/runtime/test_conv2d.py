"""conv2d through the matmul uKernels: each layout / stride / padding / filter size compiled once, run on
batch, height and width never seen at build time (1, primes, odd), against a float64 numpy convolution;
the shape rules its index arithmetic, padding and windows imply, checked before native code runs."""
import numpy as np
import pytest

import ftuner_mlir
from ftuner_mlir import compiler, models

from .helpers import assert_matches, poisoned, random

CONFIGS = {  # name: (channels, filters, kernel, stride, padding, layout, dtype, bias)
    "nchw_3x3": (5, 7, 3, 1, 1, "nchw", "f32", True),
    "nchw_3x3_s2": (6, 33, 3, 2, 1, "nchw", "f32", True),
    "nchw_1x1": (13, 17, 1, 1, 0, "nchw", "f32", False),
    "nchw_1x1_s2": (8, 16, 1, 2, 0, "nchw", "f32", True),
    "nchw_7x7_s2": (3, 9, 7, 2, 3, "nchw", "f32", True),
    "nhwc_3x3": (5, 7, 3, 1, 1, "nhwc", "f32", True),
    "nhwc_3x3_s2_valid": (4, 40, 3, 2, 0, "nhwc", "f32", False),
    "nchw_3x3_f64": (3, 5, 3, 1, 1, "nchw", "f64", True),
}
SHAPES = [(1, 1, 1), (1, 7, 7), (2, 5, 11), (3, 13, 17), (1, 29, 3), (4, 16, 9), (2, 23, 19)]   # (batch, H, W)
# (H, W) = (23, 19) gives more output pixels than conv2d.BATCHED_BELOW_PIXELS at stride 1: one GEMM per
# image; the others, the batched GEMM


@pytest.fixture(scope="module")
def exes():
    return {name: ftuner_mlir.compile(models.conv2d(c, f, k, stride=s, padding=p, layout=lay, dtype=dt, bias=b))
            for name, (c, f, k, s, p, lay, dt, b) in CONFIGS.items()}


def reference(x, w, b, stride, pad, nchw):
    """Float64 convolution (NCHW/FCHW, or NHWC/HWCF), and the magnitude each output accumulates."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    if not nchw:
        x, w = x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1)
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out, scale = np.zeros((n, f, oh, ow)), np.zeros((n, f, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
            scale += np.einsum("nchw,fc->nfhw", np.abs(patch), np.abs(w[:, :, i, j]))
    if b is not None:
        out += b[None, :, None, None]
        scale += np.abs(b)[None, :, None, None]
    if not nchw:
        out, scale = out.transpose(0, 2, 3, 1), scale.transpose(0, 2, 3, 1)
    return out, scale


def _case(rng, exe, config, n, h, w):
    c, f, k, s, p, layout, dtype, bias = config
    dt = np.float32 if dtype == "f32" else np.float64
    nchw = layout == "nchw"
    x = random(rng, (n, c, h, w) if nchw else (n, h, w, c), dt)
    wt = random(rng, (f, c, k, k) if nchw else (k, k, c, f), dt)
    b = random(rng, (f,), dt) if bias else None
    ref, scale = reference(x, wt, b, s, p, nchw)
    out = poisoned(ref.shape, dt)
    result = exe(*([x, wt] + ([b] if bias else [])), out=out)
    assert result is out
    if ref.size:
        assert_matches(result, ref, scale, rtol=1e-4 if dt == np.float32 else 1e-10)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_conv2d_every_shape_one_compilation(exes, rng, name):
    before = compiler.compilations
    c, f, k, s, p = CONFIGS[name][:5]
    for n, h, w in SHAPES:
        if min(h, w) + 2 * p < k:
            continue                       # no output pixel: covered by the error test below
        _case(rng, exes[name], CONFIGS[name], n, h, w)
    assert compiler.compilations == before, "a shape triggered a new compilation"


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("sizes, shapes", [
    ((2, 9, 11), [(2, 9, 11)]),                                  # fully static
    (("?", 9, 11), [(1, 9, 11), (3, 9, 11)]),                    # batch only dynamic
    ((2, "?", "?"), [(2, 7, 7), (2, 13, 10)]),                   # image size only
    ((1, 16, 16), [(1, 16, 16)]),                                # a ViT patch embedding (kernel = stride = 4)
    (("?", 16, 16), [(1, 16, 16), (5, 16, 16)]),
], ids=["static", "batch", "image", "patches", "patches-batch"])
def test_conv2d_static_and_dynamic_mixes(rng, layout, sizes, shapes):
    """Any mix of static and dynamic batch, height and width compiles (the GEMM's shapes follow the
    conv's types) and matches float64 numpy, at the sizes the dynamic dims take."""
    kernel, stride, padding = (4, 4, 0) if 16 in sizes else (3, 2, 1)
    config = (3, 5, kernel, stride, padding, layout, "f32", True)
    exe = ftuner_mlir.compile(models.conv2d(3, 5, kernel, stride, padding, layout, "f32", True, sizes=sizes))
    for n, h, w in shapes:
        _case(rng, exe, config, n, h, w)


def test_conv2d_fresh_random_shapes(exes, rng):
    for _ in range(4):
        n, h, w = (int(v) for v in rng.integers(1, 24, size=3) + np.array([0, 2, 2]))
        _case(rng, exes["nchw_3x3_s2"], CONFIGS["nchw_3x3_s2"], n, h, w)


def test_conv2d_is_tiled_into_ukernels():
    """The conv became a GEMM: the lowered module calls a matmul dispatch and no conv loop is left."""
    exe = ftuner_mlir.compile(models.conv2d(4, 8, 3, padding=1), isolate=False)
    assert "ftuner_dispatch_matmul_" in exe.llvm_dialect


def test_input_smaller_than_the_filter_is_a_value_error(exes):
    """A 3x3 stride-2 valid conv on a 2x1 image has (2 - 3) // 2 + 1 = 0 output rows: an empty result
    (the function's own arithmetic decides); with no rows at all it gives (0 - 3) // 2 + 1 = -1, a
    negative size refused before native code runs."""
    exe = exes["nhwc_3x3_s2_valid"]
    x, w = np.ones((1, 2, 1, 4), np.float32), np.ones((3, 3, 4, 40), np.float32)
    assert exe(x, w).shape == (1, 0, 0, 40)
    with pytest.raises(ValueError, match="negative size"):
        exe(np.ones((1, 0, 5, 4), np.float32), w)


def test_wrong_filter_or_channels_name_the_argument(exes):
    exe = exes["nchw_3x3"]
    x, w, b = np.ones((1, 5, 8, 8), np.float32), np.ones((7, 5, 3, 3), np.float32), np.ones(7, np.float32)
    with pytest.raises(ValueError, match="argument #0 dim 1 must be 5"):
        exe(np.ones((1, 4, 8, 8), np.float32), w, b)
    with pytest.raises(ValueError, match="argument #1 dim 2 must be 3"):
        exe(x, np.ones((7, 5, 2, 3), np.float32), b)


WINDOW_FROM_ANOTHER_ARGUMENT = """
func.func @conv(%x: tensor<?x?x?x4xf32>, %f: tensor<3x3x4x8xf32>, %like: tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %like, %c0 : tensor<?x?x?x8xf32>
  %oh = tensor.dim %like, %c1 : tensor<?x?x?x8xf32>
  %ow = tensor.dim %like, %c2 : tensor<?x?x?x8xf32>
  %e = tensor.empty(%n, %oh, %ow) : tensor<?x?x?x8xf32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %f : tensor<?x?x?x4xf32>, tensor<3x3x4x8xf32>) outs(%init : tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  return %r : tensor<?x?x?x8xf32>
}
"""


def test_conv_window_must_stay_inside_the_input(rng):
    """The output size comes from a third argument, so nothing ties it to the input: the window of the
    last output pixel ((OH - 1) * 2 + 3 rows) must fit in H, checked per call."""
    exe = ftuner_mlir.compile(WINDOW_FROM_ANOTHER_ARGUMENT)
    x, w = random(rng, (2, 9, 7, 4)), random(rng, (3, 3, 4, 8))
    ok = exe(x, w, np.empty((2, 4, 3, 8), np.float32))      # (4 - 1) * 2 + 3 = 9 rows, (3 - 1) * 2 + 3 = 7
    ref, scale = reference(x, w, None, 2, 0, nchw=False)
    assert_matches(ok, ref, scale)
    with pytest.raises(ValueError, match="conv_2d_nhwc_hwcf"):
        exe(x, w, np.empty((2, 5, 3, 8), np.float32))
    with pytest.raises(ValueError, match="argument #2 dim 0 is 3 but must equal argument #0 dim 0"):
        exe(x, w, np.empty((3, 4, 3, 8), np.float32))


CONV1D = """
func.func @main(%x: tensor<?x3x?xf32>, %w: tensor<8x3x5xf32>) -> tensor<?x8x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c9 = arith.constant 9 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x?xf32>
  %l = tensor.dim %x, %c2 : tensor<?x3x?xf32>
  %span = arith.subi %l, %c9 : index
  %steps = arith.divui %span, %c2 : index
  %ow = arith.addi %steps, %c1 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n, %ow) : tensor<?x8x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x?xf32>) -> tensor<?x8x?xf32>
  %r = linalg.conv_1d_ncw_fcw {dilations = dense<2> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
      ins(%x, %w : tensor<?x3x?xf32>, tensor<8x3x5xf32>) outs(%f : tensor<?x8x?xf32>) -> tensor<?x8x?xf32>
  return %r : tensor<?x8x?xf32>
}
"""


def test_conv1d_is_a_height_one_conv2d(rng):
    """torch's Conv1d (stride 2, dilation 2, window 9 samples) through the conv2d GEMM: batch and length
    dynamic, lengths never seen at build time (the shortest window, odd, prime, long)."""
    exe = ftuner_mlir.compile(CONV1D)
    assert "ftuner_dispatch_matmul_" in ftuner_mlir.compile(CONV1D, isolate=False).llvm_dialect
    w = random(rng, (8, 3, 5))
    for n, length in ((1, 9), (2, 10), (3, 37), (5, 101), (1, 2053), (4, 64)):
        x = random(rng, (n, 3, length))
        width = (length - 9) // 2 + 1

        def conv(f):
            return sum(np.einsum("ncw,fc->nfw", f(x[:, :, 2 * k: 2 * k + 2 * width - 1: 2].astype(np.float64)),
                                 f(w[:, :, k].astype(np.float64))) for k in range(5))
        got = exe["main"](x, w)
        assert got.shape == (n, 8, width)
        assert_matches(got, conv(lambda a: a), conv(np.abs))


GROUPED = """
func.func @main(%x: tensor<?x3x4x?x1xf32>, %w: tensor<3x5x4x7x1xf32>) -> tensor<?x3x5x?x1xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x4x?x1xf32>
  %l = tensor.dim %x, %c3 : tensor<?x3x4x?x1xf32>
  %oh = arith.subi %l, %c6 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n, %oh) : tensor<?x3x5x?x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3x5x?x1xf32>) -> tensor<?x3x5x?x1xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<?x3x4x?x1xf32>, tensor<3x5x4x7x1xf32>) outs(%f : tensor<?x3x5x?x1xf32>) -> tensor<?x3x5x?x1xf32>
  return %r : tensor<?x3x5x?x1xf32>
}
"""


def test_grouped_conv_is_a_conv2d_per_group(rng):
    """A grouped conv (3 groups of 4 input and 5 output channels, a 7-tap window along the length: torch-mlir's
    form of a grouped Conv1d) runs as one GEMM-served conv2d per group: batch and length dynamic, lengths
    never seen at build time (the shortest window, odd, prime, long)."""
    exe = ftuner_mlir.compile(GROUPED)
    assert "conv_2d_ngchw" not in ftuner_mlir.compile(GROUPED, isolate=False).llvm_dialect
    w = random(rng, (3, 5, 4, 7, 1))
    for n, length in ((1, 7), (2, 8), (3, 37), (1, 1031), (4, 64)):
        x = random(rng, (n, 3, 4, length, 1))
        height = length - 6

        def conv(f):
            return sum(np.einsum("ngch,gfc->ngfh", f(x[:, :, :, k:k + height, 0].astype(np.float64)),
                                 f(w[:, :, :, k, 0].astype(np.float64))) for k in range(7))[..., None]
        got = exe["main"](x, w)
        assert got.shape == (n, 3, 5, height, 1)
        assert_matches(got, conv(lambda a: a), conv(np.abs))


DEPTHWISE = """
func.func @main(%x: tensor<?x6x?x?xf32>, %w: tensor<6x3x5xf32>, %b: tensor<6xf32>) -> tensor<?x6x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %n = tensor.dim %x, %c0 : tensor<?x6x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x6x?x?xf32>
  %w_ = tensor.dim %x, %c3 : tensor<?x6x?x?xf32>
  %oh = arith.subi %h, %c4 : index
  %ow = arith.subi %w_, %c8 : index
  %e = tensor.empty(%n, %oh, %ow) : tensor<?x6x?x?xf32>
  %acc = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<?x6x?x?xf32>) dimensions = [0, 2, 3]
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<?x6x?x?xf32>, tensor<6x3x5xf32>) outs(%acc : tensor<?x6x?x?xf32>) -> tensor<?x6x?x?xf32>
  return %r : tensor<?x6x?x?xf32>
}
"""


def test_depthwise_conv_is_a_sum_of_shifted_views(rng):
    """A depthwise conv (6 channels, a 3x5 window, dilation 2, a bias as its accumulator) as one
    elementwise sum over its taps, vectorized along the width: batch, height and width dynamic, sizes never
    seen at build time (the smallest, odd, prime, wider than a vector), against float64."""
    exe = ftuner_mlir.compile(DEPTHWISE)           # the rewrite's IR: test/passes/ftuner-select-ukernels.mlir
    w, b = random(rng, (6, 3, 5)), random(rng, (6,))
    for n, h, width in ((1, 5, 9), (2, 7, 26), (3, 13, 41), (1, 37, 97)):
        x = random(rng, (n, 6, h, width))
        oh, ow = h - 4, width - 8

        def conv(f):
            taps = sum(f(x[:, :, 2 * i:2 * i + oh, 2 * j:2 * j + ow].astype(np.float64))
                       * f(w[None, :, i, j, None, None].astype(np.float64)) for i in range(3) for j in range(5))
            return taps + f(b[None, :, None, None].astype(np.float64))
        got = exe["main"](x, w, b)
        assert got.shape == (n, 6, oh, ow)
        assert_matches(got, conv(lambda a: a), conv(np.abs))
