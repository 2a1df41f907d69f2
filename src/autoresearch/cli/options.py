"""The loop options `run`, `resume` and `continue` share, declared once with each door's own
help text, and what they gave as the core's `LoopSettings`.

Apart from cli/common.py: their choices name the sandbox modes (confine.py, which brings the
process layer), so a command that takes none of them (`--help`, `status`, a hook, `mcp`)
starts without it (issue 36: tests/test_import_graph.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from autoresearch.api import DEFAULT_MODE, ExecutorKind, OnPlateau, SandboxMode
from autoresearch.cli.common import F, enum_choice, stacked

if TYPE_CHECKING:
    from autoresearch.api import LoopSettings

# a run given no limit stops here: with a paid agent and no budget, 'forever' is never meant
DEFAULT_MAX_ITERATIONS = 100


class AgentOption(click.Option):
    """`--agent`, whose help names the installed back-ends (`help_of` writes it): read when
    help is shown, since reading package metadata at every start would slow every command."""

    def __init__(
        self, param_decls: Sequence[str], *, help_of: Callable[[], str], **attrs: Any
    ) -> None:
        self.help_of = help_of
        super().__init__(param_decls, **attrs)

    @property
    def help(self) -> str:
        return self.help_of()

    @help.setter
    def help(self, _given: str | None) -> None:
        """click's own assignment: the text is `help_of`'s."""


def agent_option(help_of: Callable[[], str], *decls: str, **attrs: Any) -> Callable[[F], F]:
    """An `--agent` option whose help `help_of` writes when it is shown."""
    return click.option("--agent", *decls, cls=AgentOption, help_of=help_of, **attrs)


def run_agent_help() -> str:
    """`run --agent`'s help: `aider | claude | codex | offline | cmd:<shell command>`, and
    that it may be given again for a portfolio."""
    from autoresearch.api import spec_choices

    return spec_choices(" | ", " | ") + (
        ". Repeatable: a portfolio, each session given to the agent with the most kept "
        "improvement per unit of cost (dollars, else tokens, else seconds) after 2 sessions each."
    )


MAX_ITERATIONS_HELP = (
    "The run's total number of iterations (not N more: a run at iteration 10 given 12 runs 2 "
    "more); +N runs N more than the run has now. Default: the recorded limit."
)


def limit_options(resumed: bool) -> Callable[[F], F]:
    """The agent and the loop's limits: `run` chooses them (defaults shown), `resume` and
    `continue` replace the recorded ones with those given (none shown: the recorded stays)."""
    from autoresearch.api import DEFAULT_MAX_AGENT_FAILURES, DEFAULT_MAX_NOOPS

    recorded = "; default: the recorded limit" if resumed else ""
    defaults: Mapping[str, Any] = (
        {}
        if resumed
        else {"max_noops": DEFAULT_MAX_NOOPS, "max_agent_failures": DEFAULT_MAX_AGENT_FAILURES}
    )
    shown = not resumed

    def limit(name: str, kind: Any, text: str) -> Callable[[Any], Any]:
        default = defaults.get(name.removeprefix("--").replace("-", "_"))
        return click.option(name, type=kind, default=default, show_default=shown, help=text)

    return stacked(
        click.option(
            "--agent",
            "agent_spec",
            help="Agent to continue with (default: the recorded one; a different agent "
            "does not inherit the recorded model, arguments, turns or seed).",
        )
        if resumed
        else agent_option(run_agent_help, "agent_spec", required=True, multiple=True),
        click.option("--max-iterations", "max_iterations", help=MAX_ITERATIONS_HELP)
        if resumed
        else click.option(
            "--max-iterations",
            type=click.IntRange(min=0),
            help=f"Complete after N iterations (default {DEFAULT_MAX_ITERATIONS}; 0: no limit).",
        ),
        limit(
            "--max-noops",
            click.IntRange(min=0),
            f"Stop after N noops in a row (0: never{recorded}).",
        ),
        limit(
            "--max-agent-failures",
            click.IntRange(min=0),
            ("Stop" if resumed else "Fail the run")
            + " after N failed sessions in a row that produced nothing, a malformed"
            + f" candidate.json included (0: never{recorded}).",
        ),
        limit(
            "--agent-timeout",
            click.FloatRange(min=0, min_open=True),
            "Seconds before a session is stopped "
            + (
                "(default: the recorded timeout)." if resumed else "(its work is saved as a patch)."
            ),
        ),
    )


search_options = stacked(
    click.option(
        "--strategy",
        help="How the run searches: greedy (every session starts from the last kept commit) "
        "or frontier (an archive of elites; each session starts from one, chosen by score "
        "and by how little it was tried). Default: sandbox.md's search.strategy, else greedy.",
    ),
    click.option(
        "--archive-size",
        type=click.IntRange(min=1),
        help="The frontier's archive: at most N elites, at most half of them from one "
        "lineage (default: sandbox.md's search.archive_size, else 8).",
    ),
)

sandbox_option = click.option(
    "--sandbox",
    type=enum_choice(SandboxMode),
    help="The OS sandbox of sessions, evaluations and checks: bwrap (Bubblewrap; refused "
    "where it cannot run), auto (bwrap where it can, else none with a warning) or none "
    f"(as you). Default: sandbox.md's isolation.sandbox, else {DEFAULT_MODE}; "
    "resume/continue reuse the recorded one. docs/operations.md: Security.",
)

lane_options = stacked(
    click.option(
        "--lanes",
        type=click.IntRange(min=1, max=64),
        help="Agent sessions at once, each in its own worktree and lane branch; "
        "evaluations share sandbox.md's evaluation.slots (default 1).",
    ),
    click.option(
        "--executor",
        type=enum_choice(ExecutorKind),
        help="Where sessions and evaluations run: this machine (default) or the "
        "nodes of a Ray cluster (pip install '.[ray]' in a clone of autoresearch); resume/continue "
        "reuse the recorded one.",
    ),
    click.option(
        "--address",
        help="The Ray cluster to join (host:port of `ray start --head`); default: "
        "RAY_ADDRESS, else a Ray instance on this machine.",
    ),
    sandbox_option,
    click.option(
        "--certify/--no-certify",
        "certify",
        default=None,
        help="When the loop ends with a kept change and the evaluator is noisy, re-measure "
        "the baseline and the final commit in 4 interleaved pairs (8 evaluations) and report "
        "that paired improvement (default: on; resume/continue reuse the recorded choice).",
    ),
    click.option(
        "--plateau",
        type=click.IntRange(min=1),
        help="A plateau is this many iterations (over all lanes) without a kept change "
        "(default: sandbox.md's search.plateau, else 20).",
    ),
    click.option(
        "--on-plateau",
        type=enum_choice(OnPlateau),
        help="On a plateau: explore (tell the next sessions the obvious direction is "
        "exhausted; the default), stop (end the run, completed) or ask (pause until "
        "`autoresearch continue`).",
    ),
    click.option(
        "--tracker",
        "trackers",
        multiple=True,
        help="Mirror each iteration and the run's end into this experiment tracker "
        "(repeatable; built in: mlflow, pip install '.[trackers]' in a clone of autoresearch); "
        "resume/continue reuse the recorded ones unless given `--tracker none`.",
    ),
    click.option(
        "--tracker-uri",
        help="The tracker's store (default: MLFLOW_TRACKING_URI, else SQLite in "
        ".autoresearch/tracking/).",
    ),
    click.option(
        "--budget-usd",
        type=click.FloatRange(min=0, min_open=True),
        help="Stop once the agents' reported cost reaches this (all lanes).",
    ),
    click.option(
        "--budget-tokens",
        type=click.IntRange(min=1),
        help="Stop once the agents' input + output tokens reach this (all lanes).",
    ),
    click.option(
        "--budget-hours",
        type=click.FloatRange(min=0, min_open=True),
        help="Stop once this many hours have passed since the run was prepared.",
    ),
)

agent_options = stacked(
    click.option(
        "--model",
        "models",
        multiple=True,
        help="Model for the agent (codex, claude, aider; a cmd: agent gets $AUTORESEARCH_MODEL). "
        "With several --agent: once for the first, or once per --agent, paired in order.",
    ),
    click.option(
        "--agent-arg",
        "agent_args",
        multiple=True,
        help="Extra argument for the agent's command line (repeatable).",
    ),
    click.option("--max-turns", type=click.IntRange(min=1), help="claude --max-turns."),
    click.option("--seed", type=int, help="Seed of the offline agent (default: tune.seed)."),
)


def loop_settings(options: Mapping[str, Any], max_iterations: int | None) -> LoopSettings:
    """What the loop options of `run`, `resume` or `continue` gave (None: not given)."""
    from autoresearch.api import LoopSettings

    given = options.get("agent_spec")
    specs = tuple(given) if isinstance(given, tuple) else ()  # `run`'s repeatable --agent
    models = tuple(options.get("models") or ())
    return LoopSettings(
        agent=specs[0] if specs else given,
        agents=specs if len(specs) > 1 else None,
        model=models[0] if models else None,
        models=models if len(models) > 1 else None,
        agent_args=tuple(options.get("agent_args") or ()) or None,
        max_turns=options.get("max_turns"),
        seed=options.get("seed"),
        max_iterations=max_iterations,
        max_noops=options.get("max_noops"),
        max_agent_failures=options.get("max_agent_failures"),
        agent_timeout=options.get("agent_timeout"),
        budget_usd=options.get("budget_usd"),
        budget_tokens=options.get("budget_tokens"),
        budget_hours=options.get("budget_hours"),
        lanes=options.get("lanes"),
        executor=options.get("executor"),
        address=options.get("address"),
        sandbox=options.get("sandbox"),
        certify=options.get("certify"),
        plateau=options.get("plateau"),
        on_plateau=options.get("on_plateau"),
        trackers=tuple(options.get("trackers") or ()) or None,
        tracker_uri=options.get("tracker_uri"),
        strategy=options.get("strategy"),
        archive_size=options.get("archive_size"),
    )
