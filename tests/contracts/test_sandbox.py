"""sandbox.md parsing: every message of supervisor.md §1, in order, and the slug rules."""

from __future__ import annotations

import json

import pytest

from autoresearch.contracts.sandbox import (
    EvaluatorSpec,
    mission_slug,
    parse_sandbox,
    unknown_keys,
)
from autoresearch.errors import ContractError
from autoresearch.noise import NoiseMode, NoisePolicy
from autoresearch.states import EvalFormat

# supervisor.md §2's exact sentence, then a hint (the contract allows one after it)
SPEC_NO_FM = (
    "sandbox.md must start with YAML frontmatter containing evaluator.command and "
    "evaluator.format=json."
)
NO_FM = SPEC_NO_FM + " (evaluator.format=metric with evaluator.metric works too.)"
NO_EVAL = "sandbox.md frontmatter must define an evaluator block."
BAD_POLICY = (
    "sandbox.md frontmatter evaluator.keep_policy must be one of: score_improvement, pass_only."
)
NO_CMD = "sandbox.md frontmatter evaluator.command is required."
NO_FORMAT = (
    "sandbox.md frontmatter evaluator.format is required and must be json in autoresearch v1."
)
BAD_FORMAT = "sandbox.md frontmatter evaluator.format must be json or metric in autoresearch v1."
NO_METRIC = "sandbox.md frontmatter evaluator.metric is required when format is metric."


def fm(body: str) -> str:
    return f"---\n{body}---\npolicy\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("evaluator:\n  command: x\n", NO_FM),
        ("\n---\nevaluator: {}\n---\n", NO_FM),
        ("\ufeff---\nevaluator: {command: x, format: json}\n---\n", NO_FM),
        ("---\nevaluator: {command: x, format: json}\n", NO_FM),
        (
            fm("- a\n- b\n"),
            "sandbox.md frontmatter is not valid YAML: expected a mapping, got list",
        ),
        (fm(""), "sandbox.md frontmatter is not valid YAML: expected a mapping, got empty"),
        (fm("foo: 1\n"), NO_EVAL),
        (fm("evaluator: python3 eval.py\n"), NO_EVAL),
        (fm("evaluator:\n  command: x\n  format: json\n  keep_policy: best\n"), BAD_POLICY),
        # keep_policy is checked before command (the contract's order)
        (fm("evaluator:\n  keep_policy: nope\n"), BAD_POLICY),
        (fm("evaluator:\n  format: json\n"), NO_CMD),
        (fm("evaluator:\n  command: '   '\n  format: json\n"), NO_CMD),
        (fm("evaluator:\n  command: [a, b]\n  format: json\n"), NO_CMD),
        (fm("evaluator:\n  command: x\n"), NO_FORMAT),
        (fm("evaluator:\n  command: x\n  format: ''\n"), NO_FORMAT),
        (fm("evaluator:\n  command: x\n  format: yaml\n"), BAD_FORMAT),
        (fm("evaluator:\n  command: x\n  format: 3\n"), BAD_FORMAT),
        (fm("evaluator:\n  command: x\n  format: metric\n"), NO_METRIC),
        (
            fm("evaluator:\n  command: x\n  format: json\n  direction: up\n"),
            "sandbox.md frontmatter evaluator.direction must be one of: higher, lower.",
        ),
        (
            fm("evaluator:\n  command: x\n  format: json\n  timeout_seconds: 0\n"),
            "sandbox.md frontmatter evaluator.timeout_seconds must be a positive number.",
        ),
        (
            fm("evaluator:\n  command: x\n  format: json\n  timeout_seconds: soon\n"),
            "sandbox.md frontmatter evaluator.timeout_seconds must be a positive number.",
        ),
    ],
)
def test_sandbox_errors(text: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_sandbox(text)
    assert str(info.value) == message


def test_bad_yaml_has_one_line_detail() -> None:
    with pytest.raises(ContractError) as info:
        parse_sandbox(fm("evaluator: [unclosed\n"))
    message = str(info.value)
    assert message.startswith("sandbox.md frontmatter is not valid YAML: ")
    assert "\n" not in message


def test_valid_sandbox_defaults_and_body() -> None:
    sb = parse_sandbox("---\nevaluator:\n  command: python3 e.py\n  format: json\n---\nBody.\n")
    ev = sb.evaluator
    assert (ev.command, ev.format, ev.keep_policy) == ("python3 e.py", "json", "score_improvement")
    assert (ev.direction, ev.timeout_seconds, ev.metric) == ("higher", 3600.0, None)
    assert sb.body == "Body."


def test_crlf_and_normalized_policy_and_unknown_keys() -> None:
    text = (
        "---\r\nevaluator:\r\n  command: x\r\n  format: '  JSON '\r\n"
        "  keep_policy: '  SCORE_IMPROVEMENT  '\r\n  future_key: 7\r\nother: 1\r\n---\r\nbody\r\n"
    )
    sb = parse_sandbox(text)
    assert sb.evaluator.format is EvalFormat.JSON  # parsed at the edge: the member, not a str
    assert sb.evaluator.keep_policy == "score_improvement"
    assert sb.evaluator.extra == {"future_key": 7}
    assert sb.evaluator.to_dict()["future_key"] == 7
    assert sb.frontmatter["other"] == 1


def test_metric_format_with_direction_lower() -> None:
    sb = parse_sandbox(
        fm(
            "evaluator:\n  command: ./bench.sh\n  format: metric\n  metric: val_bpb\n"
            "  direction: LOWER\n  timeout_seconds: 12.5\n  keep_policy: pass_only\n"
        )
    )
    ev = sb.evaluator
    assert (ev.format, ev.metric, ev.direction, ev.timeout_seconds) == (
        "metric",
        "val_bpb",
        "lower",
        12.5,
    )
    assert ev.keep_policy == "pass_only"
    assert ev.format is EvalFormat.METRIC
    # frozen into the journal as its string, read back as the member
    assert json.loads(json.dumps(ev.to_dict()))["format"] == "metric"
    assert EvaluatorSpec.from_dict(json.loads(json.dumps(ev.to_dict()))) == ev


def test_worktree_links_and_runtime() -> None:
    sb = parse_sandbox(
        fm(
            "evaluator: {command: x, format: json}\n"
            "worktree:\n  link: [data/, models]\n  runtime: ['out/**', '*.log']\n"
        )
    )
    assert sb.links == ("data", "models")
    assert sb.runtime == ("out/**", "*.log")
    with pytest.raises(ContractError, match=r"worktree\.link must be a list of relative paths"):
        parse_sandbox(fm("evaluator: {command: x, format: json}\nworktree:\n  link: [/abs]\n"))


def test_tune_block() -> None:
    sb = parse_sandbox(
        fm(
            "evaluator: {command: x, format: json}\n"
            "tune:\n  file: train.py\n  seed: 3\n  parameters:\n"
            "    LR: {min: 1e-4, max: 1.0, scale: log}\n    BATCH: {min: 8, max: 512, type: int}\n"
        )
    )
    assert sb.tune is not None
    lr, batch = sb.tune.parameters
    assert (lr.name, lr.low, lr.log, lr.file) == ("LR", 1e-4, True, "train.py")
    assert (batch.integer, batch.high) == (True, 512)
    with pytest.raises(ContractError, match="needs numeric min < max"):
        parse_sandbox(
            fm(
                "evaluator: {command: x, format: json}\ntune: {file: a, parameters: {X: {min: 2, max: 1}}}\n"
            )
        )


@pytest.mark.parametrize(
    ("relative", "root", "slug"),
    [
        ("missions/demo", "repo", "missions-demo"),
        ("Missions/My Demo Mission", "repo", "missions-my-demo-mission"),
        (".", "My Repo", "my-repo"),
        ("--a__b--", "r", "a-b"),
        ("ÄÖÜ", "r", "mission"),
        ("日本", "r", "mission"),
        ("x" * 60, "r", "x" * 48),
        ("a" * 47 + "/b", "r", "a" * 47),
    ],
)
def test_mission_slug(relative: str, root: str, slug: str) -> None:
    assert mission_slug(relative, root) == slug


@pytest.mark.parametrize(
    ("tune", "message"),
    [
        ("3", "sandbox.md frontmatter tune must be a mapping with file and parameters."),
        ("{file: a, seed: x, parameters: {A: {min: 0, max: 1}}}",
         "sandbox.md frontmatter tune.seed must be an integer."),
        ("{parameters: {A: {min: 0, max: 1}}}",
         "sandbox.md frontmatter tune.parameters.A needs a file (tune.file or its own file)."),
        ("{file: a, split_lanes: 2, parameters: {A: {min: 0, max: 1}}}",
         "sandbox.md frontmatter tune.split_lanes must be true or false."),
    ],
)  # fmt: skip
def test_tune_messages(tune: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_sandbox(fm(f"evaluator: {{command: x, format: json}}\ntune: {tune}\n"))
    assert str(info.value) == message


EVAL = "evaluator:\n  command: x\n  format: json\n"


@pytest.mark.parametrize(
    ("noise", "expected"),
    [
        ("", NoisePolicy()),
        ("noise:\n  mode: single\n", NoisePolicy(mode=NoiseMode.SINGLE, calibration=1)),
        ("noise:\n  min_effect: 0.5 sigma\n  alpha: 0.01\n",
         NoisePolicy(min_effect=0.5, alpha=0.01)),
        ("noise:\n  min_effect: 0.002\n  max_evals: 10\n  confirm: 0\n",
         NoisePolicy(min_effect=0.002, min_effect_in_sigma=False, max_evals=10, confirm=0)),
        ("noise:\n  min_effect: 2σ\n  calibration: 5\n  mode: sequential\n",
         NoisePolicy(min_effect=2.0, calibration=5, mode=NoiseMode.SEQUENTIAL)),
        ("noise:\n  reuse: 0\n", NoisePolicy(reuse=0.0)),  # the fixed interleave only
        ("noise:\n  reuse: 3.5\n", NoisePolicy(reuse=3.5)),
    ],
)  # fmt: skip
def test_noise_keys(noise: str, expected: NoisePolicy) -> None:
    assert parse_sandbox(fm(EVAL + noise)).noise == expected


@pytest.mark.parametrize(
    ("noise", "message"),
    [
        ("noise: 3\n", "sandbox.md frontmatter noise must be a mapping."),
        ("noise:\n  alpah: 0.1\n", "sandbox.md frontmatter noise.alpah is not a known key"),
        ("noise:\n  alpha: 0.6\n", "sandbox.md frontmatter noise.alpha must be a number in"),
        ("noise:\n  power: 0.01\n", "sandbox.md frontmatter noise.power must be greater than"),
        ("noise:\n  mode: lucky\n", "sandbox.md frontmatter noise.mode must be auto,"),
        ("noise:\n  min_effect: -1\n", "sandbox.md frontmatter noise.min_effect must be"),
        ("noise:\n  min_effect: lots\n", "sandbox.md frontmatter noise.min_effect must be"),
        ("noise:\n  max_evals: 1\n", "sandbox.md frontmatter noise.max_evals must be an integer"),
        ("noise:\n  calibration: true\n", "sandbox.md frontmatter noise.calibration must be"),
        ("noise:\n  reuse: -1\n", "sandbox.md frontmatter noise.reuse must be a number from 0"),
        ("noise:\n  reuse: yes\n", "sandbox.md frontmatter noise.reuse must be a number from 0"),
    ],
)
def test_bad_noise_keys(noise: str, message: str) -> None:
    with pytest.raises(ContractError, match="^" + message.replace(".", r"\.")):
        parse_sandbox(fm(EVAL + noise))


def test_sealed_paths_and_checks() -> None:
    text = EVAL + "sealed: [scripts/eval.py, data/heldout/]\nchecks: pytest -q\n"
    sb = parse_sandbox(fm(text))
    assert sb.sealed == ("scripts/eval.py", "data/heldout")
    assert sb.checks is not None and sb.checks.command == "pytest -q"
    sb = parse_sandbox(fm(EVAL + "checks: {command: make lint, timeout_seconds: 30}\n"))
    assert sb.checks is not None and (sb.checks.command, sb.checks.timeout_seconds) == (
        "make lint",
        30.0,
    )
    assert parse_sandbox(fm(EVAL)).sealed == () and parse_sandbox(fm(EVAL)).checks is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("sealed: scripts/eval.py\n", "sandbox.md frontmatter sealed must be a list"),
        ("sealed: [/etc/passwd]\n", "sandbox.md frontmatter sealed must be a list"),
        ("checks: ''\n", "sandbox.md frontmatter checks must be a command"),
        ("checks: {command: x, timeout_seconds: -1}\n", "sandbox.md frontmatter checks must"),
        ("checks: {cmd: x}\n", "sandbox.md frontmatter checks must be a command"),
    ],
)
def test_bad_sealed_or_checks(extra: str, message: str) -> None:
    with pytest.raises(ContractError, match="^" + message):
        parse_sandbox(fm(EVAL + extra))


def test_evaluation_slots_and_budget_keys() -> None:
    sb = parse_sandbox(fm(EVAL))
    assert (sb.evaluation.slots, sb.evaluation.resources) == (1, {})  # one per machine
    assert sb.budget.to_dict() == {"usd": None, "tokens": None, "hours": None}
    text = (
        EVAL + "evaluation:\n  slots: 2\n  resources: {GPU: 1}\nbudget: {usd: 2.5, tokens: 1000}\n"
    )
    sb = parse_sandbox(fm(text))
    assert sb.evaluation.to_dict() == {"slots": 2, "resources": {"GPU": 1.0}}
    assert (sb.budget.usd, sb.budget.tokens, sb.budget.hours) == (2.5, 1000, None)
    assert unknown_keys(sb.frontmatter) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("evaluation: 2\n", "sandbox.md frontmatter evaluation must be a mapping."),
        ("evaluation:\n  slot: 2\n", "sandbox.md frontmatter evaluation.slot is not a known key"),
        ("evaluation:\n  slots: 0\n", "sandbox.md frontmatter evaluation.slots must be an integer"),
        ("evaluation:\n  slots: 1.5\n", "sandbox.md frontmatter evaluation.slots must be"),
        ("evaluation:\n  slots: true\n", "sandbox.md frontmatter evaluation.slots must be"),
        ("evaluation:\n  resources: [GPU]\n", "sandbox.md frontmatter evaluation.resources must"),
        ("evaluation:\n  resources: {GPU: 0}\n", "sandbox.md frontmatter evaluation.resources"),
        ("evaluation:\n  resources: {GPU: .inf}\n", "sandbox.md frontmatter evaluation.resources"),
        ("budget: 5\n", "sandbox.md frontmatter budget must be a mapping."),
        ("budget:\n  dollars: 5\n", "sandbox.md frontmatter budget.dollars is not a known key"),
        ("budget:\n  usd: -1\n", "sandbox.md frontmatter budget.usd must be a positive number."),
        ("budget:\n  tokens: 1.5\n", "sandbox.md frontmatter budget.tokens must be a positive"),
        ("budget:\n  hours: .nan\n", "sandbox.md frontmatter budget.hours must be a positive"),
    ],
)
def test_bad_evaluation_and_budget_keys(extra: str, message: str) -> None:
    with pytest.raises(ContractError, match="^" + message.replace(".", r"\.")):
        parse_sandbox(fm(EVAL + extra))


def test_the_missing_frontmatter_message_is_the_spec_sentence_then_a_hint() -> None:
    with pytest.raises(ContractError) as caught:
        parse_sandbox("no frontmatter here\n")
    assert str(caught.value).startswith(SPEC_NO_FM + " ")
