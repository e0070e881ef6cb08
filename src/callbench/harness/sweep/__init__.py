"""Sweeps: a matrix of models × harness modes over suites, one ordinary run folder per cell (docs/sweeps.md)."""
