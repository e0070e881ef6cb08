"""Providers: real model services and built-in agents behind one async ``generate`` contract."""

from callbench.providers.base import Provider

__all__ = ["Provider"]
