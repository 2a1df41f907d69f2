"""The OS sandbox of a delegation job's children: its agent sessions and its checks.

The same Bubblewrap box as a run's (`confine.Box`), chosen the same way: a job asks for a mode
(`--sandbox`, MCP `sandbox`; default `confine.DEFAULT_MODE`), `auto` falls back to no sandbox
with one warning where the machine cannot, an explicit `bwrap` is refused there before the job
is queued. The job records the mode it got (`JobSpec.sandbox`: bwrap or none). Inside, the job's
allowed folders (its worktree for `isolation: worktree`) are writable and the rest of the
repository read-only; `.autoresearch/` and $HOME's credentials are not visible. Unlike a run's
evaluations, a job's checks keep the network: a job has no sandbox.md to ask for it, and its
checks are the caller's own commands (test suites that fetch what they need).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from autoresearch.confine import DEFAULT_MODE, Box, SandboxMode, choose, machine_support
from autoresearch.contracts.job import JobSpec
from autoresearch.states import Isolation


def to_stderr(line: str) -> None:
    """Where a job's sandbox warning goes by default (an MCP server's stderr is its log)."""
    print(f"autoresearch: {line}", file=sys.stderr)


def job_sandbox(requested: SandboxMode | None, warn: Callable[[str], None]) -> SandboxMode:
    """The mode a job asking for `requested` runs under (BWRAP or NONE); `auto` that fell back
    says so through `warn`, an explicit `bwrap` the machine cannot give is refused."""
    used = choose(requested or DEFAULT_MODE, machine_support())
    if used.note:
        warn(used.note)
    return used.mode


def job_box(spec: JobSpec, workdir: Path) -> Box | None:
    """The box of the job's children working in `workdir` (writable, and in place the job's
    other allowed folders too); None for a job that runs unconfined. A job queued for the
    sandbox on a machine that can no longer give it is refused, never run unconfined."""
    if spec.sandbox is not SandboxMode.BWRAP:
        return None
    used = choose(SandboxMode.BWRAP, machine_support())
    in_place = spec.isolation is Isolation.IN_PLACE
    others = tuple(Path(d) for d in spec.allowed_dirs if in_place and Path(d) != workdir)
    return Box(bwrap=used.bwrap or "", repo_root=Path(spec.repo_root), writable=others)
