"""What the supervisor reports of a run, typed: its headline numbers (`status`: kept in
supervisor/run_summary.py, named here too), its details (`status RUN_ID`, MCP run_status), its
lanes, and a finished loop's summary (`run`, `resume`).

The renderers (supervisor/report.py, cli/render.py) read these records; `to_dict` is the JSON
edge (`--json`, the MCP tools' structured output) and keeps the contract's keys and order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.manifest import RunManifest
from autoresearch.journal.totals import RunTotals
from autoresearch.journal.views import ledger_entry
from autoresearch.jsonshape import is_none, json_field, json_shape
from autoresearch.noise import Interval
from autoresearch.states import DecisionKind, LaneState, RunStatus

# a run's headline, apart so that `status` listing the runs never builds the records below
from autoresearch.supervisor.run_summary import SUMMARY_FIRST
from autoresearch.supervisor.run_summary import RunListing as RunListing
from autoresearch.supervisor.run_summary import RunSummary as RunSummary


@dataclass(frozen=True)
class LaneRow:
    """One lane of a `run --lanes K`: what it is doing, its last decision, what it spent."""

    lane: int
    state: LaneState
    detail: str | None
    sessions: int
    base_commit: str | None
    last_iteration: int | None
    last_decision: DecisionKind | None
    last_reason: str | None  # the last decision's reason
    last_evaluation: str | None  # what its evaluation came to (views.evaluation_text)
    iterations: int
    keeps: int
    cost_usd: float | None
    tokens: int
    updated_at: str

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


# a lane whose session or reading a dead driver left in flight (`lane_now`)
MSG_LANE_CUT = "no driver: resume takes it up (it was {was})"
MSG_LANE_ENDED = "no driver: the run ended while it was {was}"


def lane_now(
    published: LaneState,
    detail: str | None,
    published_last: int | None,
    judged_last: int | None,
    driver_alive: bool,
    run_ended: bool,
) -> tuple[LaneState, str | None]:
    """What a lane is doing now, from its row (what its driver last published: `published`,
    `detail`, `published_last`) and the journal, never contradicting the journal.

    The driver publishes its lanes after a judgement, in a transaction of their own: a
    judgement past the row's (`judged_last`: committed, not yet published, or never, the
    driver killed in between) means the lane's candidate was judged and the lane is between
    sessions. With no live driver, nothing of a lane runs: a session or a reading in flight
    was cut off, and waits for `resume` as a lane a clean interrupt stopped does (`waiting`),
    or, once the run is over, is over with it."""
    state = published
    if judged_last != published_last and state != LaneState.STOPPED:
        state, detail = LaneState.IDLE, None
    if driver_alive or state not in (LaneState.AGENT, LaneState.EVALUATING):
        return state, detail
    was = f"{state}: {detail}" if detail else str(state)
    if run_ended:
        return LaneState.STOPPED, MSG_LANE_ENDED.format(was=was)
    return LaneState.WAITING, MSG_LANE_CUT.format(was=was)


@dataclass(frozen=True)
class ArchiveEntry:
    """One elite of a frontier run's archive (best first in `RunDetails.archive`): its score,
    the parent it was kept against (None: the root), its lineage, the iteration that kept it
    (0: the root) and how many sessions started from it; `interval`: the 95 % interval of the
    commit's readings, when they vary (the table rounds the score to it)."""

    commit: str
    score: float | None
    parent: str | None
    lineage: str
    entered: int
    tries: int
    interval: Interval | None = None

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class AgentShare:
    """One agent of a portfolio run (`run --agent A --agent B`): its sessions, keeps and spend
    (dollars and tokens None: not reported by every session; seconds: the sessions' time)."""

    agent: str
    sessions: int
    keeps: int
    cost_usd: float | None
    tokens: int | None
    seconds: float

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def _ledger_entry(record: object) -> object:
    """An iteration's ledger entry, masked (journal/views.ledger_entry): its row's first keys."""
    return ledger_entry(cast(IterationRecord, record))


@dataclass(frozen=True)
class IterationRow:
    """One iteration of `status RUN_ID` (MCP run_status): the journal's record, what its
    evaluation came to and its commit's estimate now. Secrets are masked where it is shown:
    `to_dict` is its ledger entry (journal/views.ledger_entry, masked) with the two added."""

    record: IterationRecord = field(metadata=json_field(inline=True, convert=_ledger_entry))
    evaluation: str  # views.evaluation_text, of the masked reason: pass, fail, `not run: …`
    estimate: Interval | None  # its commit's mean, 95 % interval and n now (estimates)
    # the elite its session started from (a frontier run's; no key otherwise)
    parent: str | None = field(default=None, metadata=json_field(omit_when=is_none))

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class RunDetails:
    """One run with its iterations (each as the ledger file has it, in `to_dict`)."""

    summary: RunSummary = field(metadata=SUMMARY_FIRST)
    manifest: RunManifest  # the run's manifest.json
    iterations: list[IterationRow]
    iterations_total: int
    driver_alive: bool
    report_file: str | None
    lanes: list[LaneRow]
    archive: list[ArchiveEntry] = field(default_factory=list)  # a frontier run's, best first
    agents: list[AgentShare] = field(default_factory=list)  # a portfolio run's, as given

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class LoopSummary:
    """What a finished (or interrupted) loop reports: numbers and where the files are."""

    summary: RunSummary = field(metadata=SUMMARY_FIRST)
    repo_root: str
    sessions: int  # agent sessions in this invocation
    interrupted: bool
    ledger_file: str
    results_file: str
    manifest_file: str
    logs_dir: str
    report_file: str
    totals: RunTotals
    lanes: list[LaneRow]
    archive: list[ArchiveEntry] = field(default_factory=list)  # a frontier run's, best first
    agents: list[AgentShare] = field(default_factory=list)  # a portfolio run's, as given

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


@dataclass(frozen=True)
class StopOutcome:
    """What `stop` did (here, not in lifecycle: the MCP server mirrors it at start-up)."""

    run_id: str
    status: RunStatus  # the run's after the stop (a live driver's run is still running)
    stop_reason: str
    note: str | None
    requested: bool  # True when a live driver was asked to stop instead
