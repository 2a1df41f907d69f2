"""A bounded YAML reader for sandbox.md frontmatter: PyYAML's safe loader with limits.

* no aliases (`*name`): an alias bomb or a circular alias is refused before it expands;
* mappings and sequences nested at most MAX_DEPTH deep;
* no duplicate keys (`command:` twice is an error, not "last wins");
* YAML 1.2-style numbers: decimal integers and floats only (`1e-9` is a number; `10:00`,
  `0x10`, `0o17` and `1_000` are strings, never 600, 16, 15 or 1000), integers of at most
  MAX_INT_DIGITS digits;
* error positions count the lines of the file itself (`line_offset` lines precede the YAML).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node

MAX_DEPTH = 32
MAX_INT_DIGITS = 1000  # far above any real setting, below int()'s own 4,300-digit limit
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(
    r"^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?$"
    r"|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
)


class _Loader(yaml.SafeLoader):
    _depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise ComposerError(None, None, "aliases (*name) are not allowed", mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str | int | float | bool) or key is None:
                if key in seen:
                    mark = key_node.start_mark
                    raise ConstructorError(None, None, f"duplicate key {key!r}", mark)
                seen.add(key)
        return super().construct_mapping(node, deep)


def _construct_int(loader: _Loader, node: Node) -> int:
    value = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    digits = value.lstrip("+-")
    if len(digits) > MAX_INT_DIGITS or not digits.isdigit():
        raise ConstructorError(
            None, None, f"integers have at most {MAX_INT_DIGITS} decimal digits", node.start_mark
        )
    return int(value, 10)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _FLOAT_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_INT_TAG, _INT, list("-+0123456789"))
_Loader.add_implicit_resolver(_FLOAT_TAG, _FLOAT, list("-+0123456789."))
_Loader.add_constructor(_INT_TAG, _construct_int)


def load(text: str, line_offset: int = 0) -> Any:
    """Parse `text`; yaml.YAMLError (with file line numbers) when it breaks a rule above."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        for mark in (exc.problem_mark, exc.context_mark):
            if mark is not None:
                mark.line += line_offset
                mark.name = "sandbox.md"
        raise
