"""enzyme-build: gradients of C/C++ programs, synthesized on optimized whole-program LLVM IR."""
__version__ = "0.1.0"

# The LLVM major version every tool must match: the one llvmlite 0.50 embeds.
LLVM_MAJOR = 22
