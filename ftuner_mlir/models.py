"""MLIR text of the paper's workloads. Each dim is `"?"` (dynamic, the default for the varying ones) or a
number (static: used by the per-shape and padding baselines of the benchmark). With dtype "bf16" the
matmuls take bf16 operands and accumulate into an fp32 result (what the matrix engines compute)."""
from __future__ import annotations

Dim = "int | str"   # annotation only


def _tensor(dims, dtype: str) -> str:
    return f"tensor<{'x'.join(str(d) for d in dims)}x{dtype}>"


def _result(dtype: str) -> str:
    """The element type of a matmul's result: fp32 for bf16 operands, else the operands' own."""
    return "f32" if dtype == "bf16" else dtype


def _zero_init(result_dims, sources, dtype: str) -> str:
    """Lines defining %init, a zero-filled tensor of `result_dims`. `sources[i]` = (argument, its type,
    dim index) gives each dynamic result dim from an argument."""
    rt = _tensor(result_dims, dtype)
    dynamic = [src for d, src in zip(result_dims, sources) if d == "?"]
    lines = [f"%c{d} = arith.constant {d} : index" for d in sorted({d for _, _, d in dynamic})]
    lines += [f"%s{i} = tensor.dim {arg}, %c{d} : {t}" for i, (arg, t, d) in enumerate(dynamic)]
    lines += [f"%empty = tensor.empty({', '.join(f'%s{i}' for i in range(len(dynamic)))}) : {rt}",
              f"%zero = arith.constant 0.0 : {dtype}",
              f"%init = linalg.fill ins(%zero : {dtype}) outs(%empty : {rt}) -> {rt}"]
    return "\n  ".join(lines)


def dense(n: Dim = 2304, k: Dim = 768, dtype: str = "f32", m: Dim = "?") -> str:
    """Y[M x N] = X[M x K] . W[N x K]^T: the paper's Dense layer (M = 16*T)."""
    x, w, y = _tensor((m, k), dtype), _tensor((n, k), dtype), _tensor((m, n), _result(dtype))
    return f"""
func.func @dense(%x: {x}, %w: {w}) -> {y} {{
  {_zero_init((m, n), [("%x", x, 0), ("%w", w, 0)], _result(dtype))}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : {x}, {w}) outs(%init : {y}) -> {y}
  return %r : {y}
}}
"""


def matmul(dtype: str = "f32", m: Dim = "?", n: Dim = "?", k: Dim = "?") -> str:
    """C[M x N] = A[M x K] . B[K x N]."""
    a, b, c = _tensor((m, k), dtype), _tensor((k, n), dtype), _tensor((m, n), _result(dtype))
    return f"""
func.func @matmul(%a: {a}, %b: {b}) -> {c} {{
  {_zero_init((m, n), [("%a", a, 0), ("%b", b, 1)], _result(dtype))}
  %r = linalg.matmul ins(%a, %b : {a}, {b}) outs(%init : {c}) -> {c}
  return %r : {c}
}}
"""


def batch_matmul(dtype: str = "f32", batch: Dim = "?", m: Dim = "?", n: Dim = "?", k: Dim = "?") -> str:
    """C[B x M x N] = A[B x M x K] . B[B x K x N]."""
    a, b, c = _tensor((batch, m, k), dtype), _tensor((batch, k, n), dtype), _tensor((batch, m, n), _result(dtype))
    return f"""
func.func @batch_matmul(%a: {a}, %b: {b}) -> {c} {{
  {_zero_init((batch, m, n), [("%a", a, 0), ("%a", a, 1), ("%b", b, 2)], _result(dtype))}
  %r = linalg.batch_matmul ins(%a, %b : {a}, {b}) outs(%init : {c}) -> {c}
  return %r : {c}
}}
"""


def matmul_bias_relu(dtype: str = "f32") -> str:
    """relu(A . B + bias) with the bias broadcast over rows: a matmul then an elementwise linalg.generic."""
    t, v = _tensor(("?", "?"), dtype), _tensor(("?",), dtype)
    return f"""
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
func.func @matmul_bias_relu(%a: {t}, %b: {t}, %bias: {v}) -> {t} {{
  {_zero_init(("?", "?"), [("%a", t, 0), ("%b", t, 1)], dtype)}
  %mm = linalg.matmul ins(%a, %b : {t}, {t}) outs(%init : {t}) -> {t}
  %r = linalg.generic {{indexing_maps = [#rows, #bias, #rows], iterator_types = ["parallel", "parallel"]}}
      ins(%mm, %bias : {t}, {v}) outs(%empty : {t}) {{
  ^bb0(%x: {dtype}, %b0: {dtype}, %o: {dtype}):
    %s = arith.addf %x, %b0 : {dtype}
    %y = arith.maximumf %s, %zero : {dtype}
    linalg.yield %y : {dtype}
  }} -> {t}
  return %r : {t}
}}
"""


def dense_chain(layers: int, hidden: int = 768, dtype: str = "f32") -> str:
    """`layers` Dense layers of one shape in a row, Y_{i+1} = Y_i . W_i^T with W_i [hidden x hidden]:
    many ops, one distinct uKernel set (the compile-time benchmark's model)."""
    x, w = _tensor(("?", hidden), dtype), _tensor((hidden, hidden), dtype)
    args = ", ".join([f"%x: {x}"] + [f"%w{i}: {w}" for i in range(layers)])
    maps = ("indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, "
            "affine_map<(m, n, k) -> (m, n)>]")
    lines = [f"func.func @dense_chain({args}) -> {x} {{", "  %c0 = arith.constant 0 : index",
             f"  %zero = arith.constant 0.0 : {dtype}", f"  %m = tensor.dim %x, %c0 : {x}"]
    cur = "%x"
    for i in range(layers):
        lines += [f"  %e{i} = tensor.empty(%m) : {x}",
                  f"  %f{i} = linalg.fill ins(%zero : {dtype}) outs(%e{i} : {x}) -> {x}",
                  f"  %y{i} = linalg.matmul {maps} ins({cur}, %w{i} : {x}, {w}) outs(%f{i} : {x}) -> {x}"]
        cur = f"%y{i}"
    return "\n".join(lines + [f"  return {cur} : {x}", "}"]) + "\n"


def conv2d(channels: int, filters: int, kernel: int = 3, stride: int = 1, padding: int = 0,
           layout: str = "nchw", dtype: str = "f32", bias: bool = True, sizes=("?", "?", "?")) -> str:
    """A 2-D convolution with dynamic batch, height and width (or the static ones `sizes` names:
    (batch, height, width), each "?" or an int), written the way torch-mlir emits `nn.Conv2d` (layout
    "nchw": NCHW input, FCHW filter) or channels-last ("nhwc": NHWC, HWCF): a tensor.pad, the output size
    computed with i64 arithmetic ((H + 2p - k) floordiv stride + 1), the bias broadcast into the output
    (or a zero fill), then the linalg conv op. Arguments: x, the filter, the bias."""
    nchw = layout == "nchw"
    n, h, wd = sizes
    out = [d if d == "?" else (d + 2 * padding - kernel) // stride + 1 for d in (h, wd)]
    padded = [d if d == "?" else d + 2 * padding for d in (h, wd)]

    def image(batch, spatial, c):
        return _tensor((batch, c, *spatial) if nchw else (batch, *spatial, c), dtype)
    x, xp = image(n, (h, wd), channels), image(n, padded, channels)
    w = _tensor((filters, channels, kernel, kernel) if nchw else (kernel, kernel, channels, filters), dtype)
    y = image(n, out, filters)
    h_axis, w_axis = (2, 3) if nchw else (1, 2)
    pads = [0, 0, padding, padding] if nchw else [0, padding, padding, 0]
    low = ", ".join(map(str, pads))
    lines = [f"%c0 = arith.constant 0 : index", f"%ch = arith.constant {h_axis} : index",
             f"%cw = arith.constant {w_axis} : index", f"%zero = arith.constant 0.0 : {dtype}",
             f"%shrink = arith.constant {2 * padding - kernel} : i64", f"%stride = arith.constant {stride} : i64",
             "%one = arith.constant 1 : i64",
             f"%n = tensor.dim %x, %c0 : {x}", f"%h = tensor.dim %x, %ch : {x}", f"%w = tensor.dim %x, %cw : {x}"]
    src = "%x"
    if padding:
        lines += [f"%xp = tensor.pad %x low[{low}] high[{low}] {{",
                  "^bb0(" + ", ".join(f"%i{i}: index" for i in range(4)) + "):",
                  f"  tensor.yield %zero : {dtype}", f"}} : {x} to {xp}"]
        src = "%xp"
    for d in ("h", "w"):
        lines += [f"%{d}64 = arith.index_cast %{d} : index to i64", f"%{d}a = arith.addi %{d}64, %shrink : i64",
                  f"%{d}q = arith.floordivsi %{d}a, %stride : i64", f"%{d}o = arith.addi %{d}q, %one : i64",
                  f"%o{d} = arith.index_cast %{d}o : i64 to index"]
    dynamic = [name for name, size in (("%n", n), ("%oh", out[0]), ("%ow", out[1])) if size == "?"]
    lines.append(f"%empty = tensor.empty({', '.join(dynamic)}) : {y}")
    if bias:
        dims = "[0, 2, 3]" if nchw else "[0, 1, 2]"
        lines.append(f"%init = linalg.broadcast ins(%b : {_tensor((filters,), dtype)}) outs(%empty : {y}) "
                     f"dimensions = {dims}")
    else:
        lines.append(f"%init = linalg.fill ins(%zero : {dtype}) outs(%empty : {y}) -> {y}")
    op = "linalg.conv_2d_nchw_fchw" if nchw else "linalg.conv_2d_nhwc_hwcf"
    lines += [f"%r = {op} {{dilations = dense<1> : vector<2xi64>, strides = dense<{stride}> : vector<2xi64>}} "
              f"ins({src}, %f : {xp}, {w}) outs(%init : {y}) -> {y}", f"return %r : {y}"]
    args = f"%x: {x}, %f: {w}" + (f", %b: {_tensor((filters,), dtype)}" if bias else "")
    body = "\n  ".join(lines)
    return f"func.func @conv2d({args}) -> {y} {{\n  {body}\n}}\n"


MODELS = {"dense": dense, "batch_matmul": batch_matmul, "matmul": matmul}   # fully dynamic versions by name
