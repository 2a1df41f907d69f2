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


class Token:
    """An object without a JSON type whose text is a token."""

    def __str__(self) -> str:
        return "abcd1234efgh"


@pytest.mark.parametrize(
    "value",
    [
        {"api_token": Token()},  # a secret-named key: its value masked whole, whatever its type
        {"api_token": Path("/tmp/abcd1234efgh")},
        {12345678: "x"},  # a key that is no string, holding a secret
        {1: "a", "1": "b"},  # two keys JSON writes alike: the last one stays
        {True: 1, None: 2, 2.5: 3, RunStatus.RUNNING: 4},
        [("tuple", Token()), {"nested": {"password": Token()}}],
    ],
)
def test_the_output_is_that_of_masking_the_value_written_and_read_back(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: object
) -> None:
    """The output is what masking the value's JSON text read back gave (emit_json's way until
    it masked in place): the same for values JSON has no type for, and for keys."""
    from autoresearch.redact import redact_value

    monkeypatch.setenv("SERVICE_PASSWORD", "12345678")
    emit_json(value)
    read_back = json.loads(json.dumps(value, default=str))
    assert (
        capsys.readouterr().out
        == json.dumps(redact_value(read_back), indent=2, ensure_ascii=False) + "\n"
    )
