"""A mypy plugin: comparing a state with a string that is none of its values is an error.

The states (autoresearch/states.py, and any other StrEnum of the package) are StrEnums, so
that they go into JSON, SQL and messages as their strings. For the same reason mypy's strict
equality accepts `run.status == "runing"`: a str subclass overlaps every str. This hook on
`==` and `!=` reports a comparison of such an enum (or one of its members) with a string
literal that is none of its values, in either order (`"runing" == run.status`); the code
compares with members (`run.status == RunStatus.RUNNING`). Assigning, passing or returning a
string where a state is expected, and a misspelt member, mypy reports without help.
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.errorcodes import ErrorCode
from mypy.nodes import TypeInfo, Var
from mypy.plugin import MethodContext, Plugin
from mypy.types import Instance, LiteralType, Type, get_proper_type

PACKAGE = "autoresearch."
_COMPARISONS = ("__eq__", "__ne__")
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


def _check(ctx: MethodContext) -> Type:
    if ctx.arg_types and ctx.arg_types[0]:
        other = ctx.arg_types[0][0]
        for state, text in ((_state(ctx.type), _text(other)), (_state(other), _text(ctx.type))):
            if state is None or text is None:
                continue
            values = _values(state)
            if values is not None and text not in values:
                ctx.api.fail(
                    f'"{text}" is not a {state.name} ({", ".join(sorted(values))})',
                    ctx.context,
                    code=STATE_VALUE,
                )
    return ctx.default_return_type


class StatesPlugin(Plugin):
    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        owner, _, method = fullname.rpartition(".")
        if method in _COMPARISONS and (owner.startswith(PACKAGE) or owner == "builtins.str"):
            return _check
        return None


def plugin(version: str) -> type[Plugin]:
    return StatesPlugin
