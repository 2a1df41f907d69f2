"""A `cmd:` worker agent for the job tests: `job_agent.py ACTION [ARGS…]` in the job's directory.

edit PATH TEXT [PATH TEXT …]  write files (relative to the working directory), exit 0
fail PATH TEXT                 write a file, then exit 3 (the session broke)
wait GATE PATH TEXT           wait (up to 120 s) until the file GATE exists, then write a file:
                               the test, not the clock, says when the job may finish
revise PATH FIRST AGAIN        write FIRST, or AGAIN when the instructions are a revise pass's
stage PATH                     append to PATH what the stage's instructions ask: stage 1
                               sets VALUE = 2, stage 2 adds NAME = 'x'
hang PIDFILE                   start a grandchild (same process group), record
                               "agent_pid grandchild_pid pgid" in PIDFILE, then sleep forever
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def write_pairs(args: list[str]) -> None:
    for rel, text in zip(args[::2], args[1::2], strict=True):
        path = Path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
        print(f"wrote {rel}", flush=True)


def main(argv: list[str]) -> int:
    action, args = argv[0], argv[1:]
    if action == "edit":
        write_pairs(args)
        return 0
    if action == "fail":
        write_pairs(args)
        print("giving up", flush=True)
        return 3
    if action == "wait":
        gate, deadline = Path(args[0]), time.monotonic() + 120
        while not gate.exists():
            if time.monotonic() > deadline:
                print("the gate never opened", flush=True)
                return 4
            time.sleep(0.02)
        write_pairs(args[1:])
        return 0
    if action == "revise":
        instructions = Path(os.environ["AUTORESEARCH_INSTRUCTIONS_FILE"]).read_text()
        again = "--- Revise pass" in instructions
        write_pairs([args[0], args[2] if again else args[1]])
        return 0
    if action == "stage":
        instructions = Path(os.environ["AUTORESEARCH_INSTRUCTIONS_FILE"]).read_text()
        path = Path(args[0])
        if "--- Stage 1 of" in instructions:
            path.write_text("VALUE = 2\n")
        else:
            path.write_text(path.read_text() + "NAME = 'x'\n")
        return 0
    if action == "hang":
        child = subprocess.Popen(["sleep", "300"])
        print("hanging", flush=True)
        Path(args[0]).write_text(f"{os.getpid()} {child.pid} {os.getpgid(0)}\n")
        time.sleep(300)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
