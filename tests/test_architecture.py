"""The layering of ARCHITECTURE.md, checked: no import circles anywhere in the package, no core
module imports a front door (cli/, mcp/), the two engines never import each other, and agents
reach neither an engine nor the journal."""

from __future__ import annotations

import ast
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


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {name: _imports(path, mods) - {name} for name, path in mods.items()}


def test_no_import_circles() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycle = [*path[path.index(dep) :], dep]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_the_core_never_imports_a_front_door() -> None:
    for name, deps in _graph().items():
        if name.startswith(DOORS) or name == "autoresearch.__main__":
            continue
        doors = sorted(d for d in deps if d.startswith(DOORS))
        assert not doors, f"{name} imports {doors}"


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
