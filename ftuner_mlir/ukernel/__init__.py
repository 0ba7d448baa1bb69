"""uKernel space: candidate tiles, analytic scores, the chosen set, and how it covers a shape."""
from .space import RegisterTile, UKernelSet, candidates, ranked_candidates, select
from .cover import Coverage, block_shape, cover, strips

__all__ = ["RegisterTile", "UKernelSet", "candidates", "ranked_candidates", "select",
           "Coverage", "block_shape", "cover", "strips"]
