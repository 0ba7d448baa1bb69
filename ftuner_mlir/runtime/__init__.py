"""Running compiled modules: signatures and shape rules, argument checks, the JIT'd entry points."""
