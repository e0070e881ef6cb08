// Breakdowns across runs: per category, per tool, expected-vs-called confusion, reason codes.
