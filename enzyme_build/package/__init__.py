"""`enzyme-build package`: differentiable shared libraries with C, NumPy, PyTorch and JAX bindings.

spec (export specs) → signature (clang's AST) → binding (roles) → shim (C) + pygen (Python)
+ jaxgen (FFI handlers); builder puts them together; cache serves `enzyme_build.load`.
"""
