"""lit configuration: IR tests under test/ (FileCheck), run with the project's interpreter and tools."""
import os
import shutil
import sys

import lit.formats

config.name = "ftuner-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
# IR tests live under test/ (pytest owns test/unit, test/runtime, test/tools)
config.excludes = [".venv", "ftuner_mlir", "tools", "build", "unit", "runtime", "Inputs", "docs"]

bindir = os.path.dirname(sys.executable)
import importlib.util  # noqa: E402

mlir_pkg = os.path.dirname(os.path.dirname(importlib.util.find_spec("mlir._mlir_libs").origin))
llvm_bin = os.path.join(os.path.dirname(mlir_pkg), "llvm", "bin")
mlir_bin = os.path.join(mlir_pkg, "bin")
config.environment["PATH"] = os.pathsep.join([bindir, llvm_bin, mlir_bin, os.environ.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
config.environment["FTUNER_NO_TUNING"] = "1"    # IR tests check the analytic selection only
config.substitutions.append(("%python", sys.executable))
for tool in ("ftuner-opt", "FileCheck", "not"):
    if not shutil.which(tool, path=config.environment["PATH"]):
        lit_config.fatal(f"{tool} not found on {config.environment['PATH']}")
