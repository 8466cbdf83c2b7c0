"""Runtime modules copied verbatim into every generated package (numpy core, torch and JAX layers)."""
