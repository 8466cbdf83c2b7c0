"""enzyme-build: gradients of C/C++ programs, synthesized on optimized whole-program LLVM IR."""
__version__ = "0.1.0"

# The LLVM major version every tool must match: the one llvmlite 0.50 embeds.
LLVM_MAJOR = 22


def load(sources, exports, name=None, **options):
    """Build (once, cached by content hash) and import a differentiable package from C sources:
    `enzyme_build.load("energy.c", exports=["energy(x[n], n, k)"])`. See docs/packaging.md."""
    from .package.cache import load as load_package  # imported on use: `cc` starts fast
    return load_package(sources, exports, name=name, **options)
