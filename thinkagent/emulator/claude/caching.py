"""Claude's prompt caching, as the Claude API and Bedrock report it
(platform.claude.com/docs/en/build-with-claude/prompt-caching,
docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html).

A request marks where cacheable prefixes end: ``cache_control: {"type": "ephemeral", "ttl":
"5m" | "1h"}`` on a tool, a system block or a message block (Bedrock's ``cachePoint`` blocks
arrive here as the same marker on the block before them), or once at the top level, which puts
it on the last block that can carry one. The service reads the request in the order ``tools``,
``system``, ``messages``, block by block; a prefix is cached only where a marker ends it, and
only from the model's minimum length on (shorter: nothing cached, no error). A later request
reads the longest cached prefix ending at one of its own markers or at most 20 blocks before
one. Entries live 5 minutes (or the marker's ``1h``) after their last use.

Refusals, with the service's words: a marker on a ``thinking`` or ``redacted_thinking`` block
(``messages.N.content.M.thinking.cache_control: Extra inputs are not permitted``), more than
four markers (``A maximum of 4 blocks with cache_control may be provided. Found 5.``), and a
``1h`` marker after a ``5m`` one in reading order.

Thinking is cached as part of what precedes a marker. What the model does not read is not in
the prefix: on models that drop earlier turns' thinking, the prefix of a request after a new
user turn is read without it (the cache written during the tool loop no longer matches past
that point). A change of the thinking configuration or of the effort leaves ``tools`` and
``system`` cached but not the messages.

Usage: ``cache_read_input_tokens``, ``cache_creation_input_tokens`` (with ``cache_creation``
split by lifetime) and ``input_tokens`` for the rest on the Claude API; ``cacheReadInputTokens``,
``cacheWriteInputTokens`` and ``cacheDetails`` on Bedrock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..brain import count_tokens, prefix_tokens
from ..caching import CacheRules, CacheUse, PrefixCache, Segment, segment
from ..encoding import mapping_or_none
from ..framework import WireError
from ..model import Conversation, ToolSpec
from .profiles import ClaudeProfile

__all__ = ["LOOKBACK", "MAX_BREAKPOINTS", "CachePlan", "check_markers", "plan_cache"]

MAX_BREAKPOINTS = 4
"""How many ``cache_control`` markers one request may carry."""

LOOKBACK = 20
"""How many blocks before a marker the service looks for a cached prefix."""

_TTLS: Mapping[str, float] = {"5m": 300.0, "1h": 3600.0}
_THINKING = ("thinking", "redacted_thinking")
_ORDER = "Note that blocks are processed in the following order: `tools`, `system`, `messages`."


def _invalid(message: str) -> WireError:
    return WireError(400, message, type="invalid_request_error")


@dataclass(frozen=True)
class _Marker:
    """A ``cache_control`` marker: where it sits (its path in the request) and its ttl."""

    path: str
    ttl: str


def _marker(raw: Any, path: str) -> _Marker | None:
    """The marker at ``path`` (None when there is none), refused as the service refuses a
    malformed one."""
    if raw is None:
        return None
    where = f"{path}.cache_control" if path else "cache_control"
    control = mapping_or_none(raw)
    if control is None:
        raise _invalid(
            f"{where}: Input should be a valid dictionary or object to extract fields from"
        )
    if control.get("type") != "ephemeral":
        raise _invalid(
            f"{where}: Input tag '{control.get('type')}' found using 'type' does not match any "
            "of the expected tags: 'ephemeral'"
        )
    ttl = control.get("ttl", "5m")
    if ttl not in _TTLS:
        raise _invalid(f"{where}.ephemeral.ttl: Input should be '5m' or '1h'")
    return _Marker(path, cast("str", ttl))


def check_markers(
    tools: Sequence[Mapping[str, Any]],
    system: Sequence[Mapping[str, Any]],
    messages: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
    top_level: Any,
) -> None:
    """Refuse the markers the service refuses: on a thinking block, malformed, more than four,
    or a ``1h`` one after a ``5m`` one in reading order (``tools``, ``system``, ``messages``;
    the top-level marker last)."""
    found: list[_Marker] = []
    for index, tool in enumerate(tools):
        if (marker := _marker(tool.get("cache_control"), f"tools.{index}")) is not None:
            found.append(marker)
    for index, block in enumerate(system):
        if (marker := _marker(block.get("cache_control"), f"system.{index}")) is not None:
            found.append(marker)
    for i, (_, blocks) in enumerate(messages):
        for j, block in enumerate(blocks):
            if "cache_control" not in block:
                continue
            kind = block["type"]
            if kind in _THINKING:
                raise _invalid(
                    f"messages.{i}.content.{j}.{kind}.cache_control: Extra inputs are not permitted"
                )
            if (marker := _marker(block["cache_control"], f"messages.{i}.content.{j}")) is not None:
                found.append(marker)
    if (marker := _marker(top_level, "")) is not None:
        found.append(marker)
    if len(found) > MAX_BREAKPOINTS:
        raise _invalid(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(found)}."
        )
    short = False
    for marker in found:
        if marker.ttl == "1h" and short:
            where = f"{marker.path}.cache_control" if marker.path else "cache_control"
            raise _invalid(
                f"{where}.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' "
                f"cache_control block. {_ORDER}"
            )
        short = short or marker.ttl == "5m"


@dataclass(frozen=True)
class CachePlan:
    """A request as prompt caching reads it: its blocks as segments (tokens each), the
    markers' segment indexes and lifetimes, and whose cache it uses."""

    namespace: tuple[str, str]
    minimum: int
    segments: tuple[Segment, ...]
    breakpoints: Mapping[int, float]

    def use(self, cache: PrefixCache) -> CacheUse:
        rules = CacheRules(minimum_tokens=self.minimum, ttl=_TTLS["5m"])
        return cache.use(
            self.namespace, self.segments, rules, breakpoints=self.breakpoints, lookback=LOOKBACK
        )


def plan_cache(
    *,
    model: ClaudeProfile,
    account: str,
    tools: Sequence[Mapping[str, Any]],
    system: Sequence[Mapping[str, Any]],
    messages: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
    top_level: Any,
    conversation: Conversation,
    read_tokens: Callable[[str, Sequence[Mapping[str, Any]]], Sequence[int]],
    config: Mapping[str, Any],
) -> CachePlan:
    """The :class:`CachePlan` of a checked request: ``messages`` as the model reads them (the
    thinking it drops left out), ``read_tokens`` the tokens of the turn each prefix of a
    message's blocks makes (its first ``k + 1`` blocks), ``config`` what invalidates the
    cached messages when it changes (the thinking configuration and the effort).

    Each block gets the tokens the brain counts for it: a tool its own text, a system block or
    a message's block what it adds to the text before it, so that a prefix's tokens depend on
    the prefix alone, and all of them add up to the request's input tokens."""
    counts = prefix_tokens(conversation)
    contents: list[Any] = []
    tokens: list[int] = []
    markers: list[Any] = []
    # A tool the model does not see (deferred until a system message adds it) costs nothing.
    specs = {spec.name: spec for spec in conversation.tools}
    for tool in tools:
        contents.append(["tool", _unmarked(tool)])
        custom = tool.get("type", "custom") in ("custom", None)
        spec = specs.get(str(tool.get("name"))) if custom else None
        tokens.append(_tool_tokens(spec) if spec is not None else 0)
        markers.append(tool.get("cache_control"))
    texts: list[str] = []
    for block in system:
        before = count_tokens("\n".join(texts))
        texts.append(str(block.get("text", "")))
        contents.append(["system", _unmarked(block)])
        tokens.append(count_tokens("\n".join(texts)) - before)
        markers.append(block.get("cache_control"))
    head = len(tokens)
    turns = iter(counts[1:])
    first = True
    for role, blocks, read in _read_messages(messages):
        total = next(turns, 0) if read else 0
        totals = read_tokens(role, blocks) if read and len(blocks) > 1 else ()
        done = 0
        for k, block in enumerate(blocks):
            key: list[Any] = [role, k == 0]
            if first:
                key.append(dict(config))  # a new configuration: the messages are not cached
                first = False
            last = k == len(blocks) - 1
            upto = total if last or not read else totals[k]
            contents.append([*key, _unmarked(block)])
            tokens.append(upto - done)
            markers.append(block.get("cache_control"))
            done = upto
    if tokens:
        # the head's fixed cost (and the text of system messages) go with its last piece
        tokens[max(head - 1, 0)] += counts[0] - sum(tokens[:head])
    breakpoints = {i: _ttl(m) for i, m in enumerate(markers) if m is not None}
    if top_level is not None:
        end = _last_cacheable(messages, len(contents))
        if end is not None:
            breakpoints.setdefault(end, _ttl(top_level))
    return CachePlan(
        namespace=(account, model.key),
        minimum=model.cache_minimum,
        segments=tuple(segment(c, n) for c, n in zip(contents, tokens, strict=True)),
        breakpoints=breakpoints,
    )


def _tool_tokens(tool: ToolSpec) -> int:
    """A tool's tokens, as the brain counts them."""
    return count_tokens(tool.name + tool.description + json.dumps(tool.schema, sort_keys=True))


def _ttl(marker: Any) -> float:
    """The lifetime of a marker :func:`check_markers` accepted."""
    return _TTLS[cast("Mapping[str, Any]", marker).get("ttl", "5m")]


def _unmarked(block: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _read_messages(
    messages: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
) -> list[tuple[str, Sequence[Mapping[str, Any]], bool]]:
    """Each message's blocks and whether the model reads them as a turn of its own (as the
    brain's conversation has it): from the latest compaction block on (the block itself reads
    as the summary turn, what follows it in its message as one more), system messages never."""
    start = None
    for i, (_, blocks) in enumerate(messages):
        for j, block in enumerate(blocks):
            if block.get("type") == "compaction":
                start = (i, j)
    out: list[tuple[str, Sequence[Mapping[str, Any]], bool]] = []
    for i, (role, blocks) in enumerate(messages):
        if start is not None and i < start[0]:
            out.append((role, blocks, False))
        elif start is not None and i == start[0]:
            j = start[1]
            out.append((role, blocks[:j], False))
            out.append((role, blocks[j : j + 1], True))
            if blocks[j + 1 :]:
                out.append((role, blocks[j + 1 :], True))
        else:
            out.append((role, blocks, role != "system"))
    return out


def _last_cacheable(
    messages: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], size: int
) -> int | None:
    """The segment index of the last block a top-level marker can sit on (not thinking)."""
    index = size
    for _, blocks in reversed(messages):
        for block in reversed(blocks):
            index -= 1
            if block.get("type") not in _THINKING:
                return index
    return None
