"""JAX layer (placeholder while the FFI handlers are generated)."""
raise ImportError("the JAX layer of this package is not built yet")
