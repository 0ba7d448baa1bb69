"""The GPU backend: host code JIT'd in this process, kernels as PTX for the CUDA driver."""
