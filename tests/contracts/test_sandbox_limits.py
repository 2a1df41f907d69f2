"""Hostile or mistaken sandbox.md: bounded YAML (no aliases, depth, duplicate keys, decimal
numbers only), error lines counted in the file's own lines, and `check` catching what a run
would later trip on (unknown keys, tune files and parameters)."""

from __future__ import annotations

import pytest

from autoresearch.contracts.sandbox import (
    MSG_BAD_TIMEOUT,
    MSG_NO_FRONTMATTER,
    MSG_NUL_COMMAND,
    parse_sandbox,
    unknown_keys,
)
from autoresearch.errors import ContractError
from contracts.test_sandbox import fm
from helpers import Repo, cli, sandbox_text

EV = "evaluator:\n  command: x\n  format: json\n"
BAD_YAML = "sandbox.md frontmatter is not valid YAML: "


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (EV + "a: &b [1]\nc: *b\n", "aliases (*name) are not allowed"),
        ("x: &a [*a]\n" + EV, "aliases (*name) are not allowed"),
        (EV + "deep: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 32 levels"),
        (EV + "n: " + "9" * 5000 + "\n", "integers have at most 1000 decimal digits"),
        ("evaluator:\n  command: x\n  command: y\n  format: json\n", "duplicate key 'command'"),
        (EV + "evaluator: {}\n", "duplicate key 'evaluator'"),
    ],
)
def test_hostile_yaml_is_one_clear_error(body: str, expected: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_sandbox(fm(body))
    assert str(info.value).startswith(BAD_YAML) and expected in str(info.value)


def test_yaml_error_lines_are_the_files_own() -> None:
    with pytest.raises(ContractError) as info:  # line 4 of the file: `  command: y`
        parse_sandbox(fm("evaluator:\n  command: x\n  command: y\n  format: json\n"))
    assert 'in "sandbox.md", line 4' in str(info.value)


@pytest.mark.parametrize("value", ["10:00", "0x10", "0o17", "1_000", "'600'"])
def test_only_decimal_numbers_are_numbers(value: str) -> None:
    with pytest.raises(ContractError, match="^" + MSG_BAD_TIMEOUT.replace(".", r"\.") + "$"):
        parse_sandbox(fm(EV + f"  timeout_seconds: {value}\n"))


@pytest.mark.parametrize(("value", "seconds"), [("1e-9", 1e-9), ("600", 600.0), ("2.5", 2.5)])
def test_decimal_numbers_in_any_notation(value: str, seconds: float) -> None:
    assert (
        parse_sandbox(fm(EV + f"  timeout_seconds: {value}\n")).evaluator.timeout_seconds == seconds
    )


def test_a_nul_in_the_command_is_refused() -> None:
    with pytest.raises(ContractError, match=MSG_NUL_COMMAND):
        parse_sandbox(fm('evaluator:\n  command: "echo \\0 x"\n  format: json\n'))


def test_a_tune_range_that_overflows_is_refused() -> None:
    tune = "tune:\n  file: t.py\n  parameters:\n    A: {min: -1e308, max: 1e308}\n"
    with pytest.raises(ContractError, match="max - min must be a finite number"):
        parse_sandbox(fm(EV + tune))


def test_the_no_frontmatter_message_names_both_formats() -> None:
    assert "format=json" in MSG_NO_FRONTMATTER and "format=metric" in MSG_NO_FRONTMATTER


def test_unknown_keys_are_named_with_the_closest_known_one() -> None:
    sb = parse_sandbox(fm("evaluatr: {}\n" + EV + "  timeout: 60\n"))
    assert unknown_keys(sb.frontmatter) == [
        "sandbox.md frontmatter evaluatr is not a known key (did you mean evaluator?)",
        "sandbox.md frontmatter evaluator.timeout is not a known key (did you mean timeout_seconds?)",
    ]


def test_check_catches_what_the_run_would_trip_on(repo: Repo) -> None:
    repo.write("t.py", "LR = 0.1\n")
    tune = "tune:\n  file: t.py\n  parameters:\n    LR: {min: 0.01, max: 1}\n    WD: {min: 0, max: 1}\n    X: {min: 0, max: 1, file: gone.py}\n"
    mission = repo.mission(sandbox=sandbox_text(extra="  timeout: 60\n" + tune))
    done = cli("check", str(mission), cwd=repo.root)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert "evaluator.timeout is not a known key (did you mean timeout_seconds?)" in line
    assert "tune parameter WD not found as `WD = <number>` in t.py" in line
    assert "tune parameter X: file gone.py does not exist" in line
    assert len(line.splitlines()) == 1 and "Traceback" not in done.stderr


def test_check_passes_a_clean_mission(repo: Repo) -> None:
    mission = repo.mission()
    assert cli("check", str(mission), cwd=repo.root).returncode == 0


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        (
            "evaluatr:\n  command: x\n  format: json\n",
            "sandbox.md frontmatter must define an evaluator block."
            " (did you mean evaluator? sandbox.md has evaluatr:)",
        ),
        (
            "Evaluator:\n  command: x\n",
            "sandbox.md frontmatter must define an evaluator block."
            " (did you mean evaluator? sandbox.md has Evaluator:)",
        ),
        # nothing close: the spec's message alone
        ("foo: 1\n", "sandbox.md frontmatter must define an evaluator block."),
    ],
)
def test_a_misspelt_evaluator_block_is_named(frontmatter: str, message: str) -> None:
    with pytest.raises(ContractError) as caught:
        parse_sandbox(fm(frontmatter))
    assert str(caught.value) == message
