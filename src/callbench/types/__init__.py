"""The bottom data layer: plain typed values every other layer shares, importing nothing of callbench
but ``errors``.

``messages`` (chat messages, tool calls, generation settings), ``case`` and ``dsl`` (a case, its expected
steps and the argument DSL with the code that realises DSL values), ``contract`` (a tool contract),
``trace`` (what happened in an episode), ``verdict`` (verdicts and reason codes), ``records`` and
``summary`` (the run folder's typed, versioned records), ``suite_options`` (what a suite loader
receives), plus ``hashing``, ``names``, ``frozen`` and ``version`` helpers. Import from the
submodules; this package re-exports nothing.
"""
