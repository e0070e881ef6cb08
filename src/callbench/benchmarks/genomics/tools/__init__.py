"""Real implementations of the genomics tools, one module per category group."""
