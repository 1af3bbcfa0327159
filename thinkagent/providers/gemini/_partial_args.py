"""Function call arguments that Gemini streams in pieces (`partialArgs`, asked for with
`streamFunctionCallArguments` on Vertex AI), written as the JSON text of the arguments.

Each piece names a JSON path (RFC 9535: `$.recipe.ingredients[0].name`) and a value; a string
value may come in several pieces of one path (`willContinue`), ending with an empty one. The
pieces arrive in document order, so `PartialArguments` writes each as the next fragment of the
arguments' JSON text: the fragments a stream yields as `ToolCallDelta`s concatenate to the JSON
of exactly the object the non-streamed response carries. A path that would reopen a closed
object or array cannot be written in order: from then on the object is rebuilt from the paths
instead, and `close()` says so (the adapter then replaces the call's text with it).
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from google.genai import types

__all__ = ["PartialArguments", "parse_path"]

_STEP_RE = re.compile(
    r"""\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\]"""
)

Step = str | int


def parse_path(path: str) -> list[Step]:
    """The steps of a JSON path (`$.a[0]['b c']` -> `['a', 0, 'b c']`); `ValueError` for one
    that is not a plain path of names and indexes."""
    if not path.startswith("$"):
        raise ValueError(f"not a JSON path: {path!r}")
    steps: list[Step] = []
    position = 1
    while position < len(path):
        match = _STEP_RE.match(path, position)
        if match is None:
            raise ValueError(f"not a JSON path: {path!r}")
        name, index, quoted = match.groups()
        if name is not None:
            steps.append(name)
        elif index is not None:
            steps.append(int(index))
        else:
            steps.append(
                json.loads(quoted) if quoted[0] == '"' else quoted[1:-1].replace("\\'", "'")
            )
        position = match.end()
    return steps


@dataclass(slots=True)
class _Container:
    """An object or array whose text is open: the step that leads into it, and the steps of
    the children written so far."""

    step: Step | None
    array: bool
    children: list[Step] = field(default_factory=list[Step])


class PartialArguments:
    """The JSON text of one streamed call's arguments, written piece by piece."""

    def __init__(self) -> None:
        self._open: list[_Container] = []
        self._string: list[Step] | None = None  # the path of the string still open
        self._last: list[Step] | None = None  # the path of the last piece
        self._value: dict[str, Any] = {}  # the arguments, rebuilt from the paths
        self.broken = False

    def add(self, arg: types.PartialArg) -> str:
        """The next fragment of the JSON text for one piece ("" when it adds nothing)."""
        steps = parse_path(arg.json_path or "$")
        if not steps:
            return ""
        value, is_string = _value(arg)
        self._record(steps, value, is_string)
        if self.broken:
            return ""
        out: list[str] = []
        if not self._open:
            self._open.append(_Container(None, array=False))
            out.append("{")
        if self._string is not None:
            if steps == self._string and is_string:
                out.append(json.dumps(value)[1:-1])
                if not arg.will_continue:
                    out.append('"')
                    self._string = None
                return "".join(out)
            out.append('"')  # a string left open: close it
            self._string = None
        if not self._descend(steps, out):
            self.broken = True
            return "".join(out)
        if is_string:
            out.append('"' + json.dumps(value)[1:-1])
            if arg.will_continue:
                self._string = steps
            else:
                out.append('"')
        else:
            out.append(json.dumps(value))
        return "".join(out)

    def _descend(self, steps: list[Step], out: list[str]) -> bool:
        """Close what the path leaves, open what it enters and write the leaf's key; False
        when the path goes back into something already written."""
        path = [c.step for c in self._open[1:]]
        common = 0
        while common < len(path) and common < len(steps) - 1 and path[common] == steps[common]:
            common += 1
        while len(self._open) - 1 > common:
            out.append("]" if self._open.pop().array else "}")
        for depth in range(common, len(steps)):
            step = steps[depth]
            container = self._open[-1]
            if step in container.children or container.array != isinstance(step, int):
                return False
            if isinstance(step, int) and step != len(container.children):
                return False  # an array index out of order
            if container.children:
                out.append(",")
            container.children.append(step)
            if isinstance(step, str):
                out.append(json.dumps(step) + ":")
            if depth < len(steps) - 1:
                array = isinstance(steps[depth + 1], int)
                out.append("[" if array else "{")
                self._open.append(_Container(step, array))
        return True

    def _record(self, steps: list[Step], value: Any, is_string: bool) -> None:
        """Set the value at its path in the rebuilt object (a string continued if the piece
        before was of the same path)."""
        node: Any = self._value
        for step, following in itertools.pairwise(steps):
            node = _child(node, step, [] if isinstance(following, int) else {})
        last = steps[-1]
        current = _get(node, last)
        if is_string and isinstance(current, str) and self._last == steps:
            value = current + value
        _set(node, last, value)
        self._last = steps

    def close(self) -> tuple[str, dict[str, Any] | None]:
        """The fragment that closes the text, and, when the pieces could not be written in
        order, the whole arguments object (None when the text is whole)."""
        if self.broken:
            return "", self._value
        if not self._open:
            return "{}", None
        out: list[str] = []
        if self._string is not None:
            out.append('"')
            self._string = None
        while self._open:
            out.append("]" if self._open.pop().array else "}")
        return "".join(out), None


def _child(node: Any, step: Step, empty: Any) -> Any:
    current = _get(node, step)
    if current is None:
        _set(node, step, empty)
        return empty
    return current


def _get(node: Any, step: Step) -> Any:
    if isinstance(node, dict):
        return cast("dict[str, Any]", node).get(str(step))
    items = cast("list[Any]", node)
    return items[step] if isinstance(step, int) and step < len(items) else None


def _set(node: Any, step: Step, value: Any) -> None:
    if isinstance(node, dict):
        cast("dict[str, Any]", node)[str(step)] = value
        return
    items = cast("list[Any]", node)
    index = int(step)
    while len(items) <= index:
        items.append(None)
    items[index] = value


def _value(arg: types.PartialArg) -> tuple[Any, bool]:
    if arg.string_value is not None:
        return arg.string_value, True
    if arg.bool_value is not None:
        return arg.bool_value, False
    if arg.number_value is not None:
        number = arg.number_value
        return (int(number) if float(number).is_integer() else number), False
    return None, False
