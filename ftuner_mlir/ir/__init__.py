"""The MLIR plumbing every layer above shares: walking, located failures, attribute codecs, op matching."""
