"""MLIR text of the paper's workloads, with dynamic dims as `?` (used by the demo, tests, benchmarks)."""
from __future__ import annotations


def _zero_init(result_type: str, sizes: list[tuple[str, str, int]], dtype: str) -> str:
    """Lines defining %init: a zero-filled `result_type` whose dynamic sizes are argument dims, given
    in order as (argument, its type, dim index)."""
    lines = [f"%c{d} = arith.constant {d} : index" for d in sorted({d for _, _, d in sizes})]
    lines += [f"%s{i} = tensor.dim {arg}, %c{d} : {t}" for i, (arg, t, d) in enumerate(sizes)]
    lines += [f"%empty = tensor.empty({', '.join(f'%s{i}' for i in range(len(sizes)))}) : {result_type}",
              f"%zero = arith.constant 0.0 : {dtype}",
              f"%init = linalg.fill ins(%zero : {dtype}) outs(%empty : {result_type}) -> {result_type}"]
    return "\n  ".join(lines)


def dense(n: int = 2304, k: int = 768, dtype: str = "f32") -> str:
    """Y[M x N] = X[M x K] . W[N x K]^T: the paper's Dense layer (M = 16*T dynamic)."""
    x, w, y = f"tensor<?x{k}x{dtype}>", f"tensor<{n}x{k}x{dtype}>", f"tensor<?x{n}x{dtype}>"
    return f"""
func.func @dense(%x: {x}, %w: {w}) -> {y} {{
  {_zero_init(y, [("%x", x, 0)], dtype)}
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : {x}, {w}) outs(%init : {y}) -> {y}
  return %r : {y}
}}
"""


def matmul(dtype: str = "f32") -> str:
    """C[M x N] = A[M x K] . B[K x N], every dim dynamic."""
    t = f"tensor<?x?x{dtype}>"
    return f"""
func.func @matmul(%a: {t}, %b: {t}) -> {t} {{
  {_zero_init(t, [("%a", t, 0), ("%b", t, 1)], dtype)}
  %r = linalg.matmul ins(%a, %b : {t}, {t}) outs(%init : {t}) -> {t}
  return %r : {t}
}}
"""


def batch_matmul(dtype: str = "f32") -> str:
    """C[B x M x N] = A[B x M x K] . B[B x K x N], every dim dynamic."""
    t = f"tensor<?x?x?x{dtype}>"
    return f"""
func.func @batch_matmul(%a: {t}, %b: {t}) -> {t} {{
  {_zero_init(t, [("%a", t, 0), ("%a", t, 1), ("%b", t, 2)], dtype)}
  %r = linalg.batch_matmul ins(%a, %b : {t}, {t}) outs(%init : {t}) -> {t}
  return %r : {t}
}}
"""


def matmul_bias_relu(dtype: str = "f32") -> str:
    """relu(A . B + bias) with the bias broadcast over rows: a matmul then an elementwise linalg.generic."""
    t, v = f"tensor<?x?x{dtype}>", f"tensor<?x{dtype}>"
    return f"""
#rows = affine_map<(i, j) -> (i, j)>
#bias = affine_map<(i, j) -> (j)>
func.func @matmul_bias_relu(%a: {t}, %b: {t}, %bias: {v}) -> {t} {{
  {_zero_init(t, [("%a", t, 0), ("%b", t, 1)], dtype)}
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
