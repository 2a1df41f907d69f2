"""The worker's zero-model tools (worker.md "Zero-model tools"): bounded, deterministic,
path-sandboxed, each result with a receipt (bytes read, bytes returned, artifact refs,
truncated). One module per tool; `base` holds what they share; `metrics` records every call.
"""
