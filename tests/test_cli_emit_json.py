"""`--json`'s one writer (cli/common.emit_json): every string masked, a value JSON has no type
for written as its str() and masked too, the layout unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoresearch.cli.common import emit_json
from autoresearch.redact import MASK
from autoresearch.states import RunStatus

SECRET = "plain-looking-value-789"


class Holder:
    """An object without a JSON type, whose text holds the secret."""

    def __str__(self) -> str:
        return f"holder of {SECRET}"


def test_every_string_and_every_unknown_value_is_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", SECRET)
    value = {
        "text": f"see {SECRET}",
        "api_key": "abc123defgh",  # a secret-named key's token, in no environment
        "nested": [(SECRET, 1, None, 2.5, True)],
        "status": RunStatus.RUNNING,
        "path": Path("/tmp") / SECRET,
        "object": Holder(),
        SECRET: "a key",
    }
    emit_json(value)
    out = capsys.readouterr().out
    assert SECRET not in out and "abc123defgh" not in out
    assert json.loads(out) == {
        "text": f"see {MASK}",
        "api_key": MASK,
        "nested": [[MASK, 1, None, 2.5, True]],
        "status": "running",
        "path": f"/tmp/{MASK}",
        "object": f"holder of {MASK}",
        MASK: "a key",
    }
    assert out.startswith('{\n  "text": ') and out.endswith("}\n")  # indented by two, as ever
