"""The OS file lock: exclusive drivers, probes that never disturb each other."""

from __future__ import annotations

import threading
from pathlib import Path

from autoresearch.locks import FileLock


def test_probes_never_report_a_holder_that_is_only_another_probe(tmp_path: Path) -> None:
    path = tmp_path / "driver.lock"
    stop = threading.Event()

    def probe_forever() -> None:
        while not stop.is_set():
            FileLock(path).held_elsewhere()

    prober = threading.Thread(target=probe_forever)
    prober.start()
    try:
        assert not any(FileLock(path).held_elsewhere() for _ in range(2000))
        driver = FileLock(path)
        assert driver.try_acquire(patience=0.5)  # probes only make a driver wait an instant
        assert FileLock(path).held_elsewhere()
        assert not FileLock(path).try_acquire()
        driver.release()
    finally:
        stop.set()
        prober.join()
