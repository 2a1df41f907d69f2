"""An iteration's evaluation as the journal stores it (`iterations.evaluator_json`).

What `evaluate.EvaluationRecord.compact` wrote – the record of supervisor.md §2 without its
output, plus a line per reading when the iteration took several – read through typed fields by
the decisions' views, the instructions, the diagnoses and the report. The JSON is kept as
written: the ledger shows it byte for byte, whichever version of the tool wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autoresearch.states import EvalStatus


@dataclass(frozen=True)
class StoredEvaluation:
    data: Mapping[str, Any]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StoredEvaluation:
        if not isinstance(data, Mapping):
            raise TypeError(f"an evaluation record is an object, not {type(data).__name__}")
        return cls(dict(data))

    def to_dict(self) -> dict[str, object]:
        return dict(self.data)

    def __bool__(self) -> bool:
        return bool(self.data)  # an empty record says no more than none

    @property
    def status(self) -> EvalStatus | None:
        """The evaluation's outcome (None: the record has none this version knows)."""
        value = self.data.get("status")
        return EvalStatus(value) if value in tuple(EvalStatus) else None

    @property
    def status_text(self) -> str:
        """The recorded status as it was written (empty when there is none)."""
        return str(self.data.get("status") or "")

    @property
    def passed(self) -> bool | None:
        value = self.data.get("pass")
        return value if isinstance(value, bool) else None

    @property
    def score(self) -> float | None:
        """The score as it was written (an integral score stays an int in every view)."""
        return _number(self.data.get("score"))

    @property
    def duration_ms(self) -> float | None:
        return _number(self.data.get("duration_ms"))

    @property
    def exit_code(self) -> int | None:
        value = _number(self.data.get("exit_code"))
        return value if isinstance(value, int) else None

    @property
    def timed_out(self) -> bool:
        return bool(self.data.get("timed_out"))

    @property
    def parse_error(self) -> str | None:
        value = self.data.get("parse_error")
        return str(value) if value else None

    @property
    def spawn_error(self) -> str | None:
        value = self.data.get("spawn_error")
        return str(value) if value else None

    @property
    def log_file(self) -> str | None:
        value = self.data.get("log_file")
        return str(value) if value is not None else None

    @property
    def metrics(self) -> dict[str, float]:
        """The evaluator's named numbers (METRIC lines, a JSON verdict's `metrics`)."""
        found = self.data.get("metrics")
        items = found.items() if isinstance(found, Mapping) else ()
        return {str(k): float(v) for k, v in items if _number(v) is not None}


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
