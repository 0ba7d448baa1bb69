"""Reading a profile-mode module's clocks (lowering/buffers/profile.py): seconds per timed site, summed by kind."""
from __future__ import annotations

import ctypes
from collections import defaultdict

try:
    from .function import scalar_function
except ImportError:                     # pragma: no cover - in an exported folder, as a script
    from function import scalar_function

TAKE_PROFILE = "ftuner_take_profile"     # (slot: int64) -> seconds of that slot since the last take


def take_profile(address: int, packed: bool = False):
    """The module's TAKE_PROFILE function at `address`: (slot) -> its seconds, the slot reset."""
    return scalar_function(address, ctypes.c_double, (ctypes.c_int64,), packed)


class Profiler:
    """The clocks of one module: `sites` lists (function, kind, label) per slot, slot 0 of each
    function being its whole call."""

    def __init__(self, take, sites: list):
        self._take = take
        self.sites = [tuple(site) for site in sites]

    def take(self) -> list[float]:
        """Seconds per slot since the last take (the clocks restart from zero)."""
        return [self._take(slot) for slot in range(len(self.sites))]

    def breakdown(self, function: str, seconds: list[float], calls: int) -> "Profile":
        totals, by_site = defaultdict(float), []
        total = 0.0
        for (name, kind, label), spent in zip(self.sites, seconds):
            if name != function:
                continue
            if kind == "total":
                total = spent / calls
                continue
            totals[kind] += spent / calls
            by_site.append((spent / calls, kind, label))
        return Profile(function, calls, total, dict(totals), sorted(by_site, reverse=True))


class Profile:
    """Seconds per call: `total`, `by_kind` (uKernels, elementwise, reduction, copy/layout, fill, ...;
    `glue` is what no site covers), `sites` (seconds, kind, label), slowest first."""

    def __init__(self, function: str, calls: int, total: float, by_kind: dict, sites: list):
        self.function, self.calls, self.total, self.sites = function, calls, total, sites
        self.by_kind = dict(sorted(by_kind.items(), key=lambda item: -item[1]))
        self.by_kind["glue"] = max(total - sum(by_kind.values()), 0.0)

    def table(self, top: int = 10) -> str:
        lines = [f"@{self.function}: {self.total * 1e3:.3f} ms per call (mean of {self.calls})",
                 f"  {'kind':<14} {'ms/call':>10} {'share':>7}"]
        for kind, spent in self.by_kind.items():
            share = spent / self.total if self.total else 0.0
            lines.append(f"  {kind:<14} {spent * 1e3:10.3f} {share:7.1%}")
        if self.sites and top:
            lines.append("  slowest sites:")
            for spent, kind, label in self.sites[:top]:
                lines.append(f"  {spent * 1e3:10.3f} ms  {kind:<12} {label}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()
