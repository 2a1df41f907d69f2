"""The output models derived from core dataclasses (`schemas.mirrors`) publish the schemas the
hand-written copies did (`mirrored_schemas.json` was taken from the tools' outputSchema before
the copies went), through the real client."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from mcp_helpers import connect, mcp_repo
from pydantic import BaseModel

from autoresearch.experiments import confidence, logger
from autoresearch.journal.sessions import SessionRecord
from autoresearch.mcp import schemas
from autoresearch.mcp.server import build_server

SNAPSHOT = Path(__file__).with_name("mirrored_schemas.json")
MIRRORED: list[tuple[type, type[BaseModel]]] = [
    (confidence.Significance, schemas.Significance),
    (confidence.Confidence, schemas.Confidence),
    (logger.GitEffect, schemas.GitEffect),
    (SessionRecord, schemas.Session),
]


@pytest.mark.anyio
async def test_the_tools_publish_the_same_schemas_as_before(tmp_path: Path) -> None:
    names = {model.__name__ for _, model in MIRRORED}
    async with connect(build_server(mcp_repo(tmp_path / "repo").root)) as t:
        published = {
            tool: {k: v for k, v in schema.get("$defs", {}).items() if k in names}
            for tool, schema in t.schemas.items()
        }
    published = {tool: defs for tool, defs in published.items() if defs}
    # compared as text: the order of properties and of `required` is what clients see too
    expected = json.loads(SNAPSHOT.read_text())
    assert json.dumps(published, sort_keys=True) == json.dumps(expected, sort_keys=True)
    for tool, defs in expected.items():
        for name, schema in defs.items():
            assert list(published[tool][name]["properties"]) == list(schema["properties"])
            assert published[tool][name].get("required") == schema.get("required")


@pytest.mark.parametrize(("core", "model"), MIRRORED, ids=lambda x: x.__name__)
def test_a_mirrored_model_is_its_core_dataclass(core: type, model: type[BaseModel]) -> None:
    assert list(model.model_fields) == [f.name for f in dataclasses.fields(core)]


def test_a_description_of_a_field_the_core_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match="GitEffect has no field"):
        schemas.mirrors(logger.GitEffect, describe={"sha": "x"})
