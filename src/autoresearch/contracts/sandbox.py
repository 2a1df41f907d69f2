"""Pure parsing of sandbox.md: YAML frontmatter (the evaluator contract) + a free-text policy.

Messages are contract (supervisor.md §1) and are checked in the documented order.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypedDict, TypeGuard, cast

# the evaluator contract lives apart, light for readers of run records; named here too
from autoresearch.contracts.evaluator_spec import DEFAULT_TIMEOUT_SECONDS as DEFAULT_TIMEOUT_SECONDS
from autoresearch.contracts.evaluator_spec import EVALUATOR_KEYS as EVALUATOR_KEYS
from autoresearch.contracts.evaluator_spec import EvaluatorSpec as EvaluatorSpec
from autoresearch.contracts.isolation import ISOLATION_KEYS, Isolation, isolation_of
from autoresearch.contracts.screen import parse_screen
from autoresearch.contracts.tune import TUNE_KEYS, TuneSpec, is_relative_path, parse_tune
from autoresearch.errors import ContractError
from autoresearch.jsonshape import (
    json_shape,
    mapping,
    number,
    text,
    whole,
)
from autoresearch.noise import NoiseMode, NoisePolicy
from autoresearch.paths import slug
from autoresearch.states import (
    MISSION_DEFAULT_DIRECTION,
    Direction,
    EvalFormat,
    KeepPolicy,
    OnPlateau,
)

KEEP_POLICIES = tuple(KeepPolicy)  # the built-ins, in supervisor.md §2's order
FORMATS = tuple(EvalFormat)
DIRECTIONS = tuple(Direction)

# supervisor.md §2's exact sentence first (users match on it), then the metric format's hint
MSG_NO_FRONTMATTER = (
    "sandbox.md must start with YAML frontmatter containing evaluator.command and "
    "evaluator.format=json. (evaluator.format=metric with evaluator.metric works too.)"
)
MSG_BAD_YAML = "sandbox.md frontmatter is not valid YAML: {detail}"
MSG_NUL_COMMAND = "sandbox.md frontmatter evaluator.command must not contain a NUL character."
MAX_SANDBOX_BYTES = 1 << 20
MSG_NO_EVALUATOR = "sandbox.md frontmatter must define an evaluator block."
MSG_BAD_POLICY = "sandbox.md frontmatter evaluator.keep_policy must be one of: {policies}."
MSG_NO_COMMAND = "sandbox.md frontmatter evaluator.command is required."
MSG_NO_FORMAT = (
    "sandbox.md frontmatter evaluator.format is required and must be json in autoresearch v1."
)
MSG_BAD_FORMAT = (
    "sandbox.md frontmatter evaluator.format must be json or metric in autoresearch v1."
)
MSG_NO_METRIC = "sandbox.md frontmatter evaluator.metric is required when format is metric."
MSG_BAD_DIRECTION = "sandbox.md frontmatter evaluator.direction must be one of: higher, lower."
MSG_BAD_TIMEOUT = "sandbox.md frontmatter evaluator.timeout_seconds must be a positive number."
MSG_BAD_WORKTREE = "sandbox.md frontmatter worktree.{key} must be a list of relative paths."
MSG_BAD_SEALED = "sandbox.md frontmatter sealed must be a list of relative paths."
MSG_BAD_CHECKS = (
    "sandbox.md frontmatter checks must be a command, or a mapping with a command and an "
    "optional timeout_seconds."
)
MSG_BAD_NOISE = "sandbox.md frontmatter noise.{key} must be {what}."
MSG_NOISE_NOT_MAPPING = "sandbox.md frontmatter noise must be a mapping."
MSG_NOISE_UNKNOWN = "sandbox.md frontmatter noise.{key} is not a known key (known: {known})."
NOISE_KEYS = (
    "mode", "calibration", "alpha", "power", "min_effect", "max_evals", "interleave", "confirm",
    "reuse",
)  # fmt: skip

EVALUATION_KEYS = ("slots", "resources")
BUDGET_KEYS = ("usd", "tokens", "hours")
CHECKS_KEYS = ("command", "timeout_seconds")
MSG_BAD_EVALUATION = "sandbox.md frontmatter evaluation.{key} must be {what}."
MSG_BAD_BUDGET = "sandbox.md frontmatter budget.{key} must be {what}."
MSG_BLOCK_UNKNOWN = "sandbox.md frontmatter {block}.{key} is not a known key (known: {known})."
MSG_NOT_MAPPING = "sandbox.md frontmatter {block} must be a mapping."
SEARCH_KEYS = ("memory", "strategy", "archive_size", "plateau", "on_plateau")
MSG_BAD_MEMORY = "sandbox.md frontmatter search.memory must be true or false."
MSG_BAD_PLATEAU = (
    "sandbox.md frontmatter search.plateau must be a positive whole number of iterations."
)
MSG_BAD_ON_PLATEAU = "sandbox.md frontmatter search.on_plateau must be one of: {choices}."
MSG_BAD_STRATEGY = (
    "sandbox.md frontmatter search.strategy must be a strategy's name (greedy, frontier)."
)
MSG_BAD_ARCHIVE_SIZE = "sandbox.md frontmatter search.archive_size must be a whole number >= 1."
MAX_SLOTS = 1000

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)


@dataclass(frozen=True)
class Sandbox:
    """A parsed sandbox.md."""

    evaluator: EvaluatorSpec
    body: str
    links: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    tune: TuneSpec | None = None
    frontmatter: Mapping[str, object] = field(default_factory=dict)
    noise: NoisePolicy = field(default_factory=NoisePolicy)
    sealed: tuple[str, ...] = ()  # evaluator files and held-out data a candidate may not touch
    checks: ChecksSpec | None = None  # run on a candidate about to be kept
    evaluation: EvaluationSlots = field(default_factory=lambda: EvaluationSlots())
    budget: BudgetSpec = field(default_factory=lambda: BudgetSpec())
    isolation: Isolation = field(default_factory=lambda: Isolation())
    memory: bool = True  # search.memory: the instructions digest the mission's earlier runs
    plateau: Plateau = field(default_factory=lambda: Plateau())  # search.plateau, on_plateau
    strategy: str | None = None  # search.strategy (None: `--strategy`, else greedy)
    archive_size: int | None = None  # search.archive_size: the frontier's elites at most


@dataclass(frozen=True)
class EvaluationSlots:
    """How many evaluations may run at once per machine (timed benchmarks must not share
    one; on a Ray cluster: on each node), and what each needs from the machine that runs it
    (`{GPU: 1}`; on a cluster only a node that has it all gets the evaluation)."""

    slots: int = 1
    resources: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> EvaluationSlotsJson:
        return cast(EvaluationSlotsJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> EvaluationSlots:
        data = data or {}
        resources = {str(k): number(v) for k, v in mapping(data.get("resources")).items()}
        return cls(whole(data.get("slots", 1)), resources)


class EvaluationSlotsJson(TypedDict):
    slots: int
    resources: dict[str, float]


@dataclass(frozen=True)
class BudgetSpec:
    """sandbox.md's spending limits over all lanes (a `--budget-*` flag overrides one)."""

    usd: float | None = None
    tokens: int | None = None
    hours: float | None = None

    def to_dict(self) -> BudgetJson:
        return cast(BudgetJson, json_shape(self))


class BudgetJson(TypedDict):
    usd: float | None
    tokens: int | None
    hours: float | None


@dataclass(frozen=True)
class ChecksSpec:
    """The checks gate (tests, type checks, lint): a candidate whose checks fail is not kept."""

    command: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS

    def to_dict(self) -> ChecksJson:
        return cast(ChecksJson, json_shape(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> ChecksSpec | None:
        if not data:
            return None
        return cls(str(data["command"]), number(data["timeout_seconds"]))


class ChecksJson(TypedDict):
    command: str
    timeout_seconds: float


# The one list of known frontmatter keys (a key added to the contract is added here): `check`
# names any other key as a probable typo (parsing keeps and ignores it, supervisor.md §1).
def known_keys() -> dict[str, tuple[str, ...]]:
    return {
        "evaluator": (*EVALUATOR_KEYS, "screen"),
        "worktree": ("link", "runtime"),
        "tune": TUNE_KEYS,
        "noise": tuple(NOISE_KEYS),
        "evaluation": EVALUATION_KEYS,
        "budget": BUDGET_KEYS,
        "sealed": (),  # a list of paths: no sub-keys
        "checks": CHECKS_KEYS,  # a command, or a mapping with these keys
        "isolation": ISOLATION_KEYS,
        "search": SEARCH_KEYS,
    }


def unknown_keys(frontmatter: Mapping[str, object]) -> list[str]:
    """One line per key the contract does not know, with the closest known key if any."""
    known = known_keys()
    found = []
    for key, value in frontmatter.items():
        name = str(key)
        if name not in known:
            found.append(_unknown(name, name, list(known)))
        elif isinstance(value, dict):
            found += [
                _unknown(f"{name}.{sub}", str(sub), list(known[name]))
                for sub in value
                if str(sub) not in known[name]
            ]
    return found


def _unknown(path: str, key: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(key, choices, n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"sandbox.md frontmatter {path} is not a known key{hint}"


def split_frontmatter(text: str) -> tuple[str, str]:
    """(frontmatter YAML, body); the frontmatter must start at the first byte."""
    match = _FRONTMATTER.match(text)
    if match is None:
        raise ContractError(MSG_NO_FRONTMATTER)
    return match.group(1), text[match.end() :]


def parse_sandbox(text: str) -> Sandbox:
    """Parse sandbox.md text; raises ContractError with the exact message of the spec."""
    import yaml  # here, not at the top: the journal reads frozen missions without parsing YAML

    from autoresearch.contracts import strict_yaml

    raw, body = split_frontmatter(text)
    try:
        data = strict_yaml.load(raw, line_offset=1)  # the YAML starts on the file's line 2
    except yaml.YAMLError as exc:
        raise ContractError(MSG_BAD_YAML.format(detail=_one_line(str(exc)))) from exc
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        raise ContractError(MSG_BAD_YAML.format(detail=f"expected a mapping, got {kind}"))
    if "evaluator" not in data:
        _refuse_missing_evaluator(data)
    evaluator = parse_evaluator(data.get("evaluator"))
    links, runtime = _parse_worktree(data.get("worktree"))
    return Sandbox(
        evaluator=evaluator,
        body=body.strip("\r\n"),
        links=links,
        runtime=runtime,
        tune=parse_tune(data.get("tune")),
        frontmatter=data,
        noise=parse_noise(data.get("noise")),
        sealed=_sealed(data.get("sealed")),
        checks=parse_checks(data.get("checks")),
        evaluation=parse_evaluation(data.get("evaluation")),
        budget=parse_budget(data.get("budget")),
        isolation=isolation_of(_block(data.get("isolation"), "isolation", ISOLATION_KEYS)),
        memory=parse_memory(data.get("search")),
        plateau=parse_plateau(data.get("search")),
        strategy=parse_strategy(data.get("search")),
        archive_size=parse_archive_size(data.get("search")),
    )


def parse_strategy(value: object) -> str | None:
    """search.strategy: a name (whether one is known, the supervisor's registry says)."""
    name = _block(value, "search", SEARCH_KEYS).get("strategy")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ContractError(MSG_BAD_STRATEGY)
    return name


def parse_archive_size(value: object) -> int | None:
    size = _block(value, "search", SEARCH_KEYS).get("archive_size")
    if size is None:
        return None
    if not (_positive(size, integer=True) and size >= 1):
        raise ContractError(MSG_BAD_ARCHIVE_SIZE)
    return whole(size)


def parse_memory(value: object) -> bool:
    """search.memory (default true): whether a run's instructions digest its mission's
    earlier runs (memory across runs)."""
    memory = _block(value, "search", SEARCH_KEYS).get("memory", True)
    if not isinstance(memory, bool):
        raise ContractError(MSG_BAD_MEMORY)
    return memory


@dataclass(frozen=True)
class Plateau:
    """sandbox.md's `search.plateau` and `search.on_plateau` (None: not set; a `--plateau` or
    `--on-plateau` flag wins, supervisor/plateau.py has the defaults)."""

    iterations: int | None = None
    on: OnPlateau | None = None


def parse_plateau(value: object) -> Plateau:
    block = _block(value, "search", SEARCH_KEYS)
    iterations, on = block.get("plateau"), block.get("on_plateau")
    if iterations is not None and not _positive(iterations, integer=True):
        raise ContractError(MSG_BAD_PLATEAU)
    if on is not None and on not in tuple(OnPlateau):
        choices = ", ".join(OnPlateau)
        raise ContractError(MSG_BAD_ON_PLATEAU.format(choices=choices))
    return Plateau(
        None if iterations is None else whole(iterations),
        None if on is None else OnPlateau(text(on)),
    )


def frozen_plateau(sandbox_text: str) -> Plateau:
    """search.plateau/on_plateau of a run's frozen sandbox.md (unreadable: not set)."""
    try:
        return parse_sandbox(sandbox_text).plateau
    except ContractError:
        return Plateau()


def memory_enabled(sandbox_text: str) -> bool:
    """search.memory of a run's frozen sandbox.md (one frozen before its text was kept: on)."""
    try:
        return parse_sandbox(sandbox_text).memory
    except ContractError:
        return True


def _refuse_missing_evaluator(data: Mapping[str, object]) -> None:
    """The spec's message, then the misspelt key that was probably meant (`evaluatr:`)."""
    typed = [str(key) for key in data]
    close = difflib.get_close_matches("evaluator", typed, n=1, cutoff=0.7)
    hint = f" (did you mean evaluator? sandbox.md has {close[0]}:)" if close else ""
    raise ContractError(MSG_NO_EVALUATOR + hint)


def _block(value: object, name: str, keys: tuple[str, ...]) -> Mapping[str, object]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ContractError(MSG_NOT_MAPPING.format(block=name))
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        known = ", ".join(keys)
        raise ContractError(MSG_BLOCK_UNKNOWN.format(block=name, key=unknown[0], known=known))
    return value


def _positive(value: object, integer: bool = False) -> TypeGuard[float]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if integer and not isinstance(value, int):
        return False
    try:
        return math.isfinite(float(value)) and value > 0
    except OverflowError:
        return False


def parse_evaluation(value: object) -> EvaluationSlots:
    """The optional `evaluation:` block: `slots` (evaluations at once per machine, default 1)
    and `resources` (what each evaluation needs, e.g. `{GPU: 1}`)."""
    block = _block(value, "evaluation", EVALUATION_KEYS)
    slots = block.get("slots", 1)
    if not _positive(slots, integer=True) or slots > MAX_SLOTS:
        what = f"an integer from 1 to {MAX_SLOTS}"
        raise ContractError(MSG_BAD_EVALUATION.format(key="slots", what=what))
    resources = block.get("resources", {})
    what = "a mapping of resource names to positive numbers, e.g. {GPU: 1}"
    if not isinstance(resources, dict):
        raise ContractError(MSG_BAD_EVALUATION.format(key="resources", what=what))
    for name, amount in resources.items():
        if not isinstance(name, str) or not name.strip() or not _positive(amount):
            raise ContractError(MSG_BAD_EVALUATION.format(key="resources", what=what))
    return EvaluationSlots(int(slots), {k.strip(): number(v) for k, v in resources.items()})


def parse_budget(value: object) -> BudgetSpec:
    """The optional `budget:` block: usd, tokens, hours (each a positive limit)."""
    block = _block(value, "budget", BUDGET_KEYS)
    for key in BUDGET_KEYS:
        if key in block and not _positive(block[key], integer=key == "tokens"):
            what = "a positive integer" if key == "tokens" else "a positive number"
            raise ContractError(MSG_BAD_BUDGET.format(key=key, what=what))
    usd, tokens, hours = (block.get(k) for k in BUDGET_KEYS)
    return BudgetSpec(
        number(usd) if usd is not None else None,
        whole(tokens) if tokens is not None else None,
        number(hours) if hours is not None else None,
    )


def _sealed(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(is_relative_path(v) for v in value):
        raise ContractError(MSG_BAD_SEALED)
    return tuple(v.strip().rstrip("/") for v in value)


def parse_checks(value: object) -> ChecksSpec | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return ChecksSpec(value.strip())
    if not isinstance(value, dict) or set(value) - set(CHECKS_KEYS):
        raise ContractError(MSG_BAD_CHECKS)
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ContractError(MSG_BAD_CHECKS)
    timeout = value.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    try:
        seconds = _timeout(timeout)
    except ContractError as exc:
        raise ContractError(MSG_BAD_CHECKS) from exc
    return ChecksSpec(command.strip(), seconds)


def parse_evaluator(block: object) -> EvaluatorSpec:
    """Validate the `evaluator` mapping in the order of the spec."""
    if not isinstance(block, dict):
        raise ContractError(MSG_NO_EVALUATOR)
    policy = _normalized(block.get("keep_policy", KeepPolicy.SCORE_IMPROVEMENT))
    # a plugin's policy is known by its entry point (states.KeepPolicy), the built-ins first
    if policy not in KEEP_POLICIES and policy not in (known := KeepPolicy.registered()):
        raise ContractError(MSG_BAD_POLICY.format(policies=", ".join(known)))
    command = block.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ContractError(MSG_NO_COMMAND)
    if "\0" in command:
        raise ContractError(MSG_NUL_COMMAND)
    fmt = block.get("format")
    if fmt is None or (isinstance(fmt, str) and not fmt.strip()):
        raise ContractError(MSG_NO_FORMAT)
    fmt = _normalized(fmt)
    if fmt not in FORMATS:
        raise ContractError(MSG_BAD_FORMAT)
    metric = block.get("metric")
    if fmt == EvalFormat.METRIC and (not isinstance(metric, str) or not metric.strip()):
        raise ContractError(MSG_NO_METRIC)
    direction = _normalized(block.get("direction", MISSION_DEFAULT_DIRECTION))
    if direction not in DIRECTIONS:
        raise ContractError(MSG_BAD_DIRECTION)
    parse_screen(block.get("screen"))  # kept in `extra`, refused here when malformed
    return EvaluatorSpec(
        command=command.strip(),
        format=EvalFormat(fmt),
        keep_policy=KeepPolicy(policy),
        metric=metric.strip() if isinstance(metric, str) else None,
        direction=Direction(direction),
        timeout_seconds=_timeout(block.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
        extra=json_safe({str(k): v for k, v in block.items() if k not in EVALUATOR_KEYS}),
    )


def parse_noise(block: object) -> NoisePolicy:
    """The optional `noise:` block (trust.md); every key optional, defaults in NoisePolicy."""
    if block is None:
        return NoisePolicy()
    if not isinstance(block, dict):
        raise ContractError(MSG_NOISE_NOT_MAPPING)
    unknown = sorted(str(k) for k in block if k not in NOISE_KEYS)
    if unknown:
        raise ContractError(MSG_NOISE_UNKNOWN.format(key=unknown[0], known=", ".join(NOISE_KEYS)))
    base = NoisePolicy()
    mode = _normalized(block.get("mode", "auto"))
    if mode not in {m.value for m in NoiseMode}:
        raise ContractError(MSG_BAD_NOISE.format(key="mode", what="auto, sequential or single"))
    alpha = _fraction(block, "alpha", base.alpha, 0.5)
    power = _fraction(block, "power", base.power, 1.0)
    if power <= alpha:
        raise ContractError(MSG_BAD_NOISE.format(key="power", what="greater than alpha"))
    effect, in_sigma = (
        _min_effect(block["min_effect"])
        if "min_effect" in block
        else (base.min_effect, base.min_effect_in_sigma)
    )
    calibration = _count(block, "calibration", base.calibration, 1)
    return NoisePolicy(
        mode=NoiseMode(mode),
        calibration=1 if mode == NoiseMode.SINGLE and "calibration" not in block else calibration,
        alpha=alpha,
        power=power,
        min_effect=effect,
        min_effect_in_sigma=in_sigma,
        max_evals=_count(block, "max_evals", base.max_evals, 2),
        interleave=_count(block, "interleave", base.interleave, 0),
        confirm=_count(block, "confirm", base.confirm, 0),
        reuse=_weight(block, "reuse", base.reuse),
    )


_SIGMA = re.compile(r"^\s*([0-9.eE+-]+)\s*(sigma|σ)\s*$")


def _min_effect(value: object) -> tuple[float, bool]:
    """`0.02` (metric units) or `1 sigma` / `0.5σ` (units of the evaluator's spread)."""
    what = "a positive number (metric units) or '<number> sigma'"
    in_sigma = False
    if isinstance(value, str):
        match = _SIGMA.match(value)
        if match is None:
            raise ContractError(MSG_BAD_NOISE.format(key="min_effect", what=what))
        value, in_sigma = match.group(1), True
        try:
            value = float(value)
        except ValueError as exc:
            raise ContractError(MSG_BAD_NOISE.format(key="min_effect", what=what)) from exc
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ContractError(MSG_BAD_NOISE.format(key="min_effect", what=what))
    try:
        effect = float(value)
    except OverflowError as exc:
        raise ContractError(MSG_BAD_NOISE.format(key="min_effect", what=what)) from exc
    if not math.isfinite(effect) or effect <= 0:
        raise ContractError(MSG_BAD_NOISE.format(key="min_effect", what=what))
    return effect, in_sigma


def _fraction(block: Mapping[str, object], key: str, default: float, upper: float) -> float:
    value = block.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < upper:
        raise ContractError(MSG_BAD_NOISE.format(key=key, what=f"a number in (0, {upper:g})"))
    return float(value)


def _weight(block: Mapping[str, object], key: str, default: float) -> float:
    value = block.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
        raise ContractError(MSG_BAD_NOISE.format(key=key, what="a number from 0 to 100"))
    return float(value)


def _count(block: Mapping[str, object], key: str, default: int, least: int) -> int:
    value = block.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 1000:
        raise ContractError(MSG_BAD_NOISE.format(key=key, what=f"an integer from {least} to 1000"))
    return value


def json_safe(value: Mapping[str, object]) -> dict[str, object]:
    """Unknown keys are kept: YAML dates and other non-JSON values become strings."""
    return dict(mapping(json.loads(json.dumps(value, default=str))))


def _normalized(value: object) -> str | None:
    return value.strip().lower() if isinstance(value, str) else None


def _timeout(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ContractError(MSG_BAD_TIMEOUT)
    try:
        seconds = float(value)
    except OverflowError as exc:
        raise ContractError(MSG_BAD_TIMEOUT) from exc
    if not math.isfinite(seconds) or seconds <= 0:
        raise ContractError(MSG_BAD_TIMEOUT)
    return seconds


def _parse_worktree(block: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if block is None:
        return (), ()
    if not isinstance(block, dict):
        raise ContractError(MSG_BAD_WORKTREE.format(key="link"))
    return _path_list(block, "link"), _path_list(block, "runtime")


def _path_list(block: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = block.get(key, [])
    if not isinstance(value, list) or not all(is_relative_path(v) for v in value):
        raise ContractError(MSG_BAD_WORKTREE.format(key=key))
    return tuple(v.strip().rstrip("/") for v in value)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def mission_slug(relative_dir: str, root_name: str) -> str:
    """Slug of a mission directory relative to the repo root (spec §1)."""
    source = root_name if relative_dir in ("", ".") else relative_dir
    return slug(source, "mission")
