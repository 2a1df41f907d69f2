"""A live report: the report page served on 127.0.0.1, brought up to date in place.

The page is the one `report` writes (html.render), plus a small script that polls `/state`
every POLL_MS; when the report's version changed it fetches the page again and swaps its
<main> in, so a new iteration shows without a reload (the table's filter and sort are kept).
Every request reads the journal afresh, read-only, through the report's own loaders (a run
being written by its driver is read as WAL allows: never blocked, never blocking); nothing is
written anywhere. The files the rows link to (logs, patches) are served, and no other file.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import posixpath
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from autoresearch.errors import AutoresearchError
from autoresearch.report import draw, html, redacted
from autoresearch.report.model import Outcome, ReportData

HOST = "127.0.0.1"
POLL_MS = 1500
# A request that has not arrived whole by then is dropped: no client holds a thread forever.
REQUEST_TIMEOUT_S = 10.0
# How often the serving thread looks for `stop`: its shutdown waits up to one poll.
STOP_POLL_S = 0.05
# A read of the report is reused while the journal's files are unchanged, for at most this
# long: reading it runs git for every kept diff (121 ms for 11 kept changes), and what no
# journal write changes (a driver that died: "running, no driver") still shows within it.
REUSE_S = 5.0

# What a served report reads: the model as the journal has it now, and the report's folder
# (the links in the page are relative to it, as in report.html).
Loader = Callable[[], tuple[ReportData, Path]]


@dataclass(frozen=True)
class Snapshot:
    """The report as of one read of the journal, with a version that changes with its content."""

    data: ReportData
    base: Path
    version: str

    @classmethod
    def of(cls, data: ReportData, base: Path) -> Snapshot:
        # generated_at changes on every read; the content is everything else
        content = repr(replace(data, generated_at=""))
        return cls(data, base, hashlib.sha256(content.encode()).hexdigest()[:16])

    def state(self) -> dict[str, object]:
        """What `/state` answers: enough for the page to know whether to fetch itself again."""
        done = [r for r in self.data.rows if r.outcome is not Outcome.BASELINE]
        return {
            "version": self.version,
            "kind": self.data.kind.value,
            "id": self.data.ident,
            "status": self.data.status_line,
            "live": self.data.live,
            "iterations": len(done),
            "last": max((r.number for r in done), default=None),
        }

    def files(self) -> dict[str, Path]:
        """The URL path of each file a row links to, as the browser resolves the page's link."""
        return {
            posixpath.normpath("/" + html.href(link.path, self.base)): Path(link.path)
            for row in self.data.rows
            for link in row.links
        }


def journal_signature(journal: Path) -> tuple[tuple[int, int] | None, ...]:
    """What changes with every write to the journal: its files' times and sizes (a commit
    goes to the -wal file, a checkpoint to the database)."""
    return tuple(_stat(journal.with_name(journal.name + end)) for end in ("", "-wal"))


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_mtime_ns, found.st_size


class LiveReport:
    """Reads the report when the journal changed (at least every REUSE_S); renders the page
    only when its version changed."""

    def __init__(self, load: Loader, journal: Path | None = None) -> None:
        self._load = load
        self._journal = journal  # None: read on every request
        self._read_lock = threading.Lock()
        self._read: tuple[object, float, Snapshot] | None = None  # (signature, when, snapshot)
        self._lock = threading.Lock()
        self._page: tuple[str, bytes] | None = None  # (version, page)

    def snapshot(self) -> Snapshot:
        # the signature is taken before the read: a write during it is seen at the next one
        seen = None if self._journal is None else journal_signature(self._journal)
        reused = self._reusable(seen)
        if reused is not None:
            return reused
        snap = Snapshot.of(*self._load())
        with self._read_lock:
            self._read = (seen, time.monotonic(), snap)
        return snap

    def _reusable(self, seen: object) -> Snapshot | None:
        with self._read_lock:
            last = self._read
        if last is None or seen is None or last[0] != seen:
            return None
        return last[2] if time.monotonic() - last[1] < REUSE_S else None

    def page(self) -> bytes:
        snap = self.snapshot()
        with self._lock:  # one render at a time: matplotlib is not thread-safe
            if self._page is None or self._page[0] != snap.version:
                self._page = (snap.version, render_page(snap))
            return self._page[1]


def render_page(snap: Snapshot) -> bytes:
    data = redacted(snap.data)
    image, warning = draw(data)
    png = image.png if image is not None else None
    return html.render(data, png, warning or "", snap.base, live_tail(snap.version)).encode()


def live_tail(version: str) -> str:
    """The badge that says the page is live (and carries its version) and the polling script."""
    return (
        f'<p id="live" data-version="{escape(version)}" style="position:fixed;bottom:8px;'
        "right:12px;margin:0;padding:4px 10px;border-radius:6px;background:#fff8c5;"
        'border:1px solid #d4a72c;font-size:12px">live: follows the run</p>'
        f"<script>{LIVE_SCRIPT.replace('POLL_MS', str(POLL_MS))}</script>"
    )


LIVE_SCRIPT = """
"use strict";
(() => {
  const badge = document.getElementById("live");
  let version = badge.dataset.version;
  const get = async (url) => {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(url + ": " + response.status);
    return response;
  };
  const remember = () => {
    const filter = document.querySelector("[data-filter][aria-pressed=true]");
    const sorted = document.querySelector("#iterations th[aria-sort]");
    return {
      filter: filter ? filter.dataset.filter : "all",
      col: sorted ? sorted.querySelector("button").dataset.col : null,
      clicks: sorted && sorted.getAttribute("aria-sort") === "descending" ? 2 : 1,
    };
  };
  const restore = (was) => {
    const filter = document.querySelector(`[data-filter="${was.filter}"]`);
    if (filter && was.filter !== "all") filter.click();
    const sort = document.querySelector(`#iterations th button[data-col="${was.col}"]`);
    for (let i = 0; sort && i < was.clicks; i++) sort.click();
  };
  const swap = async () => {
    const text = await (await get("/")).text();
    const fresh = new DOMParser().parseFromString(text, "text/html");
    const was = remember();
    document.querySelector("main").replaceWith(fresh.querySelector("main"));
    version = fresh.getElementById("live").dataset.version;
    // The report's own script wires the table on DOMContentLoaded: wire the new one too.
    document.dispatchEvent(new Event("DOMContentLoaded"));
    restore(was);
  };
  const tick = async () => {
    try {
      const state = await (await get("/state")).json();
      if (state.version !== version) await swap();
      badge.textContent = "live: " + state.status + " · checked " +
        new Date().toLocaleTimeString();
    } catch (error) {
      badge.textContent = "live: the server does not answer (" + error.message + "); retrying";
    }
    setTimeout(tick, POLL_MS);
  };
  setTimeout(tick, POLL_MS);
})();
"""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT_S

    def do_GET(self) -> None:  # http.server calls it by this name
        # A page of another site can make the browser ask 127.0.0.1 under its own name (DNS
        # rebinding): only the names this server is reached by are answered.
        if self.headers.get("Host") not in self.server.hosts:
            self._send(HTTPStatus.FORBIDDEN, "text/plain", b"unknown host")
            return
        try:
            self._answer(urlsplit(self.path).path)
        except AutoresearchError as exc:  # e.g. the journal is gone: say so, keep serving
            self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain", exc.message.encode())

    def _answer(self, path: str) -> None:
        live = self.server.live
        if path == "/":
            self._send(HTTPStatus.OK, "text/html", live.page())
        elif path == "/favicon.ico":  # browsers ask for it; none, without a console error
            self._send(HTTPStatus.NO_CONTENT, "image/x-icon", b"")
        elif path == "/state":
            body = json.dumps(live.snapshot().state()).encode()
            self._send(HTTPStatus.OK, "application/json", body)
        else:
            self._file(live.snapshot().files().get(path))

    def _file(self, found: Path | None) -> None:
        if found is None or not found.is_file():
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")
            return
        kind = mimetypes.guess_type(found.name)[0] or "text/plain"
        self._send(HTTPStatus.OK, kind, found.read_bytes())

    def _send(self, status: HTTPStatus, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # stdout is the URL and the goodbye; a request log would drown them


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a request still going never keeps the process alive at the end

    def __init__(self, live: LiveReport, port: int) -> None:
        self.live = live
        super().__init__((HOST, port), _Handler)
        bound = self.server_address[1]
        self.hosts = frozenset({f"{HOST}:{bound}", f"localhost:{bound}"})

    def handle_error(self, request: object, client_address: object) -> None:
        # one line, not http.server's traceback; the server goes on with the next request
        error = sys.exc_info()[1]
        print(f"autoresearch: a request failed: {error!r}", file=sys.stderr, flush=True)


@dataclass
class Serving:
    """A live report being served in a background thread, until `stop`."""

    server: _Server
    thread: threading.Thread

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.server.server_address[1]}/"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=REQUEST_TIMEOUT_S)
        self.server.server_close()


def serve_report(load: Loader, port: int = 0, journal: Path | None = None) -> Serving:
    """Serve the report `load` reads on 127.0.0.1:`port` (0: a free one), read again when
    `journal` changed (None: on every request). The first read happens here, so an unknown
    run is refused before anything listens."""
    live = LiveReport(load, journal)
    live.snapshot()
    try:
        server = _Server(live, port)
    except OSError as exc:
        raise AutoresearchError(f"cannot serve on {HOST}:{port}: {exc.strerror}") from exc
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": STOP_POLL_S})
    thread.daemon = True
    thread.start()
    return Serving(server, thread)
