"""`init`: scaffold a mission in this repository, then try its evaluator once."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from autoresearch.cli.common import EXIT_REFUSED, emit_json, repo_root, say, warn

PROMPTS = {
    "goal": "Goal (one line: what should get better?)",
    "command": "Evaluator command (run in the repository root; prints the number)",
    "metric": "Metric name of its `METRIC <name>=<value>` line (empty: it prints JSON "
    '{"pass": …, "score": …})',
    "direction": "Is a lower or a higher value better?",
}


@click.command()
@click.argument("mission_dir", required=False, type=click.Path(path_type=Path))
@click.option("--goal", help="What should get better, in one line.")
@click.option("--command", "command", help="The evaluator command (sh -c, repository root).")
@click.option("--metric", help="The METRIC line's name to read (omit: the evaluator prints JSON).")
@click.option("--direction", type=click.Choice(["lower", "higher"]), help="Which way is better.")
@click.option("--scope", multiple=True, help="A path the agent may edit (repeatable).")
@click.option(
    "--timeout-seconds", type=click.FloatRange(min=0, min_open=True), default=600.0,
    show_default=True, help="The evaluator's timeout.",
)  # fmt: skip
@click.option("--no-try", is_flag=True, help="Write the files only; do not run the evaluator.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.pass_context
def init(
    ctx: click.Context,
    /,
    mission_dir: Path | None,
    no_try: bool,
    as_json: bool,
    **given: object,
) -> None:
    """Write a new mission (mission.md, sandbox.md) from a few answers, then run its evaluator
    once as `check --try` does.

    Asks for what the flags do not give when the terminal is interactive; otherwise the
    missing flags are named. MISSION_DIR defaults to missions/<slug of the goal>.
    """
    from autoresearch.api import Direction, MissionAnswers, write_mission

    answers = _answers(given)
    mission = MissionAnswers(
        goal=answers["goal"],
        command=answers["command"],
        metric=answers.get("metric") or None,
        direction=Direction(answers["direction"]),
        scope=tuple(str(s) for s in given["scope"]),  # type: ignore[attr-defined]
        timeout_seconds=float(given["timeout_seconds"]),  # type: ignore[arg-type]
    )
    folder = repo_root(ctx) / (mission_dir or Path(mission.default_dir()))
    written = write_mission(folder, mission)
    if not as_json:
        say("\n".join(f"wrote {path}" for path in written))
    if no_try:
        if as_json:
            emit_json({"mission_dir": str(folder), "files": [str(p) for p in written]})
        return
    _try(ctx, folder, [str(p) for p in written], as_json)


def _answers(given: dict[str, object]) -> dict[str, str]:
    """The flags given, the rest asked on a terminal; without one, the missing flags named."""
    answers = {key: str(given[key]) for key in PROMPTS if given.get(key) is not None}
    missing = [key for key in ("goal", "command", "direction") if key not in answers]
    if missing and not sys.stdin.isatty():
        from autoresearch.api import ContractError

        flags = ", ".join(f"--{key}" for key in missing)
        raise ContractError(f"init needs {flags} (or a terminal to ask on)")
    for key, prompt in PROMPTS.items():
        if key in answers or (key == "metric" and not missing):
            continue
        kind = click.Choice(["lower", "higher"]) if key == "direction" else None
        default = "" if key == "metric" else None
        answers[key] = str(click.prompt(prompt, type=kind, default=default, show_default=False))
    return answers


def _try(ctx: click.Context, folder: Path, files: list[str], as_json: bool) -> None:
    from autoresearch.api import try_mission
    from autoresearch.cli import render

    if not as_json:
        warn("autoresearch: running the evaluator once on HEAD in a scratch checkout …")
    trial = try_mission(folder)
    if as_json:
        emit_json({"mission_dir": str(folder), "files": files, "try": trial.to_dict()})
    else:
        render.trial(trial)
        shown = _relative(folder)
        if trial.ok:
            say(f"next: autoresearch run {shown} --agent <codex|claude|aider|cmd:…>")
        else:
            say(f"fix what is named above, then: autoresearch check {shown} --try")
    if not trial.ok:
        ctx.exit(EXIT_REFUSED)


def _relative(folder: Path) -> str:
    """The folder as the user would type it from here (absolute when not below here)."""
    try:
        return str(folder.relative_to(Path.cwd()))
    except ValueError:
        return str(folder)
