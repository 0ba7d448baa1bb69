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

    gemm = "matmul"     # the matmul family the im2col view computes (see codegen/conv2d.py)

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

    def patch_loops(self) -> tuple[str, ...]:
        """The im2col tensor's dims: the reduction dims in the filter's order (so the filter collapses
        to a GEMM operand without a copy), next to the output pixels they pair with."""
        if self.channels_last:
            return ("n", "oh", "ow", "kh", "kw", "c")
        return ("n", "c", "kh", "kw", "oh", "ow")


NHWC_HWCF = Conv2dFamily("conv2d_nhwc_hwcf", "linalg.conv_2d_nhwc_hwcf", ("n", "oh", "ow", "f", "kh", "kw", "c"),
                         ("kh", "kw", "c"), (("n", "oh", "ow", "c"), ("kh", "kw", "c", "f"), ("n", "oh", "ow", "f")),
                         channels_last=True)
NCHW_FCHW = Conv2dFamily("conv2d_nchw_fchw", "linalg.conv_2d_nchw_fchw", ("n", "f", "oh", "ow", "c", "kh", "kw"),
                         ("c", "kh", "kw"), (("n", "c", "oh", "ow"), ("f", "c", "kh", "kw"), ("n", "f", "oh", "ow")),
                         channels_last=False)
CONV2D_FAMILIES = (NHWC_HWCF, NCHW_FCHW)
