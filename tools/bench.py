#!/usr/bin/env python3
"""The benchmark as a script: the same as `ftuner bench` (see --help)."""
import sys

from ftuner_mlir.tools.cli import main

if __name__ == "__main__":
    main(["bench", *sys.argv[1:]])
