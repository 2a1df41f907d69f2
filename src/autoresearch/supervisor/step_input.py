"""What the caller of a step hands it about the candidate, as one value the step asks.

The single loop and `autoresearch step` hand over a session's notes and record and let the
step measure; a lane (supervisor/lanes.py) may also have settled part of the judgement before
the iteration was numbered: a reading of the candidate taken in an evaluation slot, or a
decision forced without evaluation (a replay conflict). Keeping those here leaves the step's
own signature free of anything only one layout uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.decide import Decision
from autoresearch.evaluate import EvaluationRecord


@dataclass(frozen=True)
class StepInput:
    """A candidate as handed to `supervisor/step.step`."""

    notes: tuple[str, ...] = ()  # decision notes of the session (leftovers saved, a replay)
    agent: AgentRecord | None = None  # the session's record, journaled with the iteration
    # a reading of the candidate taken already: the answer to the policy's first request of one
    reading: EvaluationRecord | None = None
    # a decision taken without evaluation: only the artifact's schema is checked
    forced: Decision | None = None


# nothing settled: the step validates, measures and decides itself
FRESH = StepInput()
