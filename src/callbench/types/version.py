"""The installed callbench version (one place, read by the package and by run headers)."""

__version__ = "0.1.0"
