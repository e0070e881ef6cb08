"""Suites: the ``Suite`` object (cases, registry, executor, prompt, scorers), the path loader for case
files (``loader``), the load-time checks of cases against the DSL and the tools' schemas (``check``),
and resolution of ``name:spec`` strings through the catalog (``resolve``).
"""
