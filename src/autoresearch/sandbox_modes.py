"""The OS sandbox modes a flag or a record names (`--sandbox`, sandbox.md's `isolation.sandbox`,
a job's `sandbox`) and the default one.

Apart from confine.py, which builds the sandbox and runs bwrap: a reader of runs and jobs
(`status`, MCP) decodes records that name a mode without importing the sandbox itself (issue
36: tests/test_import_graph.py). confine.py serves both names as before.
"""

from __future__ import annotations

from enum import StrEnum


class SandboxMode(StrEnum):
    """`--sandbox` and sandbox.md's `isolation.sandbox`."""

    AUTO = "auto"  # Bubblewrap where the machine allows it, else none (with one warning)
    BWRAP = "bwrap"  # Bubblewrap, refused where the machine cannot
    NONE = "none"  # children run as the user, with everything the user can reach


# Sessions and evaluations are boxed wherever the machine allows it (issue #35).
DEFAULT_MODE = SandboxMode.AUTO
