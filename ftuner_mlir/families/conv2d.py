"""The conv2d family: out[n, oh, ow, f] += in[n, oh*s + kh*d, ow*s + kw*d, c] * filter[kh, kw, c, f] (NHWC
input, HWCF filter), or the NCHW / FCHW form torch-mlir emits. Served by the matmul uKernels through the
implicit-GEMM view: rows are output pixels (n, oh, ow), columns output channels f, the reduction runs
over the window (kh, kw, c)."""
from __future__ import annotations

import dataclasses

from .family import Family


@dataclasses.dataclass(frozen=True)
class Conv2dFamily(Family):
    channels_last: bool = True     # NHWC input, HWCF filter, NHWC output; else NCHW / FCHW / NCHW

    @property
    def gemm(self) -> str:
        """The matmul family the im2col view computes: patches [M, K] times the filter as [K, F]
        (HWCF collapses to it) or as [F, K] (FCHW collapses to it: B stored transposed)."""
        return "matmul" if self.channels_last else "matmul_transpose_b"

    def operand_terms(self, strides: tuple[int, int], dilations: tuple[int, int]) -> list[list[dict[int, int]]]:
        """Every operand dim as {loop index: coefficient}: plain loops, except the input's spatial dims,
        windows `oh * stride + kh * dilation` (the operand maps name them by their output loop)."""
        window = {"oh": ("kh", 0), "ow": ("kw", 1)}
        out = []
        for i, names in enumerate(self.operands):
            dims = []
            for name in names:
                if i == 0 and name in window:
                    kernel, axis = window[name]
                    dims.append({self.loop_index(name): strides[axis], self.loop_index(kernel): dilations[axis]})
                else:
                    dims.append({self.loop_index(name): 1})
            out.append(dims)
        return out

    def patch_order(self) -> tuple[str, ...]:
        """Loops of one im2col row, outermost first, in the order the filter stores its reduction dims
        (so the filter collapses to the GEMM's B operand without a copy)."""
        return ("kh", "kw", "c") if self.channels_last else ("c", "kh", "kw")


NHWC_HWCF = Conv2dFamily("conv2d_nhwc_hwcf", "linalg.conv_2d_nhwc_hwcf", ("n", "oh", "ow", "f", "kh", "kw", "c"),
                         ("kh", "kw", "c"), (("n", "oh", "ow", "c"), ("kh", "kw", "c", "f"), ("n", "oh", "ow", "f")),
                         channels_last=True)
NCHW_FCHW = Conv2dFamily("conv2d_nchw_fchw", "linalg.conv_2d_nchw_fchw", ("n", "f", "oh", "ow", "c", "kh", "kw"),
                         ("c", "kh", "kw"), (("n", "c", "oh", "ow"), ("f", "c", "kh", "kw"), ("n", "f", "oh", "ow")),
                         channels_last=False)
CONV2D_FAMILIES = (NHWC_HWCF, NCHW_FCHW)
