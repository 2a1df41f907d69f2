"""The delegation worker (worker.md): a planning agent hands bulk coding work to a background
agent and gets back compact, verifiable evidence instead of the transcript.

Layout (one seam per module; doors in `mcp/job_tools.py` and `cli/job_cmds.py` only parse,
call `jobs` and render):
* `model`     – the vocabulary: requests and specs (frozen dataclasses; the job's states are
  `states.JobState`, its children are in the one registry of `children.py`);
* `sandbox`   – every path a job names stays inside its allowed roots;
* `outcome`   – the pure `outcome.v1` verdict;
* `evidence`  – workspace snapshots, attributed changes, artifacts, trimmed diffs;
* `jobs`      – the engine: start, get, wait, tail, cancel, list, apply, discard;
* `runner`    – the detached process that carries one job; `liveness` ends dead ones;
* `view`      – a job as callers see it (verdict + evidence) and its text.
Part 2 (zero-model tools, gateway model tools, metrics, circuit breakers) lives beside these,
e.g. `worker/tools/` and `worker/gateway.py`, reusing `sandbox` and `evidence`.
"""
