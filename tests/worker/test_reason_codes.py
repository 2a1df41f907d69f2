"""The verdict's reason codes are wire vocabulary: hosts and scripts match on them. The spec pins
the codes of parts 1–2; the ones part 3 added (`stage_evidence_incomplete`,
`reliability_gates_missing`, the semantic gate's) are pinned here, and each must be documented
(README or the docs site), so renaming one is a deliberate, visible change."""

from __future__ import annotations

from pathlib import Path

from autoresearch.worker.outcome import Reason

ROOT = Path(__file__).resolve().parents[2]
SPEC_CODES = [
    "read_only_modified", "scope_violation", "executor_failed", "check_failed",
    "verification_policy_missing", "expected_change_missing", "checks_missing", "scope_missing",
    "evidence_truncated", "preexisting_changes_unattributed", "workspace_evidence_incomplete",
    "verification_passed",
]  # fmt: skip
PART_3_CODES = [
    "semantic_failed", "semantic_evidence_missing", "semantic_warning",
    "stage_evidence_incomplete", "reliability_gates_missing",
]  # fmt: skip
STATE_CODES = ["deadline_exceeded", "job_queued", "job_running", "job_cancelled"]


def test_the_reason_codes_are_pinned() -> None:
    assert [r.value for r in Reason] == SPEC_CODES + PART_3_CODES + STATE_CODES


def test_every_code_beyond_the_spec_is_documented() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    text = "\n".join(p.read_text() for p in pages if p.is_file())
    undocumented = [code for code in PART_3_CODES if f"`{code}`" not in text]
    assert not undocumented, f"document these reason codes: {undocumented}"
