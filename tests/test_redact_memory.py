"""What the process's redactor remembers between calls (redact.current): the user's pattern file
is named again when the environment changes, read again when the file changes, and a mapping's
secret-named keys mask their values row after row."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch import redact
from autoresearch.redact import MASK


def patterns_at(home: Path, pattern: str) -> Path:
    folder = home / "autoresearch"
    folder.mkdir(parents=True)
    (folder / redact.REDACT_FILE).write_text(pattern + "\n")
    return home


def test_a_new_config_home_is_read_at_the_next_redaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = patterns_at(tmp_path / "a", "alpha-[0-9]+"), patterns_at(tmp_path / "b", "beta")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(first))
    assert redact.redact("alpha-1 beta") == f"{MASK} beta"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(second))
    assert redact.redact("alpha-1 beta") == f"alpha-1 {MASK}"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(first))  # back: the first file, as it is now
    (first / "autoresearch" / redact.REDACT_FILE).write_text("alpha-[0-9]+\nbeta\n")
    assert redact.redact("alpha-1 beta") == f"{MASK} {MASK}"


def test_a_removed_pattern_file_unmasks_at_the_next_redaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = patterns_at(tmp_path / "cfg", "gamma")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    assert redact.redact("gamma") == MASK
    (home / "autoresearch" / redact.REDACT_FILE).unlink()
    assert redact.redact("gamma") == "gamma"


def test_every_row_masks_its_secret_named_keys() -> None:
    # the key's answer is remembered (redact.is_secret_name): each row is still masked
    rows = [{"api_key": f"abc{n}defgh", "note": f"row {n}", 7: f"abc{n}defgh"} for n in range(50)]
    masked = redact.build({}).value(rows)
    assert masked == [{"api_key": MASK, "note": f"row {n}", 7: f"abc{n}defgh"} for n in range(50)]
