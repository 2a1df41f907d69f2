"""The loop's options: what `run` records and what `resume` continues with.

Precedence on resume (supervisor.md §9): a flag given now > what the run recorded > the
default. A different agent does not inherit the recorded agent's model and arguments. Every
front door (CLI, MCP, the worker) builds its loop through these functions: it hands in the
`LoopSettings` it was given and gets a `LoopPlan` back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from autoresearch import tracking
from autoresearch.agents import AgentConfig, backend, is_command, require_installed, validate_spec
from autoresearch.confine import DEFAULT_MODE, choose, machine_support, sandbox_mode
from autoresearch.contracts.loop import LoopSettings
from autoresearch.decide import DEFAULT_MAX_AGENT_FAILURES, DEFAULT_MAX_NOOPS, IterationLimit
from autoresearch.errors import ContractError
from autoresearch.journal.runs import RunRecord
from autoresearch.states import ExecutorKind
from autoresearch.supervisor.archive import DEFAULT_ARCHIVE_SIZE
from autoresearch.supervisor.loop import LoopLimits
from autoresearch.supervisor.plateau import rule_of
from autoresearch.supervisor.portfolio import check_portfolio
from autoresearch.supervisor.strategy import DEFAULT_STRATEGY, strategy_named


@dataclass(frozen=True)
class Where:
    """Where a loop's sessions and evaluations run: this machine or Ray (with its address)."""

    executor: ExecutorKind = ExecutorKind.LOCAL
    address: str | None = None


def executor_kind(value: object) -> ExecutorKind:
    """The executor a flag or a recorded loop names (the JSON edge keeps the string)."""
    try:
        return ExecutorKind(str(value))
    except ValueError:
        kinds = ", ".join(kind.value for kind in ExecutorKind)
        raise ContractError(f"unknown executor {value!r} (one of: {kinds})") from None


@dataclass(frozen=True)
class LoopPlan:
    """The agent, limits and placement a loop runs with."""

    config: AgentConfig
    limits: LoopLimits
    where: Where | None = None  # None: not chosen (the demo), this machine
    sandbox: str | None = None  # `--sandbox` given or recorded (None: sandbox.md's, else default)
    sandbox_note: str | None = None  # the one warning of an `auto` that runs without one
    certify: bool = True  # certify the result when the loop ends (`--no-certify`: False)
    trackers: tuple[str, ...] = ()  # mirrored into these (`--tracker NAME`, tracking.py)
    tracker_uri: str | None = None
    agents: tuple[str, ...] = ()  # a portfolio's specs (supervisor/portfolio.py); (): one agent
    models: tuple[str, ...] = ()  # its models, one per spec; (): `--model` for the first only

    def record(self, earlier: LoopSettings | None = None) -> LoopSettings:
        """The `loop` a run records (over what it recorded before: its count and the keys this
        version does not know stay, and so does its placement when none was chosen)."""
        new = replace(
            settings_of(self.config, self.limits, self.where),
            sandbox=self.sandbox,
            certify=None if self.certify else False,  # recorded only when turned off
            trackers=self.trackers or None,
            tracker_uri=self.tracker_uri,
            agents=self.agents or None,
            models=self.models or None,
        )
        if earlier is None:
            return new
        if self.where is None:
            new = replace(new, executor=earlier.executor, address=earlier.address)
        return replace(
            new,
            counts_from=earlier.counts_from,
            plateau_from=earlier.plateau_from,
            paused=earlier.paused,
            extra=earlier.extra,
        )


def limits_from(values: LoopSettings) -> LoopLimits:
    """Limits from recorded or given values, defaults for what is missing."""
    return LoopLimits(
        max_iterations=values.max_iterations,
        max_noops=_or(values.max_noops, DEFAULT_MAX_NOOPS),
        max_agent_failures=_or(values.max_agent_failures, DEFAULT_MAX_AGENT_FAILURES),
        agent_timeout=values.agent_timeout,
        budget_usd=values.budget_usd,
        budget_tokens=values.budget_tokens,
        budget_hours=values.budget_hours,
        lanes=int(values.lanes or 0),
        plateau=values.plateau,
        on_plateau=values.on_plateau,
        strategy=values.strategy or DEFAULT_STRATEGY,
        archive_size=values.archive_size or DEFAULT_ARCHIVE_SIZE,
    )


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def agent_config(values: LoopSettings) -> AgentConfig:
    """The agent of `values` (its spec validated) with its options."""
    return AgentConfig(
        spec=validate_spec(values.agent or ""),
        model=values.model,
        args=tuple(values.agent_args or ()),
        max_turns=values.max_turns,
        seed=values.seed,
    )


def settings_of(
    config: AgentConfig, limits: LoopLimits, where: Where | None = None
) -> LoopSettings:
    """What a loop with this agent, these limits and this placement records."""
    return LoopSettings(
        agent=config.spec,
        model=config.model,
        agent_args=tuple(config.args),
        max_turns=config.max_turns,
        seed=config.seed,
        max_iterations=limits.max_iterations,
        max_noops=limits.max_noops,
        max_agent_failures=limits.max_agent_failures,
        agent_timeout=limits.agent_timeout,
        budget_usd=limits.budget_usd,
        budget_tokens=limits.budget_tokens,
        budget_hours=limits.budget_hours,
        lanes=limits.lanes,
        plateau=limits.plateau,
        on_plateau=limits.on_plateau,
        # recorded only when not greedy: a greedy run's loop keeps the shape it always had
        strategy=None if limits.strategy == DEFAULT_STRATEGY else limits.strategy,
        archive_size=None if limits.strategy == DEFAULT_STRATEGY else limits.archive_size,
        executor=str(where.executor) if where is not None else None,  # the JSON keeps the string
        address=where.address if where is not None else None,
    )


def where_from(
    executor: str | None, address: str | None, recorded: LoopSettings | None = None
) -> Where:
    """`--executor`/`--address` given now over what the run recorded, else local. An address
    alone means Ray; `--executor ray` alone keeps a recorded address; `--executor local`
    drops it (a resume must not silently fall back to this machine, nor leave it)."""
    loop = recorded or LoopSettings()
    if executor is None and address is None:
        return Where(executor_kind(loop.executor or ExecutorKind.LOCAL), loop.address)
    kind = executor_kind(executor or ExecutorKind.RAY)
    if kind == ExecutorKind.LOCAL:
        if address:
            raise ContractError("--address names a Ray cluster: use it with --executor ray")
        return Where()
    if address is None and loop.executor == ExecutorKind.RAY:
        address = loop.address
    return Where(ExecutorKind.RAY, address)


def check_executor(where: Where | None) -> None:
    """Refuse `--executor ray` without Ray before anything is prepared."""
    if where is not None and where.executor == ExecutorKind.RAY:
        from autoresearch.supervisor.ray_executor import import_ray

        import_ray()


def check_sandbox(given: str | None, mission: str | None) -> str | None:
    """Refuse an explicit `bwrap` this machine cannot give before anything is prepared (the
    flag, else sandbox.md's `isolation.sandbox`); the note of an `auto` that falls back."""
    requested = sandbox_mode(given or mission or DEFAULT_MODE)
    return choose(requested, machine_support()).note


def mission_sandbox(mission_dir: Path) -> str | None:
    """sandbox.md's `isolation.sandbox` (None: not set)."""
    from autoresearch.mission import load_mission

    mode = load_mission(mission_dir).sandbox.isolation.sandbox
    return None if mode is None else str(mode)


def frozen_sandbox(run: RunRecord) -> str | None:
    """The `isolation.sandbox` a run froze of its sandbox.md (None: not set)."""
    mode = run.sandbox.isolation.sandbox
    return None if mode is None else str(mode)


def check_mission(spec: str, mission_dir: Path) -> None:
    """Refuse a mission the agent cannot work on (the offline agent's needs a `tune:` block:
    its back-end's `check_mission`)."""
    check = None if is_command(spec) else backend(spec).check_mission
    if check is None:
        return
    from autoresearch.mission import load_mission

    check(load_mission(mission_dir).sandbox)


def check_plateau(given: LoopSettings, mission_dir: Path) -> None:
    """Refuse a plateau setting no run could use (`--plateau 0`, an unknown `--on-plateau`,
    a bad sandbox.md `search.plateau`) before anything is prepared."""
    from autoresearch.mission import load_mission

    rule_of(given.plateau, given.on_plateau, load_mission(mission_dir).sandbox.plateau)


def new_loop(given: LoopSettings, mission_dir: Path) -> LoopPlan:
    """`run`'s loop: the given agent (installed, able to run this mission), limits and
    placement, defaults for the rest; refused before anything is prepared."""
    specs = portfolio_specs(given)
    config = agent_config(given)
    check_mission(config.spec, mission_dir)
    check_plateau(given, mission_dir)
    where = where_from(given.executor, given.address)
    limits = limits_from(with_mission_search(given, mission_dir))
    check_search(limits, where)
    check_portfolio(specs, given.models, given.model)
    check_executor(where)
    note = check_sandbox(given.sandbox, mission_sandbox(mission_dir))
    plan = LoopPlan(config, limits, where, given.sandbox, note, given.certify is not False)
    return with_portfolio(with_trackers(plan, given), specs, given.models)


def with_portfolio(
    plan: LoopPlan, specs: tuple[str, ...], models: tuple[str, ...] | None
) -> LoopPlan:
    """The plan with its portfolio's agents and their models (none for one agent)."""
    if len(specs) < 2:
        return plan
    return replace(plan, agents=specs, models=models or ())


def portfolio_specs(given: LoopSettings) -> tuple[str, ...]:
    """The agents given (one, or a portfolio's), each validated and installed: a missing one
    is refused in one line before anything is prepared."""
    specs = tuple(validate_spec(spec) for spec in (given.agents or (given.agent or "",)))
    for spec in specs:
        require_installed(spec)
    return specs


def with_mission_search(given: LoopSettings, mission_dir: Path) -> LoopSettings:
    """sandbox.md's `search.strategy` and `search.archive_size` below the flags."""
    from autoresearch.mission import load_mission

    spec = load_mission(mission_dir).sandbox
    return replace(
        given,
        strategy=given.strategy or spec.strategy,
        archive_size=given.archive_size or spec.archive_size,
    )


def check_search(limits: LoopLimits, where: Where) -> None:
    """Refuse an unknown strategy in one line (every known one runs alone, with lanes and
    on Ray)."""
    strategy_named(limits.strategy)


def continuation(
    run: RunRecord, given: LoopSettings, limit: IterationLimit | None
) -> LoopSettings | None:
    """What a resumed or continued run loops with (the given agent, else the recorded one;
    `--max-iterations` as the run's total), or None when it only re-arms: no agent at all,
    or a limit of 0."""
    spec = given.agent or (run.loop.agent if run.loop is not None else None)
    if not spec or (limit is not None and limit.count == 0):
        return None
    total = limit.total(run.iteration) if limit is not None else None
    return replace(given, agent=spec, max_iterations=total)


def resumed_loop(
    recorded: LoopSettings | None, given: LoopSettings, mission: str | None = None
) -> LoopPlan:
    """The agent, limits, placement and sandbox a resumed or continued loop runs with: each
    option in `given` (None or empty: not given) wins over the recorded one (`mission`: the
    run's frozen `isolation.sandbox`, below both)."""
    spec = validate_spec(given.agent or "")
    require_installed(spec)
    where = where_from(given.executor, given.address, recorded)
    loop = (recorded or LoopSettings()).over(
        replace(given, agent=spec, executor=None, address=None)
    )
    limits = limits_from(loop)
    specs = portfolio_specs(loop)
    check_search(limits, where)
    check_portfolio(specs, loop.models, loop.model)
    check_executor(where)
    note = check_sandbox(loop.sandbox, mission)
    plan = LoopPlan(
        agent_config(loop), limits, where, loop.sandbox, note, loop.certify is not False
    )
    return with_portfolio(with_trackers(plan, loop), specs, loop.models)


def with_trackers(plan: LoopPlan, settings: LoopSettings) -> LoopPlan:
    """The plan with the trackers given or recorded, each known and importable (refused
    before the run is prepared or changed: `pip install '.[trackers]'` in a clone)."""
    given = settings.trackers or ()
    names = () if tracking.NO_TRACKER in given else tuple(dict.fromkeys(given))
    tracking.check_uri(settings.tracker_uri)
    for name in names:
        tracking.check_tracker(name)
    return replace(plan, trackers=names, tracker_uri=settings.tracker_uri)
