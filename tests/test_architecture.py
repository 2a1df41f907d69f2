"""The layering of ARCHITECTURE.md, checked: every import follows its layer table (read from the
document, every module in one layer), no import circles anywhere in the package, no core
module imports a front door (cli/, mcp/), the doors only parse, call the core and render (no
SQLite, subprocess, git, process or reset code, the journal only through record types and
views), the two engines never import each other, agents reach neither an engine nor the
journal, no test monkeypatches an internal, and every code name ARCHITECTURE.md gives for a
mechanism exists. Each rule has a test that it fails on a violation."""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import inspect
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "src"
DOORS = ("autoresearch.cli", "autoresearch.mcp")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in (ROOT / "autoresearch").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def _imports(path: Path, mods: dict[str, Path]) -> set[str]:
    """Every autoresearch module `path` imports, lazily or not (TYPE_CHECKING blocks aside)."""
    found: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                self.generic_visit(node)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.module and node.module.startswith("autoresearch"):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in mods else node.module)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(a.name for a in node.names if a.name.startswith("autoresearch"))

    Visitor().visit(ast.parse(path.read_text()))
    return {m for m in found if m in mods}


FACADE = "autoresearch.api"


def _facade_table() -> dict[str, tuple[str, str]]:
    """The facade's `_WHERE` (name → module, attribute), read from its source: its imports are
    made on first use, so the import statements alone do not show what it depends on."""
    tree = ast.parse((ROOT / "autoresearch" / "api.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "_WHERE":
            value = ast.literal_eval(node.value) if node.value else {}
            return {str(k): (str(v[0]), str(v[1])) for k, v in value.items()}
    raise AssertionError("autoresearch/api.py has no _WHERE table")


@functools.cache
def _parsed_graph() -> dict[str, frozenset[str]]:
    """Each module's imports, parsed once per test process: six tests read the graph, and a
    parse of every module costs ~0.9 s of CPU."""
    mods = _modules()
    return {name: frozenset(_imports(path, mods) - {name}) for name, path in mods.items()}


def _graph() -> dict[str, set[str]]:
    """The import graph, a fresh copy each call (a test may change its copy)."""
    graph = {name: set(deps) for name, deps in _parsed_graph().items()}
    mods = _modules()
    for module, attribute in _facade_table().values():
        served = f"{module}.{attribute}"
        graph[FACADE].add(served if served in mods else module)
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """The first import circle found in `graph` (a path that comes back to its start)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep, [*path, dep])
                if found:
                    return found
        state[node] = 2
        return None

    for name in sorted(graph):
        if name not in state:
            found = visit(name, [name])
            if found:
                return found
    return None


def test_no_import_circles() -> None:
    cycle = _circle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def _package(module: str) -> str:
    """A module's package: `autoresearch.supervisor.step` → `autoresearch.supervisor`; a module
    at the package's root is a package of its own (`autoresearch.children`)."""
    return ".".join(module.split(".")[:2])


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, deps in graph.items():
        here = _package(module)
        packages.setdefault(here, set()).update(_package(d) for d in deps)
        packages[here].discard(here)
    return packages


def test_no_package_circles() -> None:
    """Files may avoid a circle that their packages still make (supervisor ↔ report once: a run
    drew its report): the doors draw it now, and `finalize`'s keeps are the supervisor's."""
    cycle = _circle(_package_graph(_graph()))
    assert cycle is None, "package circle: " + " -> ".join(cycle or [])


def test_a_package_circle_is_found_where_files_have_none() -> None:
    files = {"autoresearch.a.x": {"autoresearch.b.y"}, "autoresearch.b.z": {"autoresearch.a.w"}}
    assert _circle(files) is None
    assert _circle(_package_graph(files)) == ["autoresearch.a", "autoresearch.b", "autoresearch.a"]


def test_a_circle_is_found() -> None:
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_core_never_imports_a_front_door() -> None:
    for name, deps in _graph().items():
        if name.startswith(DOORS) or name == "autoresearch.__main__":
            continue
        doors = sorted(d for d in deps if d.startswith(DOORS))
        assert not doors, f"{name} imports {doors}"


# Not in a layer: the package itself (its version), `python -m autoresearch`, and the demo's
# template, copied out as a file and never imported.
UNLAYERED = ("autoresearch", "autoresearch.__main__", "autoresearch.demo_template")


def _layers() -> list[tuple[str, tuple[str, ...]]]:
    """(layer, its modules as prefixes) from ARCHITECTURE.md's layer table, top layer first."""
    table = DOC.read_text().split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "---"):
            continue
        names = re.findall(r"`([\w/]+/|\w+\.py)`", cells[1])
        layers.append(
            (
                cells[0],
                tuple(
                    "autoresearch." + n.removesuffix(".py").strip("/").replace("/", ".")
                    for n in names
                ),
            )
        )
    assert len(layers) >= 7, "the layer table of ARCHITECTURE.md was not found"
    return layers


def _layer_violations(
    graph: dict[str, set[str]], layers: list[tuple[str, tuple[str, ...]]]
) -> list[str]:
    def rank(module: str) -> int | None:
        for i, (_, prefixes) in enumerate(layers):
            if any(module == p or module.startswith(p + ".") for p in prefixes):
                return i
        return None

    bad = []
    for name, deps in sorted(graph.items()):
        if name in UNLAYERED or name.startswith(tuple(m + "." for m in UNLAYERED[1:])):
            continue
        mine = rank(name)
        if mine is None:
            bad.append(f"{name} is in no layer of ARCHITECTURE.md")
            continue
        for dep in sorted(deps):
            theirs = rank(dep)
            if theirs is not None and theirs < mine:
                bad.append(f"{name} ({layers[mine][0]}) imports {dep} ({layers[theirs][0]})")
    return bad


def test_every_import_follows_the_layer_table() -> None:
    bad = _layer_violations(_graph(), _layers())
    assert not bad, "\n".join(bad)


def test_an_import_from_a_layer_above_is_caught() -> None:
    layers = [("top", ("autoresearch.cli",)), ("low", ("autoresearch.git",))]
    graph = {"autoresearch.cli.x": {"autoresearch.git"}, "autoresearch.git": {"autoresearch.cli.x"}}
    assert _layer_violations(graph, layers) == [
        "autoresearch.git (low) imports autoresearch.cli.x (top)"
    ]
    assert _layer_violations({"autoresearch.stray": set()}, layers) == [
        "autoresearch.stray is in no layer of ARCHITECTURE.md"
    ]


FORBIDDEN = {
    "supervisor": ("autoresearch.experiments", "autoresearch.worker"),
    "experiments": ("autoresearch.supervisor", "autoresearch.worker"),
    "agents": (
        "autoresearch.supervisor",
        "autoresearch.experiments",
        "autoresearch.worker",
        "autoresearch.journal",
    ),
}


def test_engines_and_agents_keep_to_their_layer() -> None:
    for name, deps in _graph().items():
        layer = name.split(".")[1] if "." in name else ""
        banned = FORBIDDEN.get(layer, ())
        bad = sorted(d for d in deps if d.startswith(banned))
        assert not bad, f"{name} imports {bad}"


# What a door may not touch: the database, processes, git, and the mechanisms it would only
# need to do the core's work itself (the journal's record types and its JSON views it may use).
DOOR_BANNED = (
    "sqlite3",
    "subprocess",
    "autoresearch.git",
    "autoresearch.proc",
    "autoresearch.children",
    "autoresearch.reset",
    "autoresearch.locks",
    "autoresearch.failpoints",
    "autoresearch.journal.db",
    "autoresearch.journal.schema",
    "autoresearch.journal.integrity",
)
DOOR_JOURNAL_OK = ("autoresearch.journal.views",)


def _door_imports(path: Path) -> list[tuple[str, str | None]]:
    """(module, name) for every import in `path`, lazy ones included (name None: `import m`)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((a.name, None) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.module, a.name) for a in node.names)
    return found


def _door_violations(name: str, path: Path) -> list[str]:
    bad = []
    for module, imported in _door_imports(path):
        full = module if imported is None else f"{module}.{imported}"
        if any(full == b or full.startswith(b + ".") for b in DOOR_BANNED):
            bad.append(f"{name} imports {full}")
        elif module.startswith("autoresearch.journal") and module not in DOOR_JOURNAL_OK:
            target = getattr(importlib.import_module(module), imported or "", None)
            if not isinstance(target, type):  # a record type to render is fine, SQL is not
                bad.append(f"{name} imports {full} (journal access)")
        elif module == "os" and imported in ("kill", "killpg", "system", "popen"):
            bad.append(f"{name} imports {full}")
    return bad


def test_doors_only_parse_call_the_core_and_render() -> None:
    bad = [
        line
        for name, path in _modules().items()
        if name.startswith(DOORS)
        for line in _door_violations(name, path)
    ]
    assert not bad, "\n".join(bad)


def _facade_violations(table: dict[str, tuple[str, str]]) -> list[str]:
    """What the facade serves is held to the doors' rule: a door gets nothing through it that it
    could not import itself."""
    door = "\n".join(f"from {m} import {a}" for m, a in table.values())
    return _violations_of_source(FACADE, door)


def _violations_of_source(name: str, source: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "door.py"
        path.write_text(source)
        return _door_violations(name, path)


def test_the_facade_serves_the_doors_nothing_they_may_not_touch() -> None:
    assert not _facade_violations(_facade_table())
    assert _facade_violations({"run_sql": ("autoresearch.journal.runs", "get_run")}) == [
        "autoresearch.api imports autoresearch.journal.runs.get_run (journal access)"
    ]


def _outside_the_facade(name: str, path: Path) -> list[str]:
    """A door's imports of the core that do not go through `autoresearch.api`."""
    return [
        f"{name} imports {module}" + (f".{imported}" if imported else "")
        for module, imported in _door_imports(path)
        if module.startswith("autoresearch")
        and module != FACADE
        and not module.startswith(DOORS)
        and not (module == "autoresearch" and imported in ("api", "cli", "mcp"))
    ]


def test_doors_reach_the_core_only_through_the_facade() -> None:
    """Issue 32: the CLI and the MCP server call one public API, so the core can be rearranged
    behind it; a door importing a core module directly is named here."""
    bad = [
        line
        for name, path in _modules().items()
        if name.startswith(DOORS)
        for line in _outside_the_facade(name, path)
    ]
    assert not bad, "\n".join(bad)


def test_a_door_going_around_the_facade_is_caught(tmp_path: Path) -> None:
    door = tmp_path / "door.py"
    door.write_text(
        "from autoresearch.api import step\nfrom autoresearch.cli.common import say\n"
        "def f():\n    from autoresearch.supervisor.step import step\n"
    )
    assert _outside_the_facade("door", door) == ["door imports autoresearch.supervisor.step.step"]


def test_the_facade_types_every_name_it_serves() -> None:
    """mypy reads the facade's names from its `TYPE_CHECKING` imports, the doors get them from
    `_WHERE` at run time: the two lists are one."""
    tree = ast.parse((ROOT / "autoresearch" / "api.py").read_text())
    typed = {
        alias.asname or alias.name: (node.module or "", alias.name)
        for block in tree.body
        if isinstance(block, ast.If) and getattr(block.test, "id", "") == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == _facade_table()


def test_every_facade_name_is_served() -> None:
    """Each name imports (a stale entry would fail a door only when that door ran)."""
    api = importlib.import_module(FACADE)
    for name in api.names():
        assert getattr(api, name) is not None, name
    try:
        api.no_such_name  # noqa: B018 (the lookup is the test)
    except AttributeError as missing:
        assert "no_such_name" in str(missing)
    else:
        raise AssertionError("an unknown facade name was served")


def test_a_door_that_reaches_into_storage_is_caught(tmp_path: Path) -> None:
    """The rule above fails on the violations it names (so it cannot pass by accident)."""
    door = tmp_path / "door.py"
    door.write_text(
        "import sqlite3\nfrom autoresearch import git\nfrom autoresearch.journal.runs import RunRecord\n"
        "def f():\n    from autoresearch.journal.runs import get_run\n"
    )
    assert _door_violations("door", door) == [
        "door imports sqlite3",
        "door imports autoresearch.git",
        "door imports autoresearch.journal.runs.get_run (journal access)",
    ]


# --- ARCHITECTURE.md names real code -----------------------------------------------------------

DOC = ROOT.parent / "ARCHITECTURE.md"
PKG = ROOT / "autoresearch"


def _module_of(token: str) -> str | None:
    """`supervisor/record.py`, `states.py`, `journal/children.py` → the dotted module name."""
    path = PKG / token
    if token.endswith(".py") and path.is_file():
        return "autoresearch." + token.removesuffix(".py").replace("/", ".")
    if token.endswith("/") and path.is_dir():
        return "autoresearch." + token.rstrip("/").replace("/", ".")
    return None


def _attr(target: object, path: str) -> object:
    """What `path` (dotted) names in `target`: an attribute, a dataclass field, a property."""
    for part in path.split(".") if path else []:
        found = getattr(target, part, _MISSING)
        if found is _MISSING and dataclasses.is_dataclass(target):
            fields = {f.name: f for f in dataclasses.fields(target)}
            found = fields.get(part, _MISSING)
        if found is _MISSING:
            return _MISSING
        target = found
    return target


def _lookup(token: str, context: str | None, callee: object = None) -> object:
    """What a code name the document gives is (`_MISSING`: nothing): a module or folder,
    `module.attr...` (`a/b.attr` for a module in a folder), a name (or `Class.attr`) of the
    module named before it in the same cell or defined at the top of any module, a parameter
    of the function named before it, or a contract string the code spells (a column
    `table.column` of the schema, a failpoint, `outcome.v1`)."""
    module = _module_of(token)
    if module is not None:
        return importlib.import_module(module)
    folder, _, tail = token.rpartition("/")
    first, _, attrs = tail.partition(".")
    prefix = "autoresearch." + (folder.replace("/", ".") + "." if folder else "")
    candidates = [(prefix + first, attrs)]
    if not folder:
        if context is not None:
            candidates.append((context, token))
        candidates += [(m, token) for m in _defining(first)]
    for module, path in candidates:
        try:
            found = _attr(importlib.import_module(module), path)
        except ImportError:
            continue
        if found is not _MISSING:
            return found
    if callable(callee) and token in inspect.signature(callee).parameters:
        return token
    # a contract string the code spells (`outcome.v1`, a failpoint, a command word): never
    # a CamelCase or snake_case name, which must exist as code
    spelt = "." in token or (token.isalpha() and token.islower())
    return token if (spelt and token in _strings()) or _column(token) else _MISSING


def _resolve(token: str, context: str | None, callee: object = None) -> bool:
    return _lookup(token, context, callee) is not _MISSING


_MISSING = object()


@functools.cache
def _top_level_names() -> dict[str, set[str]]:
    """module → the names it defines at its top level (classes, functions, constants)."""
    names: dict[str, set[str]] = {}
    for module, path in _modules().items():
        found = names.setdefault(module, set())
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _defining(name: str) -> list[str]:
    return sorted(m for m, names in _top_level_names().items() if name in names)


@functools.cache
def _strings() -> frozenset[str]:
    """Every string literal of the package (contract strings, failpoint names)."""
    return frozenset(
        node.value
        for path in _modules().values()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _column(token: str) -> bool:
    table, _, column = token.partition(".")
    schema = (PKG / "journal" / "schema.py").read_text()
    return bool(column) and f"CREATE TABLE {table}" in schema and f"{column} " in schema


def _mechanism_cells() -> list[tuple[str, str]]:
    """(mechanism, where) for each row of the tables "Where each mechanism lives" and
    "Seams for tests"."""
    text = DOC.read_text()
    rows = []
    for title in ("## Where each mechanism lives", "## Seams for tests"):
        table = text.split(title, 1)[1].split("\n## ", 1)[0]
        for line in table.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 2 and not cells[1].startswith(("the ", "---")):
                rows.append((cells[0], cells[1]))
    assert len(rows) > 30, "the tables of ARCHITECTURE.md were not found"
    return rows


def _context(token: str) -> str | None:
    """The module a `module.attr` or `folder/module.attr` token names."""
    if "." not in token:
        return None
    head = token.split(".", 1)[0]
    module = "autoresearch." + head.replace("/", ".")
    return module if module in _modules() else None


def test_every_code_name_in_the_mechanism_table_exists() -> None:
    missing = []
    for mechanism, where in _mechanism_cells():
        context, callee = None, None
        for token in re.findall(r"`([^`]+)`", where):
            if " " in token or not re.fullmatch(r"[A-Za-z_][\w./]*", token):
                continue  # a command line or a contract string, not a code name
            context = _module_of(token) or _context(token) or context
            found = _lookup(token, context, callee)
            if found is _MISSING:
                missing.append(f"{mechanism}: `{token}`")
            elif inspect.isfunction(found):
                callee = found
    assert not missing, "ARCHITECTURE.md names code that does not exist:\n" + "\n".join(missing)


def test_a_name_that_does_not_exist_is_caught() -> None:
    context = "autoresearch.reset"
    for token in ("reset.py", "supervisor/", "states.is_better", "worker/liveness.end_dead"):
        assert _resolve(token, None), token
    assert _resolve("save_then_reset", context) and _resolve("RuntimeRule", context)
    assert _resolve("RunRecord.sandbox", None)  # a dataclass field
    assert _resolve("runs.sandbox_json", None) and _resolve("outcome.v1", None)
    from autoresearch.supervisor.prepare import prepare

    assert _resolve("measure_with", None, prepare) and not _resolve("measure_by", None, prepare)
    for token in ("states.NEEDS_GIT_EFFECT", "liveness.end_dead", "reset.nope", "NoSuchThing"):
        assert not _resolve(token, context), token


# --- tests pass their own through a seam -----------------------------------------------------

TESTS = Path(__file__).resolve().parent


def _patched_internals(path: Path) -> list[str]:
    """`monkeypatch.setattr` (or an assignment) aimed at something imported from autoresearch."""
    tree = ast.parse(path.read_text())
    ours: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autoresearch"):
            ours.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("autoresearch"):
                    ours.add(a.asname or a.name.split(".")[0])

    def root(expr: ast.expr) -> str | None:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else None

    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "setattr"
            and node.args
        ):
            target = node.args[0]
            text = target.value if isinstance(target, ast.Constant) else None
            if (isinstance(text, str) and text.startswith("autoresearch")) or root(target) in ours:
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and root(t.value) in ours:
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(t)} = …")
    return found


# Where a test stands in for another *release* of autoresearch, not for a dependency of the
# code under test, no seam can do it: (file, what it patches) → why.
OTHER_RELEASE = {
    ("test_slug.py", "old_version.setattr(sandbox, 'slug', _legacy_slug)"): (
        "a run made by the slug rule of an older release"
    ),
}


def test_no_test_monkeypatches_an_internal() -> None:
    found = [
        line
        for path in sorted(TESTS.rglob("*.py"))
        for line in _patched_internals(path)
        if (path.name, line.split(": ", 1)[1]) not in OTHER_RELEASE
    ]
    assert not found, "pass a seam instead (ARCHITECTURE.md, Seams for tests):\n" + "\n".join(found)


def test_a_monkeypatched_internal_is_caught(tmp_path: Path) -> None:
    test = tmp_path / "test_x.py"
    test.write_text(
        "from autoresearch.report import plot\nimport autoresearch.mcp.server as server\n"
        "def test(monkeypatch):\n"
        "    monkeypatch.setattr(plot, 'available', lambda: False)\n"
        "    monkeypatch.setattr('autoresearch.proc.kill_marked', None)\n"
        "    server.RUN_SLACK_SECONDS = 1\n"
        "    monkeypatch.setattr(os, 'getpid', lambda: 1)\n"  # not ours: allowed
    )
    assert sorted(line.split(":")[1] for line in _patched_internals(test)) == ["4", "5", "6"]
