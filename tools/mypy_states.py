"""A mypy plugin: comparing a state with a string that is none of its values is an error.

The states (autoresearch/states.py, and any other StrEnum of the package) are StrEnums, so
that they go into JSON, SQL and messages as their strings. For the same reason mypy's strict
equality accepts `run.status == "runing"`: a str subclass overlaps every str. This hook on
`==` and `!=` reports a comparison of such an enum (or one of its members) with a string
literal that is none of its values, in either order (`"runing" == run.status`); the code
compares with members (`run.status == RunStatus.RUNNING`). A membership test in a tuple, list
or set written out in place (`run.status in ("stoped", "running")`) is checked the same way,
item by item. Assigning, passing or returning a string where a state is expected, and a
misspelt member, mypy reports without help.

mypy checks `x in container` by trying `container.__contains__(x)` with its errors held back,
and when that fails, iterating the container (`__iter__`), whose errors it does report. So the
`__contains__` hook, on a misspelt item, fails (which sends mypy down the iteration path) and
leaves the message for the `__iter__` hook of the same comparison to report.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    ComparisonExpr,
    Expression,
    ListExpr,
    SetExpr,
    StrExpr,
    TupleExpr,
    TypeInfo,
    Var,
)
from mypy.options import Options
from mypy.plugin import MethodContext, Plugin
from mypy.types import Instance, LiteralType, TupleType, Type, get_proper_type

PACKAGE = "autoresearch."
_COMPARISONS = ("__eq__", "__ne__")
_CONTAINERS = ("builtins.tuple", "builtins.list", "builtins.set", "builtins.frozenset")
STATE_VALUE = ErrorCode("state-value", "A state compared with a string it never equals", "General")


def _state(t: Type) -> TypeInfo | None:
    """The state enum `t` is (or one of whose members it is), if any."""
    p = get_proper_type(t)
    if isinstance(p, LiteralType):
        p = p.fallback
    if isinstance(p, Instance) and p.type.is_enum and p.type.module_name.startswith(PACKAGE):
        return p.type
    return None


def _text(t: Type) -> str | None:
    """The string literal `t` is, if it is one."""
    p = get_proper_type(t)
    if isinstance(p, Instance) and p.last_known_value is not None:
        p = p.last_known_value
    if isinstance(p, LiteralType) and p.fallback.type.fullname == "builtins.str":
        return p.value if isinstance(p.value, str) else None
    return None


def _values(info: TypeInfo) -> set[str] | None:
    """The members' values (None: not all of them are string literals)."""
    values = set()
    for name, sym in info.names.items():
        if isinstance(sym.node, Var) and not name.startswith("_"):
            value = _text(sym.node.type) if sym.node.type is not None else None
            if value is None:
                return None
            values.add(value)
    return values


def _misspelt(state: TypeInfo | None, text: str | None) -> str | None:
    """The error for comparing `state` with `text`, if `text` is none of its values."""
    if state is None or text is None:
        return None
    values = _values(state)
    if values is None or text in values:
        return None
    return f'"{text}" is not a {state.name} ({", ".join(sorted(values))})'


def _check(ctx: MethodContext) -> Type:
    if ctx.arg_types and ctx.arg_types[0]:
        other = ctx.arg_types[0][0]
        for state, text in ((_state(ctx.type), _text(other)), (_state(other), _text(ctx.type))):
            message = _misspelt(state, text)
            if message is not None:
                ctx.api.fail(message, ctx.context, code=STATE_VALUE)
    return ctx.default_return_type


def _items(container: Expression | None, container_type: Type) -> list[str]:
    """The string literals a membership test's container holds: written out in place, or the
    items of a tuple whose type keeps them (a `Final` constant)."""
    if isinstance(container, TupleExpr | ListExpr | SetExpr):
        return [item.value for item in container.items if isinstance(item, StrExpr)]
    p = get_proper_type(container_type)
    if isinstance(p, TupleType):
        return [t for t in map(_text, p.items) if t is not None]
    return []


def _right_of(comparison: ComparisonExpr, left: Expression) -> Expression | None:
    """The operand after `left` in a (possibly chained) comparison."""
    for a, b in zip(comparison.operands, comparison.operands[1:], strict=False):
        if a is left:
            return b
    return None


class StatesPlugin(Plugin):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        # membership tests found misspelt by `__contains__`, reported by `__iter__` (see above)
        self._pending: dict[int, list[str]] = {}

    def _contains(self, ctx: MethodContext) -> Type:
        comparison = ctx.context
        if isinstance(comparison, ComparisonExpr) and ctx.args and ctx.args[0]:
            state = _state(ctx.arg_types[0][0])
            container = _right_of(comparison, ctx.args[0][0])
            messages = [
                m
                for m in (_misspelt(state, t) for t in _items(container, ctx.type))
                if m is not None
            ]
            if messages:
                self._pending[id(comparison)] = messages
                ctx.api.fail(messages[0], comparison, code=STATE_VALUE)  # held back by mypy
        return ctx.default_return_type

    def _iterate(self, ctx: MethodContext) -> Type:
        for message in self._pending.pop(id(ctx.context), []):
            ctx.api.fail(message, ctx.context, code=STATE_VALUE)
        return ctx.default_return_type

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        owner, _, method = fullname.rpartition(".")
        if method in _COMPARISONS and (owner.startswith(PACKAGE) or owner == "builtins.str"):
            return _check
        if owner in _CONTAINERS and method == "__contains__":
            return self._contains
        if owner in _CONTAINERS and method == "__iter__":
            return self._iterate
        return None


def plugin(version: str) -> type[Plugin]:
    return StatesPlugin
