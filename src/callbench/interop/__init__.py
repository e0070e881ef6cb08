"""Interchange with other benchmark tools' file formats."""
