"""Peer implementations (JAX, PyTorch) of the GMM, normalization and n-body gradients, on the
same seeded data as the C kernels; run by `benchmarks/run.py --peers` through run_peers.py."""
