"""The emulator's "model": a small deterministic reasoning policy, provider-neutral.

:func:`plan` turns a :class:`~thinkagent.emulator.model.Conversation` and its
:class:`~thinkagent.emulator.model.Settings` into a :class:`~thinkagent.emulator.model.Reply`.
The same input always gives the same output.

Policy
------
* The *question* is the text of the last user turn that has text. Tool calls made after
  it (and their results) form the current tool loop. A question that names nothing and
  matches no tool ("Please go ahead.") defers to the system instructions: their subjects and
  words plan the tools.
* Tools the question *matches* are those whose name or description shares a significant
  word with it (``get_weather`` / "Current weather for a city." matches "What's the
  weather in Paris?"). If none matches, the first offered tool is the plan.
* Only a tool whose required arguments can all be filled *sensibly* is called (unless the
  request forces a tool): a value the conversation gives, never one made up. See
  "Arguments" below. A matching tool that cannot be filled is not called: the answer says
  which argument it needs ("To use refund I need the order_id."); with no matching tool, the
  first offered tool that can be filled is the plan.
* Each step calls the next planned tool not yet called in the current loop, in offered
  order, one tool per step. When the question names several subjects (capitalised
  names such as "Paris and London") and the tool takes one string argument for them,
  the step makes one call per subject, in parallel (unless parallel calls are disabled).
* Once every planned tool has been called, the reply answers, quoting the results.
  With no tools, or ``tool_choice`` ``none``, it answers directly. A forced choice
  (``any``/``tool``) always calls a tool.
* Arguments are valid for the tool's JSON schema: required properties are filled by type,
  nested objects, arrays and ``$ref``/``anyOf``/``oneOf``/``allOf`` included. Sensible
  values, from the conversation or the schema:

  - a string named like free text (``query``, ``question``, ``text``...): the question;
  - a string named like a word of an entity in the question: the entity after that word
    ("order A-1042" for ``order_id``, "file notes.txt" for ``delete_file``'s ``path``:
    the word is one of the argument's or the tool's name, the entity holds a digit, a dot
    or a slash, or is quoted);
  - any other string: a subject of the question (a capitalised name such as "Paris", not a
    sentence's opening verb such as "Clean"), or the schema's first ``examples`` value;
  - a date, e-mail address or URL (``format``) written in the question;
  - a number written in the question (within the schema's bounds), or the first example;
  - ``const``, ``default``, an ``enum`` value mentioned in the question or else the first
    one, ``true`` for a boolean, ``null``.

  Where none applies the value is made up (the question, ``1``, a placeholder date...):
  only a forced tool choice, a final-answer tool or a response schema gets such a value.
* Thinking (when enabled, and when interleaved or at the start of the assistant turn)
  quotes the question and says which tools it uses and why, or
  which results it got. Higher ``effort`` adds a checking sentence; ``low`` keeps it short.
* The magic Anthropic prompt, anywhere in the user's text of the conversation, makes the
  reply's thinking redacted (the follow-up turns' too, as the service does).
* Usage counts about four characters per token; ``max_tokens`` truncates the answer
  (stop reason ``max_tokens``).
* Images and documents in the conversation are "seen": the answer (and the thinking) names
  each one's kind, media type and size in bytes, so a test can tell it arrived intact.
* Built-in tools the request declares (:mod:`~thinkagent.emulator.server_tools`): the ones
  the question calls for run first, in the same reply, before any function tool; the answer
  quotes what they returned. A remote MCP call awaiting approval ends the reply.
* Structured answers: with a ``response_schema`` the answer is JSON valid for it. When the
  system instructions name an offered tool as the way to give the final answer (the tool's
  name and the word "final" in one sentence), that tool is kept out of the plan and called,
  with arguments valid for its schema, where the answer would be; called again when its
  result came back as an error (a failed validation). Values are filled from the question
  and the tool results (numbers included).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from .encoding import as_list, as_mapping, mapping_or_none
from .model import (
    Call,
    CallResult,
    Conversation,
    Reply,
    ReplyUsage,
    ServerToolSpec,
    ServerUse,
    Settings,
    ToolCallSpec,
    ToolSpec,
    Turn,
)
from .server_tools import plan_uses

__all__ = [
    "MAGIC_REDACTED_PROMPT",
    "ConversationBuilder",
    "TurnTokens",
    "count_tokens",
    "plan",
    "prefix_tokens",
    "reply_usage",
    "subjects",
]

#: Anthropic's documented test prompt that makes Claude return redacted thinking.
MAGIC_REDACTED_PROMPT = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
    "46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)

_STOP_SUBJECTS = frozenset(
    [
        "a",
        "an",
        "and",
        "also",
        "are",
        "at",
        "be",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "get",
        "give",
        "hello",
        "hey",
        "hi",
        "how",
        "i",
        "i'd",
        "i'll",
        "i'm",
        "in",
        "is",
        "it",
        "it's",
        "let",
        "me",
        "my",
        "no",
        "not",
        "now",
        "of",
        "ok",
        "okay",
        "on",
        "or",
        "please",
        "search",
        "show",
        "so",
        "tell",
        "thank",
        "thanks",
        "that",
        "the",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "too",
        "us",
        "was",
        "we",
        "what",
        "what's",
        "whats",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "yes",
        "you",
        "your",
    ]
)
#: Verbs a request opens with ("Clean up the old files."): a capitalised verb is not a name.
_OPENING_VERBS = frozenset(
    [
        "add",
        "book",
        "buy",
        "calculate",
        "cancel",
        "change",
        "check",
        "clean",
        "clear",
        "close",
        "compare",
        "compute",
        "convert",
        "copy",
        "create",
        "delete",
        "describe",
        "do",
        "draft",
        "explain",
        "fetch",
        "find",
        "fix",
        "get",
        "give",
        "help",
        "list",
        "load",
        "look",
        "make",
        "move",
        "open",
        "order",
        "pay",
        "plan",
        "print",
        "put",
        "read",
        "refund",
        "remove",
        "rename",
        "repeat",
        "reset",
        "run",
        "save",
        "schedule",
        "search",
        "send",
        "set",
        "show",
        "sort",
        "start",
        "stop",
        "summarise",
        "summarize",
        "tell",
        "translate",
        "try",
        "turn",
        "update",
        "upload",
        "use",
        "write",
    ]
)
_GENERIC = frozenset(
    [
        "about",
        "all",
        "and",
        "any",
        "are",
        "can",
        "does",
        "each",
        "for",
        "from",
        "get",
        "given",
        "has",
        "have",
        "info",
        "information",
        "into",
        "its",
        "list",
        "look",
        "lookup",
        "make",
        "new",
        "one",
        "please",
        "return",
        "returns",
        "set",
        "some",
        "that",
        "the",
        "their",
        "them",
        "this",
        "tool",
        "tools",
        "use",
        "using",
        "value",
        "what",
        "when",
        "which",
        "with",
        "you",
        "your",
        "current",
        "function",
        "data",
        "result",
        "results",
        "call",
        "fetch",
    ]
)
_FREE_TEXT = frozenset(
    [
        "query",
        "q",
        "question",
        "prompt",
        "text",
        "input",
        "message",
        "search",
        "term",
        "terms",
        "keywords",
        "topic",
        "request",
    ]
)
_SUBJECT_RE = re.compile(r"[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)*")
_WORD_RE = re.compile(r"[a-z0-9]+")
_CAMEL_RE = re.compile(r"([a-z0-9])([A-Z])")
#: A number written as one: not the digits of a date, an id or a word ("2026-05-01", "A-1042").
_NUMBER_RE = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w-]|\.\d)")


def count_tokens(text: str) -> int:
    """About four characters per token (at least one for any non-empty text)."""
    return _length_tokens(len(text))


def _length_tokens(chars: int) -> int:
    """The tokens of a text of ``chars`` characters."""
    return math.ceil(chars / 4)


def subjects(text: str, vocabulary: frozenset[str] = frozenset()) -> list[str]:
    """Capitalised names in ``text`` ("Paris", "New York", "ACME"), in order, without
    duplicates, without function words ("What", "Now") and without words of the tools'
    own vocabulary (``vocabulary``: stems of the tool names and descriptions, so that
    "Weather in Paris?" yields only "Paris")."""
    found: list[str] = []
    for match in _SUBJECT_RE.findall(text):
        words = [w.rstrip("?!.,") for w in match.split()]
        while words and (
            words[0].lower() in _STOP_SUBJECTS
            or words[0].lower() in _OPENING_VERBS
            or _stem(words[0].lower()) in vocabulary
        ):
            words.pop(0)
        while words and words[-1].lower() in _STOP_SUBJECTS:
            words.pop()
        if not words:
            continue
        name = " ".join(words)
        for suffix in ("'s", "\u2019s"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        if name and name not in found and "_" not in name:
            found.append(name)
    return found


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _words(text: str) -> set[str]:
    spaced = _CAMEL_RE.sub(r"\1 \2", text).replace("_", " ").lower()
    return {_stem(w) for w in _WORD_RE.findall(spaced) if len(w) >= 3 and w not in _GENERIC}


def _matches(tool: ToolSpec, question_words: set[str]) -> bool:
    return bool((_words(tool.name) | _words(tool.description)) & question_words)


# --- arguments from a JSON schema --------------------------------------------------


#: Bounds on argument generation, so that no schema (self-referencing, huge ``minItems``,
#: wide ``allOf`` of ``$ref``s) can stall or crash the server: nesting depth of generated
#: values, items per array, and schema nodes visited per tool call.
MAX_DEPTH = 8
MAX_ITEMS = 100
_BUDGET = 10_000


class _ArgContext:
    def __init__(
        self, question: str, subject: str | None, all_subjects: list[str], root: Mapping[str, Any]
    ):
        self.question = question
        self.subject = subject
        self.all_subjects = all_subjects
        self.root = root
        numbers = _NUMBER_RE.findall(question)
        self.number: float | None = float(numbers[0]) if numbers else None
        self.budget = _BUDGET
        self.tool_name = ""
        self.made_up: list[str] = []  # the arguments given a value the conversation does not hold

    def make_up(self, name: str) -> None:
        if name not in self.made_up:
            self.made_up.append(name)

    def spend(self) -> bool:
        """Count one schema node; ``False`` once the budget is spent."""
        self.budget -= 1
        return self.budget >= 0


def _resolve(schema: Mapping[str, Any], ctx: _ArgContext, depth: int = 0) -> Mapping[str, Any]:
    if depth >= 16 or not ctx.spend():
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Mapping[str, Any] | None = ctx.root
        for part in ref[2:].split("/"):
            node = mapping_or_none(node.get(part)) if node is not None else None
        return _resolve(node, ctx, depth + 1) if node is not None else {}
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            opts = [
                cast("Mapping[str, Any]", o)
                for o in cast("list[Any]", options)
                if isinstance(o, Mapping)
            ]
            non_null = [o for o in opts if o.get("type") != "null"] or opts
            if non_null:
                return _resolve(non_null[0], ctx, depth + 1)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        merged: dict[str, Any] = {}
        props: dict[str, Any] = {}
        required: list[Any] = []
        for part in cast("list[Any]", all_of):
            if isinstance(part, Mapping):
                resolved = _resolve(cast("Mapping[str, Any]", part), ctx, depth + 1)
                merged.update(resolved)
                props.update(cast("Mapping[str, Any]", resolved.get("properties") or {}))
                required.extend(cast("list[Any]", resolved.get("required") or []))
        merged["properties"] = props
        merged["required"] = required
        return merged
    return schema


def _schema_type(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in cast("list[Any]", kind) if k != "null"]
        kind = kinds[0] if kinds else None
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    if "enum" in schema:
        return "enum"
    return None


_FORMATS = {
    # format: (how it is written in a question, the placeholder when it is not)
    "date": (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "2025-01-01"),
    "date-time": (
        re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:\d{2})?"),
        "2025-01-01T00:00:00Z",
    ),
    "email": (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "user@example.com"),
    "uri": (re.compile(r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]"), "https://example.com"),
    "url": (re.compile(r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]"), "https://example.com"),
    "uuid": (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "00000000-0000-4000-8000-000000000000",
    ),
}
_ENTITY = r"(?:\"([^\"]+)\"|'([^']+)'|([\w@:#+-]*[\d./][\w@:#./+-]*\w|[\w@:#+-]*\d))"
_NAME_WORD_RE = re.compile(r"[a-z]+")


def _named_entity(name: str, ctx: _ArgContext) -> str | None:
    """The entity the question writes after a word of the argument's (or the tool's) name:
    "order A-1042" for ``order_id``, "file notes.txt" for ``delete_file``'s ``path``."""
    spaced = _CAMEL_RE.sub(r"\1 \2", f"{name} {ctx.tool_name}").replace("_", " ").lower()
    for word in _NAME_WORD_RE.findall(spaced):
        if len(word) < 3 or word in _GENERIC or word in _STOP_SUBJECTS:
            continue
        found = re.search(
            rf"\b{re.escape(word)}(?:e?s)?\b(?:\s+(?:number|id|named|called)\b|\s+no\.)?[\s:#]*{_ENTITY}",
            ctx.question,
            re.IGNORECASE,
        )
        if found is not None:
            return next(g for g in found.groups() if g is not None)
    return None


def _example(schema: Mapping[str, Any]) -> Any:
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return cast("list[Any]", examples)[0]
    return schema.get("example")


def _string_value(name: str, schema: Mapping[str, Any], ctx: _ArgContext) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        written, placeholder = _FORMATS[fmt]
        found = written.search(ctx.question)
        if found is not None:
            return found.group(0)
        ctx.make_up(name)
        return placeholder
    entity = None if name.lower() in _FREE_TEXT else _named_entity(name, ctx)
    example = _example(schema)
    if name.lower() in _FREE_TEXT:
        value = ctx.question
    elif entity is not None:
        value = entity
    elif ctx.subject is not None:
        value = ctx.subject
    elif isinstance(example, str):
        value = example
    else:
        ctx.make_up(name)
        value = ctx.question or "example"
    min_len = schema.get("minLength")
    max_len = schema.get("maxLength")
    if isinstance(max_len, int) and len(value) > max_len:
        value = value[:max_len]
    if isinstance(min_len, int) and len(value) < min_len:
        value = value.ljust(min_len, "x")
    return value


def _number_value(
    name: str, schema: Mapping[str, Any], ctx: _ArgContext, integer: bool
) -> float | int:
    example = _example(schema)
    if ctx.number is not None:
        value = ctx.number
    elif isinstance(example, (int, float)) and not isinstance(example, bool):
        value = float(example)
    else:
        ctx.make_up(name)
        value = 1.0
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if isinstance(low, (int, float)) and value < low:
        value = float(low) + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
    if isinstance(high, (int, float)) and value > high:
        value = float(high) - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
    if integer:
        return int(value)
    return int(value) if float(value).is_integer() else value


def _value(name: str, raw: Mapping[str, Any], ctx: _ArgContext, depth: int = 0) -> Any:
    if depth > MAX_DEPTH or not ctx.spend():
        return None
    schema = _resolve(raw, ctx)
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        options = cast("list[Any]", enum)
        lowered = ctx.question.lower()
        for option in options:
            if isinstance(option, str) and option.lower() in lowered:
                return option
        return options[0]
    kind = _schema_type(schema)
    if kind == "string":
        return _string_value(name, schema, ctx)
    if kind == "integer":
        return _number_value(name, schema, ctx, integer=True)
    if kind == "number":
        return _number_value(name, schema, ctx, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if kind == "array":
        item_schema = as_mapping(schema.get("items"))
        if depth >= MAX_DEPTH:
            return []
        min_items = schema.get("minItems")
        count = min(max(1, min_items if isinstance(min_items, int) else 1), MAX_ITEMS)
        item_kind = _schema_type(_resolve(item_schema, ctx))
        if item_kind == "string" and len(ctx.all_subjects) > 1 and "enum" not in item_schema:
            return list(ctx.all_subjects)
        return [_value(name, item_schema, ctx, depth + 1) for _ in range(count)]
    if kind == "object" and depth < MAX_DEPTH:
        return _object_value(schema, ctx, depth + 1)
    return _string_value(name, schema, ctx) if kind is None and depth == 0 else {}


def _object_value(schema: Mapping[str, Any], ctx: _ArgContext, depth: int = 0) -> dict[str, Any]:
    props = as_mapping(schema.get("properties"))
    out: dict[str, Any] = {}
    for key in as_list(schema.get("required")):
        if isinstance(key, str):
            out[key] = _value(key, as_mapping(props.get(key)), ctx, depth)
    return out


def _subject_slots(tool: ToolSpec) -> list[str]:
    """Required string properties that take a free-form name (no enum/format)."""
    props = as_mapping(tool.schema.get("properties"))
    slots: list[str] = []
    for key in as_list(tool.schema.get("required")):
        if not isinstance(key, str):
            continue
        prop = as_mapping(props.get(key))
        if (
            prop.get("type") == "string"
            and "enum" not in prop
            and "format" not in prop
            and key.lower() not in _FREE_TEXT
        ):
            slots.append(key)
    return slots


def _context(tool: ToolSpec, question: str, subject: str | None, names: list[str]) -> _ArgContext:
    ctx = _ArgContext(question, subject, names, tool.schema)
    ctx.tool_name = tool.name
    return ctx


def _arguments(
    tool: ToolSpec, question: str, names: list[str], parallel: bool
) -> list[dict[str, Any]]:
    """One argument set per call this step makes with ``tool``."""
    slots = _subject_slots(tool)
    if len(slots) == 1 and len(names) > 1 and parallel:
        return [
            _object_value(tool.schema, _context(tool, question, name, [name])) for name in names
        ]
    ctx = _context(tool, question, names[0] if names else None, names)
    args = _object_value(tool.schema, ctx)
    if len(slots) > 1:
        for slot, name in zip(slots, names, strict=False):
            args[slot] = name
    return [args]


def _made_up(tool: ToolSpec, question: str, names: list[str]) -> list[str]:
    """The required arguments of ``tool`` the conversation gives no sensible value for."""
    ctx = _context(tool, question, names[0] if names else None, names)
    _object_value(tool.schema, ctx)
    slots = _subject_slots(tool)
    named: set[str] = set(slots[: len(names)]) if len(slots) > 1 else set()  # get the subjects
    return [name for name in ctx.made_up if name not in named]


# --- the plan ----------------------------------------------------------------------


def _question(conversation: Conversation) -> tuple[int, str]:
    for index in range(len(conversation.turns) - 1, -1, -1):
        turn = conversation.turns[index]
        if turn.role == "user" and turn.text.strip():
            return index, turn.text.strip()
    return -1, ""


def _quote(text: str, limit: int | None = None) -> str:
    flat = " ".join(text.split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 3].rstrip() + "..."
    return f'"{flat}"'


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _format_args(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _describe_call(call: Call | ToolCallSpec) -> str:
    values = [str(v) for v in call.arguments.values() if isinstance(v, (str, int, float))]
    return f"{call.name} ({', '.join(values)})" if values else call.name


def reply_usage(
    conversation: Conversation, reply: Reply, hidden_thinking: str | None = None
) -> ReplyUsage:
    """Token usage of ``reply`` for ``conversation``: input from every text, tool and
    schema in the request; output from the reply's text, calls and thinking (or
    ``hidden_thinking`` when the visible thinking was redacted or omitted)."""
    input_tokens = sum(prefix_tokens(conversation))
    thinking = hidden_thinking if hidden_thinking is not None else (reply.thinking or "")
    thinking_tokens = count_tokens(thinking)
    output = thinking_tokens + count_tokens(reply.text)
    output += sum(12 + count_tokens(c.name + _format_args(c.arguments)) for c in reply.tool_calls)
    return ReplyUsage(
        input_tokens=input_tokens, output_tokens=max(output, 1), thinking_tokens=thinking_tokens
    )


def prefix_tokens(conversation: Conversation) -> list[int]:
    """The input tokens of each piece of ``conversation`` as a service reads it, as
    :func:`reply_usage` counts them (they add up to its ``input_tokens``): first the system
    text and the tools, which every request of a conversation starts with, then each turn.
    Prompt caching (:mod:`~thinkagent.emulator.caching`) counts cached prefixes with them."""
    counts = [8 + count_tokens(conversation.system) + _tools_tokens(conversation.tools)]
    counts.extend(_turn_tokens(turn) for turn in conversation.turns)
    return counts


def _tools_tokens(tools: Iterable[ToolSpec]) -> int:
    return sum(
        count_tokens(t.name + t.description + json.dumps(t.schema, sort_keys=True)) for t in tools
    )


def _turn_tokens(turn: Turn) -> int:
    text = count_tokens(turn.text) + count_tokens(turn.thinking)
    return 4 + text + _parts_tokens(turn.calls, turn.results)


def _parts_tokens(calls: Iterable[Call], results: Iterable[CallResult]) -> int:
    """The tokens of a turn's calls and results (each counted on its own)."""
    called = sum(count_tokens(_format_args(c.arguments) + c.name) for c in calls)
    return called + sum(count_tokens(r.content) for r in results)


class TurnTokens:
    """The input tokens of a turn read one part at a time, as :func:`prefix_tokens` counts the
    turn the parts make: its text parts joined by new lines (an empty part too), its thinking
    parts likewise, each call and each result on its own. A wire that needs the tokens of
    every prefix of a message's blocks reads the blocks once with it."""

    def __init__(self) -> None:
        self._text = -1  # len("\n".join(the text parts)), -1 before the first part
        self._thinking = -1
        self._parts = 0

    @property
    def tokens(self) -> int:
        text = _length_tokens(max(self._text, 0)) + _length_tokens(max(self._thinking, 0))
        return 4 + text + self._parts

    def text(self, text: str) -> None:
        self._text += len(text) + 1

    def thinking(self, text: str) -> None:
        self._thinking += len(text) + 1

    def call(self, call: Call) -> None:
        self._parts += _parts_tokens((call,), ())

    def result(self, result: CallResult) -> None:
        self._parts += _parts_tokens((), (result,))


class ConversationBuilder:
    """A :class:`Conversation` read from a request one item at a time, its input tokens kept
    as it grows: :attr:`tokens` is ``sum(prefix_tokens(self.conversation()))`` after every
    step, at the cost of counting each new piece once. A wire's prompt cache needs the tokens
    of every prefix of a request; rebuilding and recounting each prefix instead costs time
    quadratic in the length of the request."""

    def __init__(
        self, tools: tuple[ToolSpec, ...] = (), server_tools: tuple[ServerToolSpec, ...] = ()
    ) -> None:
        self._tools = tools
        self._server_tools = server_tools
        self._system: list[str] = []
        self._system_chars = 0  # len("\n".join(self._system))
        self._turns: list[Turn] = []
        self._head = 8 + _tools_tokens(tools)  # the system text aside
        self._turns_tokens = 0

    @property
    def tokens(self) -> int:
        return self._head + _length_tokens(self._system_chars) + self._turns_tokens

    @property
    def last(self) -> Turn | None:
        """The latest turn (None before the first)."""
        return self._turns[-1] if self._turns else None

    def add_system(self, text: str) -> None:
        """Add ``text`` to the system text, on a line of its own (empty text adds nothing)."""
        if text:
            self._system_chars += len(text) + (1 if self._system else 0)
            self._system.append(text)

    def append(self, turn: Turn) -> None:
        self._turns.append(turn)
        self._turns_tokens += _turn_tokens(turn)

    def merge(
        self,
        *,
        text: str = "",
        calls: tuple[Call, ...] = (),
        results: tuple[CallResult, ...] = (),
        uses: tuple[ServerUse, ...] = (),
    ) -> None:
        """Add to the latest turn: ``text`` after its text (on a new line, when both have
        some), and the calls, results and built-in tool uses after its own."""
        last = self._turns[-1]
        joined = "\n".join(t for t in (last.text, text) if t)
        merged = replace(
            last,
            text=joined,
            calls=last.calls + calls,
            results=last.results + results,
            server_uses=last.server_uses + uses,
        )
        self._turns[-1] = merged
        self._turns_tokens += count_tokens(joined) - count_tokens(last.text)
        self._turns_tokens += _parts_tokens(calls, results)

    def restart(self, turns: Iterable[Turn]) -> None:
        """Replace every turn so far with ``turns`` (what a compaction stands for)."""
        self._turns = []
        self._turns_tokens = 0
        for turn in turns:
            self.append(turn)

    def conversation(self) -> Conversation:
        return Conversation(
            system="\n".join(self._system),
            turns=tuple(self._turns),
            tools=self._tools,
            server_tools=self._server_tools,
        )


_SENTENCE_RE = re.compile(r"[^.!?\n]+")


def _final_tool(conversation: Conversation) -> ToolSpec | None:
    """The offered tool the instructions name as the way to give the final answer."""
    for sentence in _SENTENCE_RE.findall(conversation.system):
        if "final" not in sentence.lower():
            continue
        for tool in conversation.tools:
            if re.search(rf"(?<![\w-]){re.escape(tool.name)}(?![\w-])", sentence):
                return tool
    return None


def _seen(conversation: Conversation) -> str:
    """What the conversation's images and documents are, in words (empty when none)."""
    media = [m for t in conversation.turns for m in t.media]
    media += [m for t in conversation.turns for r in t.results for m in r.media]
    if not media:
        return ""
    return (
        f"I see {len(media)} attachment{'s' if len(media) > 1 else ''}: "
        + _join([m.describe() for m in media])
        + "."
    )


def plan(conversation: Conversation, settings: Settings) -> Reply:
    """The deterministic reply to ``conversation`` under ``settings`` (see the module
    docstring for the policy)."""
    final_tool = _final_tool(conversation)
    if final_tool is not None:
        conversation = Conversation(
            conversation.system,
            conversation.turns,
            tuple(t for t in conversation.tools if t is not final_tool),
        )
    q_index, question = _question(conversation)
    loop_turns: Sequence[Turn] = (
        conversation.turns[q_index + 1 :] if q_index >= 0 else conversation.turns
    )
    calls: list[Call] = [c for t in loop_turns if t.role == "assistant" for c in t.calls]
    results: dict[str, CallResult] = {
        r.call_id: r for t in loop_turns if t.role == "user" for r in t.results
    }
    called = {c.name for c in calls}
    tools = conversation.tools
    vocabulary = frozenset(
        w for t in conversation.tools for w in _words(t.name) | _words(t.description)
    )
    names = subjects(question, vocabulary)
    qwords = _words(question)
    system_words = _words(conversation.system)
    if (
        not names
        and not any(_matches(t, qwords) for t in tools)
        and any(_matches(t, system_words) for t in tools)
    ):
        # A turn that only says to go on ("Please go ahead."): the instructions say what to do,
        # when they speak of a tool; their other names ("JSON", a product) fill no argument.
        names = subjects(conversation.system, vocabulary)
        qwords |= system_words
    # Anywhere in the user's text: the follow-up turns stay redacted (as recorded).
    redacted = any(MAGIC_REDACTED_PROMPT in t.text for t in conversation.turns if t.role == "user")

    step_tool: ToolSpec | None = None
    remaining: list[ToolSpec] = []
    unfilled: list[tuple[ToolSpec, list[str]]] = []  # matching tools it cannot call sensibly
    if tools and settings.tool_choice != "none":
        matching = [t for t in tools if _matches(t, qwords)]
        planned = matching or [tools[0]]
        if settings.tool_choice == "auto":
            missing = {t.name: _made_up(t, question, names) for t in tools}
            unfilled = [(t, missing[t.name]) for t in matching if missing[t.name]]
            fillable = [t for t in tools if not missing[t.name]]
            planned = [t for t in matching if not missing[t.name]]
            if not matching:
                planned = fillable[:1]
        remaining = [t for t in planned if t.name not in called]
        if settings.tool_choice == "tool":
            step_tool = next((t for t in tools if t.name == settings.tool_name), None)
        elif remaining:
            step_tool = remaining[0]
        elif settings.tool_choice == "any":
            step_tool = planned[0]

    thoughts: list[str] = []
    if question:
        thoughts.append(f"The user asks: {_quote(question)}.")
    else:
        thoughts.append(
            "There is no new question from the user; I will continue from the conversation."
        )
    if conversation.system.strip():
        thoughts.append(f"I must follow the instructions: {_quote(conversation.system, 120)}.")
    uses = plan_uses(conversation, question, loop_turns, names)
    if uses and uses[-1].approval == "pending":
        waiting = uses[-1]
        thoughts.append(
            f"I will call {waiting.name} on the {waiting.server} server; the call needs the "
            "user's approval first."
        )
        thinking = " ".join(thoughts) if settings.thinking else None
        reply = Reply(
            thinking=thinking, server_uses=tuple(uses), redacted=redacted and bool(thinking)
        )
        return replace(reply, usage=reply_usage(conversation, reply))
    earlier = [u for t in loop_turns if t.role == "assistant" for u in t.server_uses]
    found = _server_facts([*earlier, *uses], loop_turns)
    if uses:
        thoughts.append(f"I used {_join([_describe_use(u) for u in uses])}.")

    tool_calls: list[ToolCallSpec] = []
    final_failed = False
    if step_tool is not None:
        for args in _arguments(step_tool, question, names, settings.parallel_tool_calls):
            tool_calls.append(ToolCallSpec(name=step_tool.name, arguments=args))
        described = " and ".join(_format_args(c.arguments) for c in tool_calls)
        if results:
            got = "; ".join(
                f"{_describe_call(c)} returned {_quote(results[c.id].content, 200)}"
                for c in calls
                if c.id in results
            )
            if got:
                thoughts.append(f"So far: {got}.")
        if len(tool_calls) > 1:
            thoughts.append(
                f"The question covers {len(tool_calls)} subjects, so I will call {step_tool.name} "
                f"{len(tool_calls)} times in parallel: {described}."
            )
        else:
            thoughts.append(f"I will call {step_tool.name} with {described}.")
        later = [t.name for t in remaining if t.name != step_tool.name]
        if later and settings.effort != "low":
            thoughts.append(f"After that I still need {', '.join(later)}.")
        if len(tool_calls) > 1:
            text = f"I'll use {step_tool.name} for {_join(names[: len(tool_calls)])}."
        else:
            text = f"I'll use {step_tool.name} to look that up."
    else:
        answered = [(c, results[c.id]) for c in calls if c.id in results]
        final_failed = final_tool is not None and any(
            r.is_error for c, r in answered if c.name == final_tool.name
        )
        answered = [(c, r) for c, r in answered if final_tool is None or c.name != final_tool.name]
        if answered:
            thoughts.append(
                "The tools returned: "
                + "; ".join(f"{_describe_call(c)}: {_quote(r.content, 200)}" for c, r in answered)
                + "."
            )
            thoughts.append("I have everything I need to answer.")
            lines = [f"- {_describe_call(c)}: {r.content.strip()}" for c, r in answered]
            text = "Here is what I found:\n" + "\n".join(lines)
        elif MAGIC_REDACTED_PROMPT in question:
            thoughts.append("This message is a test trigger; I will reply briefly.")
            text = "I received the redacted-thinking test prompt. How can I help you?"
        elif unfilled and not calls:
            needed = [f"the {_join(args)} for {tool.name}" for tool, args in unfilled]
            thoughts.append(
                f"I could use {_join([t.name for t, _ in unfilled])}, but the question does not "
                f"give {_join(needed)}, and I will not make it up."
            )
            text = f"To answer that I need {_join(needed)}. Could you tell me?"
        else:
            thoughts.append("No tool is needed; I can answer directly.")
            text = (
                f"You asked: {_quote(question)}. Here is my answer, from the thinkagent emulator."
                if question
                else "Done."
            )
    if found and step_tool is None and not tool_calls:
        text = f"{text}\n" + "\n".join(found)
    seen = _seen(conversation)
    if seen and step_tool is None:
        thoughts.append(seen)
        text = f"{seen} {text}"
    if step_tool is None and (final_tool is not None or settings.response_schema is not None):
        facts = " ".join([question, *(r.content for r in results.values())])
        ctx_names = names or subjects(facts, vocabulary)
        if final_tool is not None:
            ctx = _ArgContext(
                facts, ctx_names[0] if ctx_names else None, ctx_names, final_tool.schema
            )
            arguments = _object_value(final_tool.schema, ctx)
            if final_failed:
                thoughts.append(f"My last {final_tool.name} call was refused; I will fix it.")
            thoughts.append(f"I will give the final answer with {final_tool.name}.")
            tool_calls.append(ToolCallSpec(name=final_tool.name, arguments=arguments))
            text = ""
        else:
            schema = settings.response_schema or {}
            ctx = _ArgContext(facts, ctx_names[0] if ctx_names else None, ctx_names, schema)
            thoughts.append("I will answer with JSON that matches the response schema.")
            text = json.dumps(_object_value(schema, ctx))
    if settings.effort in ("high", "xhigh", "max"):
        thoughts.append(
            "Let me double-check that the reply quotes the question and the results exactly."
        )

    continuing = any(t.role == "assistant" for t in loop_turns)
    thinks = settings.thinking and (settings.interleaved or not continuing)
    thinking = " ".join(thoughts) if thinks else None
    reply = Reply(
        text=text,
        thinking=thinking,
        tool_calls=tuple(tool_calls),
        redacted=redacted and thinking is not None,
        server_uses=tuple(uses),
    )
    usage = reply_usage(conversation, reply)
    if settings.max_tokens is not None and usage.output_tokens > settings.max_tokens:
        room = max(settings.max_tokens - usage.thinking_tokens, 0) * 4
        reply = Reply(
            text=text[:room],
            thinking=thinking,
            redacted=reply.redacted,
            stop_reason="max_tokens",
            server_uses=tuple(uses),
        )
        usage = ReplyUsage(
            usage.input_tokens, settings.max_tokens, min(usage.thinking_tokens, settings.max_tokens)
        )
    return replace(reply, usage=usage)


def _describe_use(use: ServerUse) -> str:
    if use.kind == "mcp":
        return f"{use.name} on the {use.server} server"
    query = use.arguments.get("query") or use.arguments.get("url")
    return f"{use.name} ({query})" if isinstance(query, str) else use.name


def _server_facts(uses: Sequence[ServerUse], loop: Sequence[Turn]) -> list[str]:
    """What the built-in tools of the loop found, as lines of the answer: each page (with its
    URL) and each output; a call the user denied, said so."""
    denied = {call_id for t in loop if t.role == "user" for call_id, ok in t.approvals if not ok}
    lines: list[str] = []
    for use in uses:
        if use.approval == "pending":
            if use.id in denied:
                lines.append(f"- {use.name} was not run: the user did not approve it.")
            continue
        lines.extend(
            f"- {hit.title} ({hit.url})" if hit.title else f"- {hit.url}" for hit in use.hits
        )
        if use.output and use.kind != "image_generation":
            lines.append(f"- {use.name}: {use.output.strip()}")
    return lines
