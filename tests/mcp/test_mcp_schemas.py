"""The output models derived from the core dataclasses (`schemas.mirrors`) publish exactly the
schemas the hand-written copies did, through the real client: `derived_schemas.json` holds
those tools' outputSchema as they were before the copies went (to change a schema on purpose,
write the new one there: `PYTHONPATH=tests python tests/mcp/test_mcp_schemas.py`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

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
from autoresearch.jsonshape import FieldShape, json_field
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
    # a NamedTuple core (summary.RunSummary: `status` builds it) has its fields in `_fields`
    names = getattr(core, "_fields", None) or [f.name for f in dataclasses.fields(core)]
    assert list(model.model_fields) == list(names)


def test_a_field_the_core_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match=r"GitEffect has no field \['sha'\]"):
        schemas.mirrors(logger.GitEffect, shapes={"sha": str})


@dataclasses.dataclass(frozen=True)
class _Shaped:
    state: str = dataclasses.field(metadata=json_field(key="status"))
    secret: str = dataclasses.field(default="", metadata=json_field(hidden=True))
    count: int = 0


def test_a_derived_model_names_the_keys_the_cores_json_writes() -> None:
    """A renamed field under its JSON key, a hidden one left out: the schema of what is sent."""

    @schemas.mirrors(_Shaped)
    class Shaped(BaseModel):
        pass

    assert list(Shaped.model_fields) == ["status", "count"]


@dataclasses.dataclass(frozen=True)
class _Converted:
    ms: int = dataclasses.field(default=0, metadata=json_field(convert=str))


@dataclasses.dataclass(frozen=True)
class _Extra:
    a: int = 0

    def json_extra(self) -> dict[str, object]:
        return {"b": 1}


@pytest.mark.parametrize(
    ("core", "refusal"),
    [(_Converted, r"_Converted converts \['ms'\]"), (_Extra, "keys that are none of its fields")],
)
def test_a_core_whose_json_the_fields_do_not_type_is_refused(core: type, refusal: str) -> None:
    with pytest.raises(TypeError, match=refusal):
        schemas.mirrors(core)


class _Point(NamedTuple):
    """A value `status` builds: a NamedTuple, whose JSON (to_dict) is an object."""

    x: float
    n: int = 1


class _Renamed(NamedTuple):
    x: float

    @staticmethod
    def json_fields() -> Mapping[str, Mapping[str, FieldShape]]:
        return {"x": json_field(key="y")}


@dataclasses.dataclass(frozen=True)
class _HoldsPoint:
    point: _Point | None = None


@dataclasses.dataclass(frozen=True)
class _HoldsRenamed:
    renamed: _Renamed


def test_a_named_tuple_in_a_core_is_published_as_the_object_its_json_is() -> None:
    @schemas.mirrors(_HoldsPoint)
    class Holds(BaseModel):
        pass

    point = Holds.model_json_schema()["$defs"]["_Point"]  # not pydantic's array of a tuple
    assert point["type"] == "object" and list(point["properties"]) == ["x", "n"]
    assert point["required"] == ["x"] and point["description"] == _Point.__doc__


def test_a_named_tuple_whose_json_is_not_its_fields_is_mirrored_not_guessed() -> None:
    with pytest.raises(TypeError, match="_Renamed's JSON is not its fields"):

        @schemas.mirrors(_HoldsRenamed)
        class Holds(BaseModel):
            pass


if __name__ == "__main__":  # write the snapshot anew (a deliberate schema change)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = anyio.run(_published, mcp_repo(Path(tmp) / "repo").root)
    SNAPSHOT.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
