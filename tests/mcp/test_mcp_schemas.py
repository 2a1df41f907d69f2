"""The output models derived from the core dataclasses (`schemas.mirrors`) publish exactly the
schemas the hand-written copies did, through the real client: `derived_schemas.json` holds
those tools' outputSchema as they were before the copies went (to change a schema on purpose,
write the new one there: `PYTHONPATH=tests python tests/mcp/test_mcp_schemas.py`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import connect, mcp_repo
from pydantic import BaseModel

from autoresearch.experiments import (
    InitResult,
    LogReport,
    NotesResult,
    RunReport,
    StatusReport,
    confidence,
    logger,
    status,
)
from autoresearch.journal.sessions import SessionRecord
from autoresearch.mcp import job_tools, schemas
from autoresearch.mcp.server import build_server
from autoresearch.supervisor import summary
from autoresearch.supervisor.summary import StopOutcome
from autoresearch.worker import jobs

SNAPSHOT = Path(__file__).with_name("derived_schemas.json")
DERIVED: list[tuple[type, type[BaseModel]]] = [
    (confidence.Significance, schemas.Significance),
    (confidence.Confidence, schemas.Confidence),
    (logger.GitEffect, schemas.GitEffect),
    (SessionRecord, schemas.Session),
    (InitResult, schemas.InitOutput),
    (RunReport, schemas.RunOutput),
    (LogReport, schemas.LogOutput),
    (NotesResult, schemas.NotesOutput),
    (status.HistoryLine, schemas.HistoryEntry),
    (status.UnjustifiedKeep, schemas.Unjustified),
    (status.PendingRun, schemas.Pending),
    (status.HookStatus, schemas.HookCounts),
    (StatusReport, schemas.SessionStatus),  # experiment_status adds resume_message
    (StopOutcome, schemas.StopOutput),
    (summary.RunSummary, schemas.RunHeadline),  # run_list's runs and run_status add driver_alive
    (jobs.Tail, job_tools.TailOutput),
]
TOOLS = (
    "init_experiment",
    "run_experiment",
    "log_experiment",
    "update_notes",
    "experiment_status",
    "run_stop",
    "run_list",
    "run_status",
    "job_tail",
)


async def _published(root: Path) -> dict[str, Any]:
    async with connect(build_server(root)) as t:
        return {name: t.schemas[name] for name in TOOLS}


@pytest.mark.anyio
async def test_the_tools_publish_the_same_output_schemas_as_before(tmp_path: Path) -> None:
    published = await _published(mcp_repo(tmp_path / "repo").root)
    # as text, in order: the order of properties and of `required` is what clients see too
    assert json.dumps(published, indent=1, ensure_ascii=False) + "\n" == SNAPSHOT.read_text()


@pytest.mark.parametrize(("core", "model"), DERIVED, ids=lambda x: x.__name__)
def test_a_derived_model_has_its_core_dataclass_fields(core: type, model: type[BaseModel]) -> None:
    assert list(model.model_fields) == [f.name for f in dataclasses.fields(core)]


def test_a_field_the_core_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match=r"GitEffect has no field \['sha'\]"):
        schemas.mirrors(logger.GitEffect, shapes={"sha": str})


if __name__ == "__main__":  # write the snapshot anew (a deliberate schema change)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = anyio.run(_published, mcp_repo(Path(tmp) / "repo").root)
    SNAPSHOT.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
