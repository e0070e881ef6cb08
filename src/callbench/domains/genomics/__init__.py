"""Genomics domain pack: a genome-workbench workspace, its tool registry and benchmark suites."""
