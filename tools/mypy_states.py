"""A mypy plugin: comparing a state with a string that is none of its values is an error.

The states (autoresearch/states.py, and any other StrEnum of the package) are StrEnums, so
that they go into JSON, SQL and messages as their strings. For the same reason mypy's strict
equality accepts `run.status == "runing"`: a str subclass overlaps every str. This hook on
`==` and `!=` reports a comparison of such an enum (or one of its members, or an Optional of
either) with a string literal that is none of its values, in either order
(`"runing" == run.status`); the code compares with members (`run.status == RunStatus.RUNNING`).
A state's string taken out first (`run.status.value == "runing"`, `str(run.status) == ...`) is
the same state, in either order too. A string before a `.value` (`"runing" == run.status.value`)
mypy checks reversed first, as the method of the `.value`'s type, the union of the values'
literal types; a union has no class to name the method by, so mypy asks for the hook of
`__eq__ of str` (its callable's name), and the plugin answers that one too: without it the
reversed try passed unchecked and mypy never tried the forward one.

A membership test in a tuple, list, set or frozenset written out in place (`run.status in
("stoped", "running")`, `in frozenset({...})`), or in a module's `Final` constant bound to
one, is checked the same way, item by item; so is each string pattern of a `match`
(`case "runing":`). Assigning, passing or returning a string where a state is
expected, and a misspelt member, mypy reports without help.

mypy checks `x in container` by trying `container.__contains__(x)` with its errors held back,
and when that fails, iterating the container (`__iter__`), whose errors it does report. So the
`__contains__` hook, on a misspelt item, fails (which sends mypy down the iteration path) and
leaves the message for the `__iter__` hook of the same comparison to report.

A `case "text":` pattern calls no method mypy has a hook for (mypy narrows the subject instead),
so when a module is parsed the plugin turns each string pattern into the string's own
`"text".__str__()`, whose hook returns the same literal type (the narrowing is mypy's as
before) and compares it with the type being matched there (the subject, or the part of it a
nested pattern matches). mypy's native parser, which reads a module's body later, is not
supported: its string patterns go unchecked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import (
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    ComparisonExpr,
    Decorator,
    Expression,
    ForStmt,
    FuncDef,
    IfStmt,
    ListExpr,
    MatchStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    SetExpr,
    Statement,
    StrExpr,
    TryStmt,
    TupleExpr,
    TypeInfo,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.options import Options
from mypy.patterns import (
    AsPattern,
    ClassPattern,
    MappingPattern,
    OrPattern,
    Pattern,
    SequencePattern,
    ValuePattern,
)
from mypy.plugin import MethodContext, Plugin
from mypy.types import (
    Instance,
    LiteralType,
    NoneType,
    TupleType,
    Type,
    UnionType,
    get_proper_type,
)

PACKAGE = "autoresearch."
_COMPARISONS = ("__eq__", "__ne__")
# the same methods called on a union, which has no class to name them by: mypy names them by
# their callable (a StrEnum's `.value` is the union of its values' literal types)
_UNION_COMPARISONS = tuple(f"{method} of str" for method in _COMPARISONS)
_CONTAINERS = ("builtins.tuple", "builtins.list", "builtins.set", "builtins.frozenset")
# an enum member's string, taken out of it
_VALUE_ATTRIBUTES = ("value", "_value_")
STATE_VALUE = ErrorCode("state-value", "A state compared with a string it never equals", "General")


def _state(t: Type) -> tuple[TypeInfo, ...]:
    """The state enums `t` is (or one of whose members it is, or an Optional of either): one,
    or each of a union of states (a report's row holds a run's decision or a session's
    verdict). A union with anything else (a str, an enum of no package) is none: a string may
    equal that."""
    p = get_proper_type(t)
    if isinstance(p, UnionType):
        items = [i for i in p.items if not isinstance(get_proper_type(i), NoneType)]
        found = [_state(item) for item in items]
        if not found or not all(found):
            return ()
        return tuple(dict.fromkeys(info for states in found for info in states))
    if isinstance(p, LiteralType):
        p = p.fallback
    if isinstance(p, Instance) and p.type.is_enum and p.type.module_name.startswith(PACKAGE):
        return (p.type,)
    return ()


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


def _misspelt(states: tuple[TypeInfo, ...], text: str | None) -> str | None:
    """The error for comparing a value of `states` with `text`, if `text` is none of their
    values."""
    if not states or text is None:
        return None
    named = []
    for state in states:
        values = _values(state)
        if values is None or text in values:
            return None
        named.append(f"{state.name} ({', '.join(sorted(values))})")
    return f'"{text}" is not a ' + " or a ".join(named)


def _unwrapped(expr: Expression | None) -> Expression | None:
    """The state inside `expr` when `expr` takes its string out (`x.value`, `str(x)`)."""
    if isinstance(expr, MemberExpr) and expr.name in _VALUE_ATTRIBUTES:
        return expr.expr
    if (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, NameExpr)
        and expr.callee.fullname == "builtins.str"
        and len(expr.args) == 1
        and not expr.arg_names[0]
    ):
        return expr.args[0]
    return None


def _state_of(ctx: MethodContext, t: Type, expr: Expression | None) -> tuple[TypeInfo, ...]:
    """The state an operand of type `t` (the expression `expr`) is, or whose string it is."""
    state = _state(t)
    inner = _unwrapped(expr)
    if not state and inner is not None:
        state = _state(ctx.api.get_expression_type(inner))
    return state


def _taken_out(ctx: MethodContext, comparison: ComparisonExpr) -> list[str]:
    """The errors of `==`/`!=` pairs of `comparison` that take a state's string out
    (`run.status.value == "runing"`). Read off the comparison itself, not the hook's operand
    types: mypy tries the reversed operator with a stand-in for the left operand, and that try
    passing would drop the error of the forward one."""
    messages = []
    pairs = zip(comparison.operands, comparison.operators, comparison.operands[1:], strict=False)
    for a, operator, b in pairs:
        if operator not in ("==", "!="):
            continue
        for taken, other in ((a, b), (b, a)):
            inner = _unwrapped(taken)
            if inner is not None and isinstance(other, StrExpr):
                state = _state(ctx.api.get_expression_type(inner))
                messages.append(_misspelt(state, other.value))
    return [m for m in messages if m is not None]


def _whole(ctx: MethodContext, states: tuple[TypeInfo, ...]) -> tuple[TypeInfo, ...]:
    """`states` widened to the union of states an operand of the comparison is: mypy checks a
    union's `==` one item at a time, and a string may equal a value of another item."""
    if not isinstance(ctx.context, ComparisonExpr) or not states:
        return states
    for operand in ctx.context.operands:
        whole = _state(ctx.api.get_expression_type(operand))
        if set(states) < set(whole):
            return whole
    return states


def _check(ctx: MethodContext) -> Type:
    messages = []
    if ctx.arg_types and ctx.arg_types[0]:
        other = ctx.arg_types[0][0]
        for state, text in ((_state(ctx.type), _text(other)), (_state(other), _text(ctx.type))):
            if _misspelt(state, text) is not None:
                messages += [_misspelt(_whole(ctx, state), text)]
    if isinstance(ctx.context, ComparisonExpr):
        messages += _taken_out(ctx, ctx.context)
    for message in dict.fromkeys(messages):
        if message is not None:
            ctx.api.fail(message, ctx.context, code=STATE_VALUE)
    return ctx.default_return_type


def _literal_items(container: Expression) -> list[str] | None:
    """The string items of a tuple, list, set or frozenset written out in place (None: it is
    not one)."""
    if isinstance(container, TupleExpr | ListExpr | SetExpr):
        return [item.value for item in container.items if isinstance(item, StrExpr)]
    if (
        isinstance(container, CallExpr)
        and isinstance(container.callee, NameExpr)
        and container.callee.name in ("tuple", "list", "set", "frozenset")
        and len(container.args) == 1
    ):
        return _literal_items(container.args[0])
    return None


def _right_of(comparison: ComparisonExpr, left: Expression) -> Expression | None:
    """The operand after `left` in a (possibly chained) comparison."""
    for a, b in zip(comparison.operands, comparison.operands[1:], strict=False):
        if a is left:
            return b
    return None


def _patterns(pattern: Pattern) -> list[ValuePattern]:
    """The value patterns in `pattern`, nested ones included."""
    if isinstance(pattern, ValuePattern):
        return [pattern]
    inner: Sequence[Pattern | None] = []
    if isinstance(pattern, AsPattern):
        inner = [pattern.pattern]
    elif isinstance(pattern, OrPattern | SequencePattern):
        inner = pattern.patterns
    elif isinstance(pattern, MappingPattern):
        inner = pattern.values
    elif isinstance(pattern, ClassPattern):
        inner = [*pattern.positionals, *pattern.keyword_values]
    return [v for p in inner if p is not None for v in _patterns(p)]


def _blocks(statement: Statement) -> list[Block]:
    """The blocks of statements directly inside `statement`."""
    found: list[Block | None] = []
    if isinstance(statement, FuncDef):
        found = [statement.body]
    elif isinstance(statement, Decorator):
        found = [statement.func.body]
    elif isinstance(statement, OverloadedFuncDef):
        for item in [*statement.items, statement.impl]:
            func = item.func if isinstance(item, Decorator) else item
            found += [func.body] if func is not None else []
    elif isinstance(statement, ClassDef):
        found = [statement.defs]
    elif isinstance(statement, IfStmt):
        found = [*statement.body, statement.else_body]
    elif isinstance(statement, WhileStmt | ForStmt):
        found = [statement.body, statement.else_body]
    elif isinstance(statement, WithStmt):
        found = [statement.body]
    elif isinstance(statement, TryStmt):
        found = [statement.body, *statement.handlers, statement.else_body, statement.finally_body]
    elif isinstance(statement, MatchStmt):
        found = list(statement.bodies)
    return [b for b in found if b is not None]


class StatesPlugin(Plugin):
    def __init__(self, options: Options) -> None:
        super().__init__(options)
        # membership tests found misspelt by `__contains__`, reported by `__iter__` (see above)
        self._pending: dict[int, list[str]] = {}
        # the `"text".__str__()` calls that stand for string patterns (see above), by id
        self._cases: dict[int, CallExpr] = {}
        # the string items of a module's names bound to a literal container, by full name
        self._constants: dict[str, list[str]] = {}

    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        """Called once a module is parsed, before it is analysed: the place to rewrite its
        string patterns and note its Final containers."""
        if not file.is_stub:
            self._read(file.defs, file.fullname)
        return []

    def _read(self, statements: list[Statement], module: str) -> None:
        for statement in statements:
            if isinstance(statement, MatchStmt):
                for pattern in statement.patterns:
                    for value in _patterns(pattern):
                        self._rewrite(value)
            for block in _blocks(statement):
                self._read(block.body, "")
            if module and isinstance(statement, AssignmentStmt):
                self._note_constant(statement, module)

    def _rewrite(self, value: ValuePattern) -> None:
        if not isinstance(value.expr, StrExpr):
            return
        callee = MemberExpr(value.expr, "__str__")
        callee.set_line(value.expr)
        call = CallExpr(callee, [], [], [])
        call.set_line(value.expr)
        value.expr = call
        self._cases[id(call)] = call

    def _note_constant(self, statement: AssignmentStmt, module: str) -> None:
        """`NAME = <a literal container>` at a module's top level (whether NAME is Final is
        known only after analysis: `_items` asks then)."""
        items = _literal_items(statement.rvalue)
        if items is not None and len(statement.lvalues) == 1:
            target = statement.lvalues[0]
            if isinstance(target, NameExpr):
                self._constants[f"{module}.{target.name}"] = items

    def _items(self, container: Expression | None, container_type: Type) -> list[str]:
        """The string literals a membership test's container holds: written out in place, or
        the items of a module's Final constant (a tuple's type keeps them too)."""
        if container is None:
            return []
        items = _literal_items(container)
        if items is not None:
            return items
        node = container.node if isinstance(container, RefExpr) else None
        if isinstance(node, Var) and node.is_final and node.fullname in self._constants:
            return self._constants[node.fullname]
        p = get_proper_type(container_type)
        if isinstance(p, TupleType):
            return [t for t in map(_text, p.items) if t is not None]
        return []

    def _contains(self, ctx: MethodContext) -> Type:
        comparison = ctx.context
        if isinstance(comparison, ComparisonExpr) and ctx.args and ctx.args[0]:
            element = ctx.args[0][0]
            state = _state_of(ctx, ctx.arg_types[0][0], element)
            container = _right_of(comparison, element)
            messages = [
                m
                for m in (_misspelt(state, t) for t in self._items(container, ctx.type))
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

    def _case(self, ctx: MethodContext) -> Type:
        """A string pattern's stand-in: its literal, compared with what is matched there."""
        if self._cases.get(id(ctx.context)) is not ctx.context:
            return ctx.default_return_type
        api = ctx.api
        if isinstance(api, TypeChecker) and api.pattern_checker.type_context:
            matched = api.pattern_checker.type_context[-1]
            message = _misspelt(_state(matched), _text(ctx.type))
            if message is not None:
                api.fail(message, ctx.context, code=STATE_VALUE)
        return ctx.type

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        owner, _, method = fullname.rpartition(".")
        if method in _COMPARISONS and (owner.startswith(PACKAGE) or owner == "builtins.str"):
            return _check
        if fullname in _UNION_COMPARISONS:
            return _check
        if owner in _CONTAINERS and method == "__contains__":
            return self._contains
        if owner in _CONTAINERS and method == "__iter__":
            return self._iterate
        if fullname == "builtins.str.__str__":
            return self._case
        return None


def plugin(version: str) -> type[Plugin]:
    return StatesPlugin
