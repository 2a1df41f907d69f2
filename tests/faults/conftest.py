from __future__ import annotations

# The supervisor tests' prepared-run fixture, shared rather than copied.
from supervisor.conftest import run

__all__ = ["run"]
