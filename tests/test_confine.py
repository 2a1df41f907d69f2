"""The OS sandbox (confine.py): a hostile agent and a hostile candidate reach neither the run's
records nor the user's credentials under Bubblewrap, and do under `--sandbox none` (so these
tests can fail); `auto` falls back with one warning where bwrap cannot run, `bwrap` is refused.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import autoresearch
from autoresearch.confine import Box, Choice, SandboxMode, Support, choose, machine_support
from autoresearch.contracts.isolation import Isolation
from autoresearch.contracts.sandbox import parse_sandbox
from autoresearch.errors import ContractError
from autoresearch.proc import SupervisedSpec, run_supervised
from helpers import Repo, cli, git, sandbox_text

BWRAP = machine_support()
needs_bwrap = pytest.mark.skipif(
    BWRAP.bwrap is None, reason=f"Bubblewrap cannot run here: {BWRAP.reason}"
)

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- planted"
# Reads what it should not, then tries to change it; prints what it read (its log is kept).
HOSTILE = """\
S="$HOSTILE_REPO/.autoresearch"
echo "key:$(cat "$HOME/.ssh/id_rsa" 2>/dev/null)"
echo "journal:$(head -c 15 "$S/journal.sqlite3" 2>/dev/null)"
echo pwned >> "$HOME/.ssh/id_rsa" 2>/dev/null
mkdir -p "$S/backups" 2>/dev/null && echo x > "$S/backups/planted" 2>/dev/null
python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); \
c.execute('create table hostile(x)'); c.commit()" "$S/journal.sqlite3" 2>/dev/null
true
"""


def _plant_key(home: Path) -> Path:
    key = home / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True)
    key.write_text(KEY + "\n")
    return key


def _hostile_run(repo: Repo, where: str, mode: str, *options: str) -> str:
    """A one-iteration run whose agent (`agent`) or evaluator (`evaluator`) is hostile; the
    output of every session and evaluation it logged."""
    repo.write("scripts/hostile.sh", HOSTILE)
    command = "sh scripts/hostile.sh && python3 scripts/eval.py"
    repo.mission(sandbox=sandbox_text(command) if where == "evaluator" else None)
    agent = "cmd:sh scripts/hostile.sh" if where == "agent" else "cmd:true"
    done = cli("run", "missions/demo", "--agent", agent, "--max-iterations", "1", *options,
               "--sandbox", mode, cwd=repo.root, env={"HOSTILE_REPO": str(repo.root)})  # fmt: skip
    if mode == "bwrap":
        assert done.returncode == 0, done.stderr
    logs = sorted((repo.root / ".autoresearch" / "runs").rglob("*.log"))  # lanes/<k>/logs too
    return "\n".join(log.read_text() for log in logs)


def _journal_tables(repo: Repo) -> set[str]:
    with sqlite3.connect(repo.root / ".autoresearch" / "journal.sqlite3") as conn:
        return {row[0] for row in conn.execute("select name from sqlite_master")}


@needs_bwrap
@pytest.mark.parametrize("lanes", [(), ("--lanes", "2")])
@pytest.mark.parametrize("where", ["agent", "evaluator"])
def test_a_hostile_child_reaches_no_record_and_no_key_in_the_sandbox(
    repo: Repo, where: str, lanes: tuple[str, ...]
) -> None:
    key = _plant_key(Path(os.environ["HOME"]))
    logs = _hostile_run(repo, where, "bwrap", *lanes)
    assert "key:\n" in logs and KEY not in logs
    assert "journal:\n" in logs and "SQLite format" not in logs
    assert key.read_text() == KEY + "\n"
    assert not (repo.root / ".autoresearch" / "backups" / "planted").exists()
    assert "hostile" not in _journal_tables(repo)


@needs_bwrap
@pytest.mark.parametrize("where", ["agent", "evaluator"])
def test_without_the_sandbox_the_same_child_reaches_them(repo: Repo, where: str) -> None:
    key = _plant_key(Path(os.environ["HOME"]))
    logs = _hostile_run(repo, where, "none")
    assert KEY in logs and "SQLite format" in logs
    assert key.read_text().startswith(KEY + "\npwned\n")  # once per evaluation
    assert (repo.root / ".autoresearch" / "backups" / "planted").exists()
    assert "hostile" in _journal_tables(repo)


def _run_id(repo: Repo) -> str:
    return next((repo.root / ".autoresearch" / "runs").iterdir()).name


@needs_bwrap
def test_resume_keeps_the_recorded_sandbox_and_a_flag_replaces_it(repo: Repo) -> None:
    key = _plant_key(Path(os.environ["HOME"]))
    assert KEY not in _hostile_run(repo, "agent", "bwrap")
    env = {"HOSTILE_REPO": str(repo.root)}
    more = ("continue", _run_id(repo), "--max-iterations", "+1")
    done = cli(*more, cwd=repo.root, env=env)
    assert done.returncode == 0, done.stderr
    assert key.read_text() == KEY + "\n"  # the recorded bwrap still holds
    cli(*more, "--sandbox", "none", cwd=repo.root, env=env)
    assert key.read_text() == KEY + "\npwned\n"  # the flag replaced it


@needs_bwrap
def test_prepare_and_sandbox_md_confine_the_baseline(repo: Repo) -> None:
    key = _plant_key(Path(os.environ["HOME"]))
    repo.write("scripts/hostile.sh", HOSTILE)
    command = "sh scripts/hostile.sh && python3 scripts/eval.py"
    repo.mission(sandbox=sandbox_text(command))
    env = {"HOSTILE_REPO": str(repo.root)}
    done = cli("prepare", "missions/demo", "--sandbox", "bwrap", cwd=repo.root, env=env)
    assert done.returncode == 0, done.stderr
    cli("stop", _run_id(repo), cwd=repo.root)
    assert key.read_text() == KEY + "\n"
    repo.mission(sandbox=sandbox_text(command, extra="isolation:\n  sandbox: bwrap\n"))
    done = cli("run", "missions/demo", "--agent", "cmd:true", "--max-iterations", "1",
               cwd=repo.root, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert key.read_text() == KEY + "\n"


IMPROVE = """\
echo 5 > value.txt && git add value.txt && git commit -q -m bigger && \
printf '{"status":"candidate","candidate_commit":"%s","base_commit":"%s","description":"bigger","notes":[],"created_at":"2026-12-06T00:00:00Z"}' \
"$(git rev-parse HEAD)" "$AUTORESEARCH_BASE_COMMIT" > "$AUTORESEARCH_CANDIDATE_FILE"
"""


@needs_bwrap
def test_a_sandboxed_run_still_keeps_an_improvement(repo: Repo, mission_dir: Path) -> None:
    repo.write("scripts/improve.sh", IMPROVE)
    repo.commit("agent")
    done = cli("run", "missions/demo", "--agent", "cmd:sh scripts/improve.sh",
               "--max-iterations", "1", "--sandbox", "bwrap", "--json", cwd=repo.root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"] == {"keep": 1}


@needs_bwrap
def test_sandboxed_lanes_keep_an_improvement(repo: Repo, mission_dir: Path) -> None:
    repo.write("scripts/improve.sh", IMPROVE)
    repo.commit("agent")
    done = cli("run", "missions/demo", "--agent", "cmd:sh scripts/improve.sh", "--lanes", "2",
               "--max-iterations", "2", "--sandbox", "bwrap", "--json", cwd=repo.root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["keep"] >= 1


def _no_bwrap_path(tmp_path: Path) -> str:
    """A PATH with the programs a run needs and no bwrap."""
    folder = tmp_path / "bin-without-bwrap"
    if folder.exists():
        return str(folder)
    folder.mkdir()
    for name in ("sh", "git", "true"):
        (folder / name).symlink_to(shutil.which(name) or name)
    (folder / "python3").symlink_to(sys.executable)
    return str(folder)


@pytest.mark.parametrize("options", [(), ("--sandbox", "auto")])  # auto is the default
def test_auto_without_bwrap_runs_unconfined_with_one_warning(
    repo: Repo, mission_dir: Path, tmp_path: Path, options: tuple[str, ...]
) -> None:
    done = cli("run", "missions/demo", "--agent", "cmd:true", "--max-iterations", "1",
               *options, cwd=repo.root, env={"PATH": _no_bwrap_path(tmp_path)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("no OS sandbox: bwrap is not installed") == 1


def test_an_explicit_bwrap_is_refused_in_one_line_before_anything_is_prepared(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    done = cli("run", "missions/demo", "--agent", "cmd:true", "--sandbox", "bwrap",
               cwd=repo.root, env={"PATH": _no_bwrap_path(tmp_path)})  # fmt: skip
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "autoresearch: --sandbox bwrap is not possible here: bwrap is not installed "
        "(Debian: apt-get install bubblewrap) (use --sandbox auto or none)"
    ]
    assert not (repo.root / ".autoresearch" / "runs").exists()
    done = cli("prepare", "missions/demo", "--sandbox", "bwrap",
               cwd=repo.root, env={"PATH": _no_bwrap_path(tmp_path)})  # fmt: skip
    assert done.returncode != 0 and "--sandbox bwrap is not possible here" in done.stderr
    assert not (repo.root / ".autoresearch" / "runs").exists()


MISSING = Support(None, "bwrap is not installed")
PRESENT = Support("/usr/bin/bwrap")


@pytest.mark.parametrize(
    ("requested", "support", "used"),
    [(SandboxMode.AUTO, PRESENT, Choice(SandboxMode.BWRAP, "/usr/bin/bwrap")),
     (SandboxMode.BWRAP, PRESENT, Choice(SandboxMode.BWRAP, "/usr/bin/bwrap")),
     (SandboxMode.NONE, PRESENT, Choice(SandboxMode.NONE)),
     (SandboxMode.NONE, MISSING, Choice(SandboxMode.NONE)),
     (SandboxMode.AUTO, MISSING, Choice(SandboxMode.NONE, note="no OS sandbox: bwrap is not "
      "installed; sessions and evaluations run as you (--sandbox none)"))],
)  # fmt: skip
def test_choose(requested: SandboxMode, support: Support, used: Choice) -> None:
    assert choose(requested, support) == used


def test_choose_refuses_an_explicit_bwrap_the_machine_cannot_give() -> None:
    with pytest.raises(ContractError, match="--sandbox bwrap is not possible here"):
        choose(SandboxMode.BWRAP, MISSING)


def test_sandbox_md_isolation_block() -> None:
    block = "isolation:\n  sandbox: bwrap\n  agent_network: false\n  evaluator_network: true\n"
    parsed = parse_sandbox(sandbox_text(extra=block)).isolation
    assert parsed == Isolation(SandboxMode.BWRAP, agent_network=False, evaluator_network=True)
    assert parse_sandbox(sandbox_text()).isolation == Isolation()


@pytest.mark.parametrize(
    ("block", "message"),
    [("isolation:\n  sandbox: docker\n", "isolation.sandbox must be one of: auto, bwrap, none"),
     ("isolation:\n  agent_network: yes please\n", "isolation.agent_network must be true or false"),
     ("isolation:\n  network: false\n", "isolation.network is not a known key")],
)  # fmt: skip
def test_sandbox_md_isolation_block_refusals(block: str, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        parse_sandbox(sandbox_text(extra=block))


@needs_bwrap
@pytest.mark.bench
def test_the_sandbox_bench_prints_both_modes_side_by_side() -> None:
    bench = Path(__file__).resolve().parents[1] / "bench" / "sandbox.py"
    done = subprocess.run([sys.executable, str(bench), "--runs", "1"],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line.split()[:2] for line in done.stdout.splitlines()]
    assert [row for row in rows if row[:1] in (["session"], ["evaluation"])] == [
        ["session", "none"], ["session", "bwrap"], ["session", "ratio"], ["session", "cost"],
        ["evaluation", "none"], ["evaluation", "bwrap"], ["evaluation", "ratio"],
        ["evaluation", "cost"],
    ]  # fmt: skip


def _in_box(box: Box, tree: Path, script: str, env: dict[str, str]) -> str:
    argv = box.wrap(["sh", "-c", script], tree, env)
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


@needs_bwrap
def test_the_box_itself(repo: Repo, tmp_path: Path) -> None:
    state = repo.root / ".autoresearch"
    tree = state / "worktrees" / "run"
    tree.mkdir(parents=True)
    (state / "journal.sqlite3").write_text("journal")
    elsewhere = tmp_path / "other-project.txt"
    elsewhere.write_text("other")
    # ELSEWHERE: a file the command line itself names is shown (read-only); this one is not
    env = {**os.environ, "TMPDIR": str(tmp_path / "gone"), "ELSEWHERE": str(elsewhere)}
    script = f"""
        touch here.txt && echo tree-writable
        touch {repo.root}/value.txt 2>/dev/null || echo repo-read-only
        ls {state} | tr '\\n' ' '; echo
        cat "$ELSEWHERE" 2>/dev/null || echo tmp-private
        echo "tmpdir=$TMPDIR" && touch "$TMPDIR/scratch" && echo tmp-writable
    """
    out = _in_box(Box(BWRAP.bwrap or "", repo.root), tree, script, env)
    assert out.split() == [
        "tree-writable", "repo-read-only", "worktrees", "tmp-private", "tmpdir=/tmp",
        "tmp-writable",
    ]  # fmt: skip
    assert (tree / "here.txt").exists() and not (tmp_path / "gone").exists()


@needs_bwrap
def test_a_box_without_network_reaches_no_server_on_this_machine(repo: Repo) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        connect = (
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\""
        )
        script = f"{connect} 2>/dev/null && echo online || echo offline"
        boxes = [Box(BWRAP.bwrap or "", repo.root, network=on) for on in (True, False)]
        seen = [_in_box(box, repo.root, script, dict(os.environ)).strip() for box in boxes]
    assert seen == ["online", "offline"]


@needs_bwrap
@pytest.mark.parametrize(("isolation", "seen"), [("", "offline"),
                                                 ("isolation:\n  evaluator_network: true\n", "online")])  # fmt: skip
def test_evaluations_are_offline_unless_sandbox_md_allows_the_network(
    repo: Repo, isolation: str, seen: str
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
        repo.write("scripts/probe.py", probe + "\n")
        command = "(python3 scripts/probe.py 2>/dev/null && echo online || echo offline) && python3 scripts/eval.py"
        repo.mission(sandbox=sandbox_text(command, extra=isolation))
        done = cli("prepare", "missions/demo", "--sandbox", "bwrap", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    log = next((repo.root / ".autoresearch" / "runs").glob("*/logs/iteration-0000-evaluator.log"))
    assert log.read_text().splitlines()[0] == seen


@pytest.mark.parametrize(
    ("status", "seen"), [(0, 0), (1, 1), (128, 128), (137, -9), (143, -15), (-9, -9), (None, None)]
)
def test_a_boxed_childs_signal_death_reads_as_an_unboxed_ones(
    status: int | None, seen: int | None
) -> None:
    assert Box("/usr/bin/bwrap", Path("/repo")).exit_code(status) == seen


@needs_bwrap
def test_a_child_killed_in_the_box_is_told_by_its_signal(repo: Repo, tmp_path: Path) -> None:
    """bwrap exits 137 for a child SIGKILL ended: read as such, a tree kill that reaches an
    evaluation first would be a verdict on the candidate instead of waiting for the driver."""
    spec = SupervisedSpec(
        argv=["sh", "-c", "echo started; kill -9 $$"], cwd=repo.root, env=dict(os.environ),
        log_path=tmp_path / "child.log", settle_seconds=0.1,
        box=Box(BWRAP.bwrap or "", repo.root),
    )  # fmt: skip
    assert run_supervised(spec).exit_code == -signal.SIGKILL


@needs_bwrap
@pytest.mark.parametrize("under", ["tmp", "home"])
def test_a_script_the_command_line_names_runs_in_the_box_and_its_neighbours_stay_hidden(
    repo: Repo, tmp_path: Path, under: str
) -> None:
    """`--agent "cmd:python3 ~/agents/my_agent.py"` (README: a cmd: agent): the box hides $HOME
    and /tmp, but shows the one file the user asked to run, read-only."""
    home = Path(os.environ["HOME"])
    folder = (home if under == "home" else tmp_path) / "agents"
    folder.mkdir(parents=True)
    script = folder / "my_agent.py"
    script.write_text(
        "import os; print('ran', os.path.exists(os.path.join(os.path.dirname(__file__), 'secret')))\n"
    )
    (folder / "secret").write_text("key")
    box = Box(BWRAP.bwrap or "", repo.root)
    env = dict(os.environ)
    argv = box.wrap(["sh", "-c", f"{sys.executable} {script}"], repo.root, env)  # as cmd: runs it
    done = subprocess.run(argv, cwd=repo.root, env=env, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["ran", "False"], done.stderr


@needs_bwrap
@pytest.mark.parametrize("under", ["tmp", "home"])
def test_a_named_script_inside_a_checkout_sees_its_checkout(
    repo: Repo, tmp_path: Path, under: str
) -> None:
    """A `cmd:` agent kept in a project of its own (a clone under ~ or /tmp, with its modules
    and its .venv) runs in the box: the checkout it lies in is shown read-only, not the rest of
    $HOME or /tmp. A clone of this project under /tmp runs its test fakes the same way."""
    home = Path(os.environ["HOME"])
    project = (home if under == "home" else tmp_path) / "my-agents"
    (project / "lib").mkdir(parents=True)
    git(project, "init", "-q")
    (project / "lib" / "helper.py").write_text("NAME = 'helper'\n")
    (project.parent / "beside").write_text("not the agent's")
    script = project / "bin" / "agent.py"
    script.parent.mkdir()
    script.write_text(
        "import sys, pathlib\n"
        "here = pathlib.Path(__file__).parents[1]\n"
        "sys.path.insert(0, str(here / 'lib'))\n"
        "import helper\n"
        "print(helper.NAME, (here.parent / 'beside').exists())\n"
    )
    box = Box(BWRAP.bwrap or "", repo.root)
    env = dict(os.environ)
    argv = box.wrap(["sh", "-c", f"{sys.executable} {script}"], repo.root, env)  # as cmd: runs it
    done = subprocess.run(argv, cwd=repo.root, env=env, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["helper", "False"], done.stderr


@needs_bwrap
def test_the_venv_autoresearch_runs_from_under_tmp_is_shown_whole_and_alone(
    tmp_path: Path, repo: Repo
) -> None:
    """autoresearch run from a venv under /tmp (a clone's .venv, as CI's) whose `python3` on
    PATH a boxed evaluator starts: the box shows that venv, read-only, so the interpreter finds
    its packages, not its `bin` alone (the bare interpreter); the folder around it stays hidden."""
    venv = tmp_path / "clone" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    (tmp_path / "clone" / "beside").write_text("not the venv's")
    (repo.root / ".autoresearch").mkdir(exist_ok=True)
    beside = "os.path.join(sys.prefix, os.pardir, 'beside')"  # named in no argument: not shown
    probe = f"import sys, os; print(sys.prefix != sys.base_prefix, os.path.exists({beside}))"
    wrap = tmp_path / "wrap.py"  # the box as autoresearch run from that venv makes it
    wrap.write_text(
        "import json, os, sys\nfrom pathlib import Path\nfrom autoresearch.confine import Box\n"
        "box = Box(sys.argv[1], Path(sys.argv[2]))\n"
        "print(json.dumps(box.wrap(sys.argv[3:], Path.cwd(), os.environ)))\n"
    )
    source = str(Path(autoresearch.__file__).parents[1])  # the venv imports this autoresearch
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "PYTHONPATH": source}
    argv = [str(venv / "bin" / "python"), str(wrap), BWRAP.bwrap or "", str(repo.root)]
    made = subprocess.run([*argv, "sh", "-c", f"python3 -c {shlex.quote(probe)}"], env=env,
                          cwd=repo.root, capture_output=True, text=True, check=True)  # fmt: skip
    boxed = json.loads(made.stdout)
    done = subprocess.run(boxed, cwd=repo.root, env=env, capture_output=True, text=True)
    assert done.stdout.split() == ["True", "False"], done.stderr


def _bound(argv: list[str]) -> list[str]:
    """The host paths a box's command line binds read-only."""
    return [argv[i + 1] for i, word in enumerate(argv) if word == "--ro-bind"]


def test_each_box_asks_the_file_system_anew(tmp_path: Path) -> None:
    """A PATH folder under /tmp that appears after one evaluation (a venv added) is shown to
    the next, and one that went (a program moved) is no longer bound: nothing is kept."""
    tools = tmp_path / "tools"
    box = Box("/usr/bin/bwrap", tmp_path / "repo")
    env = {"PATH": f"{tools / 'bin'}:/usr/bin", "HOME": str(tmp_path / "home")}
    before = box.wrap(["true"], tmp_path, env)
    (tools / "bin").mkdir(parents=True)
    added = box.wrap(["true"], tmp_path, env)
    (tools / "bin").rename(tmp_path / "moved")
    gone = box.wrap(["true"], tmp_path, env)
    folder = str((tools / "bin").resolve())
    assert (folder in _bound(before), folder in _bound(added), folder in _bound(gone)) == (
        False, True, False)  # fmt: skip


@pytest.mark.parametrize("variable", ["PATH", "HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"])
def test_a_folder_named_by_the_environment_that_loops_is_left_out_not_a_crash(
    tmp_path: Path, variable: str
) -> None:
    """A PATH entry, $HOME or an agent's config folder that is a symbolic link to itself
    resolves to nothing the box can bind or hide: left out (Path.resolve raised RuntimeError
    on it, a traceback for every evaluation)."""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    env = {"PATH": "/usr/bin", "HOME": "/nonexistent"}
    env[variable] = f"{loop}:/usr/bin" if variable == "PATH" else str(loop)
    argv = Box("/usr/bin/bwrap", tmp_path / "repo").wrap(["true"], tmp_path, env)
    assert str(loop) not in argv
