"""Sweeps: a matrix of models × harness modes over suites, one ordinary run folder per cell.

See docs/sweeps.md.
"""
