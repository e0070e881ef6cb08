"""Where a run's cases are played: ``local`` (the engine's own event loop, :mod:`callbench.harness.engine`)
or ``ray`` (:mod:`.ray_backend`: Ray actors, each with the same async engine; this process still writes
every record). Importing this package never imports Ray."""

from __future__ import annotations

from types import ModuleType

from callbench.errors import missing_extra

RAY_MISSING = str(missing_extra("--backend ray", "ray", "ray"))


def require_ray() -> ModuleType:
    """The ``ray`` module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise missing_extra("--backend ray", "ray", "ray") from None
    return ray
