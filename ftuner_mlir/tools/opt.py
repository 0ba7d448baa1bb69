"""ftuner-opt: like mlir-opt, with the ftuner passes registered.

    ftuner-opt model.mlir --ftuner-select-ukernels --ftuner-tile
    ftuner-opt model.mlir --ftuner-cpu-pipeline -o model.llvm.mlir
    ftuner-opt model.mlir --pass-pipeline='builtin.module(ftuner-select-ukernels,canonicalize,ftuner-tile)'

Pass flags run in the order given; any `--name[=options]` that is not a driver option names a pass
(ours or upstream), as in mlir-opt. Errors print as MLIR diagnostics and exit with code 1.
"""
from __future__ import annotations

import os
import re
import sys

from ..ir.attributes import TARGET_ATTR

USAGE = """usage: ftuner-opt [INPUT] [-o OUTPUT] [--target=SPEC] [PASS FLAGS...] [--pass-pipeline=PIPELINE]

  INPUT                  MLIR file ('-' or nothing: standard input)
  -o OUTPUT              write the result here (default: standard output)
  --target=SPEC          host (default), x86-avx512, x86-avx2, or a JSON file of CpuTarget fields; a
                         module may name its own: module attributes {ftuner.target = "x86-avx2"}
  --pass-pipeline=P      a textual pipeline mixing upstream passes and ftuner passes
  -p P                   same as --pass-pipeline
  --list-passes          list the ftuner passes and their options
  --list-phases          the CPU pipeline for the target, phase by phase (docs/pipeline.md)
  --print-target         print the resolved target and exit
  --NAME[=OPTIONS]       run pass NAME (an ftuner pass or any upstream MLIR pass); options as
                         'key=value key2=value2', the same as NAME{key=value key2=value2}
  --mlir-print-ir-before-all, --mlir-print-ir-after-all, --mlir-print-ir-after-failure
                         print the IR to stderr around each pass (each ftuner pass under its flag)
  --mlir-timing          a pass timing report on stderr
  --mlir-print-debuginfo print locations in the output
  --allow-unregistered-dialect   parse ops of dialects that are not registered
  --split-input-file     process each chunk between '// -----' lines on its own; outputs joined by it
  --verify-diagnostics   check emitted diagnostics against 'expected-error @+1 {{...}}' comments (exit 0
                         when they match exactly, as mlir-opt)
  --version              the project's and the MLIR wheels' versions
  -h, --help             this help
"""


class UsageError(Exception):
    pass


SWITCHES = {"-h": "help", "--help": "help", "--list-passes": "list", "--list-phases": "phases", "--print-target": "print_target",
            "--split-input-file": "split", "--verify-diagnostics": "verify", "--version": "version",
            "--mlir-print-debuginfo": "debuginfo", "--allow-unregistered-dialect": "unregistered"}
INSTRUMENT_FLAGS = {"--mlir-print-ir-before-all": "print_before_all", "--mlir-print-ir-after-all": "print_after_all",
                    "--mlir-print-ir-after-failure": "print_after_failure", "--mlir-timing": "timing"}


def parse_args(argv: list[str]) -> dict:
    opts = {"input": None, "output": None, "target": None, "stages": [], "list": False, "phases": False, "print_target": False,
            "split": False, "verify": False, "instrument": {}, "debuginfo": False, "unregistered": False}
    it = iter(argv)
    for arg in it:
        if arg in SWITCHES:
            opts[SWITCHES[arg]] = True
        elif arg in INSTRUMENT_FLAGS:
            opts["instrument"][INSTRUMENT_FLAGS[arg]] = True
        elif arg == "-o":
            opts["output"] = next(it, None) or _missing("-o")
        elif arg.startswith("-o") and len(arg) > 2:
            opts["output"] = arg[2:]
        elif arg.startswith("--target"):
            opts["target"] = _value(arg, it, "--target")
        elif arg.startswith("--pass-pipeline") or arg == "-p":
            opts["stages"].append(("pipeline", _value(arg, it, arg.split("=")[0])))
        elif arg.startswith("--") and len(arg) > 2:
            name, eq, options = arg[2:].partition("=")
            opts["stages"].append(("pass", f"{name}{{{options}}}" if eq and options else name))
        elif arg == "-" or not arg.startswith("-"):
            if opts["input"] is not None:
                raise UsageError(f"more than one input file: {opts['input']!r} and {arg!r}")
            opts["input"] = arg
        else:
            raise UsageError(f"unknown option {arg!r}")
    return opts


def _missing(flag: str):
    raise UsageError(f"{flag} needs a value")


def _value(arg: str, it, flag: str) -> str:
    if "=" in arg:
        return arg.split("=", 1)[1]
    return next(it, None) or _missing(flag)


def _fail(message: str) -> int:
    sys.stderr.write(message.rstrip("\n") + "\n")
    return 1


def run(argv: list[str]) -> int:
    try:
        opts = parse_args(argv)
    except UsageError as err:
        return _fail(f"ftuner-opt: {err}\n{USAGE}")
    if opts.get("help"):
        sys.stdout.write(USAGE)
        return 0
    if opts.get("version"):
        from ..version import describe
        sys.stdout.write(describe("ftuner-opt") + "\n")
        return 0

    from ..hardware.targets import parse_target
    from ..passes import REGISTRY
    if opts["list"]:
        sys.stdout.write("ftuner passes:\n" + "\n".join(cls.help() for cls in REGISTRY.values()) + "\n")
        return 0
    try:
        target = parse_target(opts["target"] or "host")
    except ValueError as err:
        return _fail(f"ftuner-opt: {err}")
    if opts["print_target"]:
        sys.stdout.write(target.describe() + "\n" + target.to_json() + "\n")
        return 0
    if opts["phases"]:
        from .pipeline_doc import describe
        sys.stdout.write(describe(target))
        return 0
    return _transform(opts, target)


def _transform(opts: dict, target) -> int:
    from .. import driver

    path = opts["input"]
    name = "<stdin>" if path in (None, "-") else path
    try:
        data = sys.stdin.buffer.read() if name == "<stdin>" else open(path, "rb").read()
    except OSError as err:
        return _fail(f"ftuner-opt: cannot read {path}: {err.strerror}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        return _fail(f"{name}:{line}: error: input is not valid UTF-8 (byte 0x{data[err.start]:02x} at offset "
                     f"{err.start})")
    too_deep = nesting_error(text, name)
    if too_deep:
        return _fail(too_deep)
    try:
        stages = _stages(opts, target)
    except ValueError as err:
        return _fail(f"ftuner-opt: {err}")
    chunks = _split(text) if opts["split"] else [(1, text)]
    outputs, failed = [], False
    for first_line, chunk in chunks:
        whole_file = path if len(chunks) == 1 and name != "<stdin>" else None
        out, report = _run_chunk(chunk, first_line, name, whole_file, stages, opts)
        if opts["verify"]:
            from .verify_diagnostics import expected_in, parse_emitted, verify
            problems = verify(expected_in(chunk, first_line), parse_emitted(report or ""), name)
            if problems:
                sys.stderr.write("\n".join(problems) + "\n")
                failed = True
        elif report:
            sys.stderr.write(with_source(report, text, name))
            failed = True
        if out is not None:
            outputs.append(out)
    if failed:
        return 1
    out = "// -----\n".join(outputs)
    try:
        if opts["output"] not in (None, "-"):
            with open(opts["output"], "w") as f:
                f.write(out)
        else:
            sys.stdout.write(out)
            sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as err:
        return _fail(f"ftuner-opt: cannot write {opts['output'] or 'standard output'}: {err.strerror}")
    return 0


def with_source(report: str, text: str, name: str) -> str:
    """Each `name:line:col: severity: ...` line followed by that source line and a caret, as mlir-opt."""
    lines = text.splitlines()
    out = []
    for line in report.rstrip("\n").splitlines():
        out.append(line)
        m = re.match(rf"^{re.escape(name)}:(\d+):(\d+): (error|warning|note|remark): ", line)
        if m and 1 <= int(m.group(1)) <= len(lines):
            source = lines[int(m.group(1)) - 1].expandtabs(1)
            out += [source, " " * (int(m.group(2)) - 1) + "^"]
    return "\n".join(out) + "\n"


SPLIT_MARKER = re.compile(r"^// -----\s*$", re.M)


def _split(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each chunk between `// -----` lines (--split-input-file)."""
    chunks, start, line = [], 0, 1
    for m in SPLIT_MARKER.finditer(text):
        chunks.append((line, text[start:m.start()]))
        line += text.count("\n", start, m.end()) + 1
        start = m.end() + 1
    chunks.append((line, text[start:]))
    return chunks


def _stages(opts: dict, target) -> list:
    from .. import driver

    stages = []
    for kind, spec in opts["stages"]:
        stages += driver.parse_pipeline(spec, target) if kind == "pipeline" else [driver.instantiate(spec, target)]
    return stages




def _module_target(module, opts: dict):
    """The module's own `ftuner.target = "SPEC"`, if it has one: the target of its passes unless
    --target names another (a conflict is an error). None: use --target (default host)."""
    from mlir import ir

    from ..hardware.targets import parse_target

    attrs = module.operation.attributes
    if TARGET_ATTR not in attrs:
        return None
    if not isinstance(attrs[TARGET_ATTR], ir.StringAttr):
        raise ValueError(f"{TARGET_ATTR} must be a string naming a target (e.g. \"x86-avx512\")")
    spec = ir.StringAttr(attrs[TARGET_ATTR]).value
    target = parse_target(spec)
    if opts["target"] is not None and parse_target(opts["target"]) != target:
        raise ValueError(f"the module's {TARGET_ATTR} \"{spec}\" conflicts with --target={opts['target']}")
    return target


def _run_chunk(text: str, first_line: int, name: str, path: str | None, stages, opts: dict):
    """(printed module or None, formatted diagnostics or None) for one input chunk. Chunks are parsed
    with their preceding lines blanked, so locations keep the file's line numbers."""
    from mlir import ir

    from .. import driver
    from ..ir import weights
    from ..ir.diagnostics import PassFailure, format_location, format_mlir_error

    with ir.Context() as ctx:
        ctx.allow_unregistered_dialects = opts["unregistered"]
        try:
            # parseFile keeps the file name in locations; generated code parsed later says "-"
            module = ir.Module.parseFile(path) if path else ir.Module.parse("\n" * (first_line - 1) + text)
        except ir.MLIRError as err:
            return None, format_mlir_error(err, name)
        try:
            weights.attach(module)
            own = _module_target(module, opts)
        except ValueError as err:            # ExternalWeightsError too
            return None, f"{format_location(str(module.operation.location), name)}: error: {err}"
        try:
            driver.run_pipeline(module, _stages(opts, own) if own is not None else stages, opts["instrument"])
        except ir.MLIRError as err:
            return None, format_mlir_error(err, name)
        except PassFailure as err:
            return None, f"{format_location(err.location, name)}: error: {err.message}"
        except ValueError as err:       # a malformed upstream pass name or option
            return None, f"ftuner-opt: {err}"
        if opts["debuginfo"]:
            return module.operation.get_asm(enable_debug_info=True), None
        return str(module), None


MAX_NESTING = 2000     # region depth MLIR's recursive parser handles; 10,000 overflowed its stack


def nesting_error(text: str, name: str) -> str | None:
    """A diagnostic when braces nest deeper than MAX_NESTING (checked before parsing: too deep a nest
    crashes the parser instead of failing)."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|[{}]', text):
        token = m.group()
        if token == "{":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, m.start()) + 1
                return f"{name}:{line}: error: regions nest deeper than {MAX_NESTING} levels"
        elif token == "}":
            depth -= 1
    return None


def main() -> None:
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
