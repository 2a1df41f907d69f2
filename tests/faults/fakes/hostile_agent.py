"""A `cmd:` agent that attacks the run's history, one action per iteration (HOSTILE_PLAN):

improve        commit a better value on the run branch (the honest session)
foreign        check out a new branch, commit a better value there and report it
detach         detach HEAD, commit a better value and report it
rewrite        `git reset --hard <root commit>`, commit a better value and report it
invalid        commit a better value, then write an artifact that is not JSON
torn           commit a better value, write half an artifact, then SIGKILL the driver's
               whole process group and its own (a machine dying mid-write); only when the
               driver leads its own group, never a test runner's
noop           report noop
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/: the shared artifact helpers
from helpers import artifact as make_artifact
from helpers import write_artifact

iteration = int(os.environ["AUTORESEARCH_ITERATION"])
plan = os.environ.get("HOSTILE_PLAN", "improve").split(",")
action = plan[min(iteration, len(plan)) - 1]
candidate_file = os.environ["AUTORESEARCH_CANDIDATE_FILE"]


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def artifact(status: str, commit: str | None, description: str) -> None:
    base = os.environ["AUTORESEARCH_BASE_COMMIT"]
    write_artifact(Path(candidate_file), make_artifact(status, commit, base, description))


def better_commit(message: str) -> str:
    value = float(Path("value.txt").read_text()) + 10
    Path("value.txt").write_text(f"{value:g}\n")
    git("commit", "-qam", message)
    return git("rev-parse", "HEAD")


if action == "noop":
    artifact("noop", None, "nothing")
    sys.exit(0)
if action == "foreign":
    git("checkout", "-q", "-b", f"agent-owned-{iteration}")
elif action == "detach":
    git("checkout", "-q", "--detach")
elif action == "rewrite":
    root = git("rev-list", "--max-parents=0", "HEAD").splitlines()[0]
    git("reset", "-q", "--hard", root)
    Path("value.txt").write_text("0\n")
head = better_commit(f"{action} at iteration {iteration}")
if action == "invalid":
    Path(candidate_file).write_text("{ not json")
    sys.exit(0)
if action == "torn":
    Path(candidate_file).write_text('{"status": "candidate", "candidate_comm')
    leader = Path(f"/proc/{os.getpgid(0)}/stat").read_text()
    driver = int(leader[leader.rfind(")") + 2 :].split()[1])
    if os.getpgid(driver) == driver:
        os.killpg(driver, 9)
        os.killpg(0, 9)
    sys.exit(1)
artifact("candidate", head, f"{action} at iteration {iteration}")
