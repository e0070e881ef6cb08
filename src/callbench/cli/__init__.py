"""The ``callbench`` command line: one module per subcommand, each exposing ``register(app)``."""
