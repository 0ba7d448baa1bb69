"""`ftuner-opt --verify-diagnostics`: check the diagnostics a run emits against the `expected-*`
comments of its input, as mlir-opt does, so error tests are written the upstream way:

    // expected-error @+1 {{ftuner.ukernels describes a f32 batch_matmul}}
    %r = linalg.matmul {...} ...

`@+N` / `@-N` shift the line, `@above` / `@below` mean -1 / +1, no `@` means the comment's own line.
Every expected diagnostic must be emitted (same severity and line, message containing the text) and
every emitted error must be expected.
"""
from __future__ import annotations

import dataclasses
import re

EXPECTED = re.compile(r"//\s*expected-(error|warning|note|remark)\s*(?:@([+-]\d+|above|below))?\s*\{\{(.*?)\}\}")
LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<severity>error|warning|note|remark): "
                     r"(?P<message>.*)$")


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    line: int | None
    severity: str
    message: str


def expected_in(text: str, first_line: int = 1) -> list[Diagnostic]:
    """The expectations written in `text`, whose first line is line `first_line` of the file."""
    out = []
    for offset, line in enumerate(text.splitlines()):
        for m in EXPECTED.finditer(line):
            severity, where, message = m.groups()
            shift = {"above": -1, "below": 1}.get(where, int(where) if where else 0)
            out.append(Diagnostic(first_line + offset + shift, severity, message))
    return out


def parse_emitted(report: str) -> list[Diagnostic]:
    """Diagnostics from formatted lines `file:line:col: severity: message` (others count as errors)."""
    out = []
    for line in report.splitlines():
        m = LOCATED.match(line)
        if m:
            out.append(Diagnostic(int(m["line"]), m["severity"], m["message"]))
        elif line.strip():
            out.append(Diagnostic(None, "error", line.strip()))
    return out


def verify(expected: list[Diagnostic], emitted: list[Diagnostic], name: str) -> list[str]:
    """Complaints, in mlir-opt's words; empty when everything matches."""
    problems = []
    unmatched = list(emitted)
    for want in expected:
        hit = next((d for d in unmatched if d.severity == want.severity and d.line == want.line
                    and want.message in d.message), None)
        if hit is None:
            problems.append(f"{name}:{want.line}: error: expected {want.severity} \"{want.message}\" was not produced")
        else:
            unmatched.remove(hit)
    for extra in unmatched:
        if extra.severity == "error":
            where = f"{name}:{extra.line}" if extra.line else name
            problems.append(f"{where}: error: unexpected error: {extra.message}")
    return problems
