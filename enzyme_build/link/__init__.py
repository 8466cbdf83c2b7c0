"""The link step: reading fat objects and archives, the whole-program link."""
