"""The BFCL model name the tests score results under (shared by test modules; not a conftest import)."""

MODEL = "gpt-4o-2024-11-20-FC"  # registered FC model whose BFCL config sets underscore_to_dot
