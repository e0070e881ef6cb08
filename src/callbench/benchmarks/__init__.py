"""The benchmarks, one folder each: suite loader, executor, scorer, interop and CLI commands.

Each folder registers itself through the ``callbench`` entry-point group exactly as a third-party
plugin would (``register(catalog)`` in its ``__init__``); the core never imports a benchmark, and no
benchmark imports another (both rules are import-linter contracts in ``pyproject.toml``).
"""
