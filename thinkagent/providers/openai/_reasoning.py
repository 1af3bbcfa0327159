"""The shapes reasoning takes on Chat Completions, read and written back.

- Fields: `reasoning_content` or `reasoning`, text on the message (and on each delta).
- OpenRouter's `reasoning_details`: typed items, one thinking block each, byte-exact: the proof
  (`signature` of `reasoning.text`, `data` of `reasoning.encrypted`) in the block, every other
  key (`type`, `id`, `format`, `index`...) in its `provider_details`, so the array goes back as
  it came. Streamed items arrive in fragments keyed by their `index` and `type`.
- Content chunks (Mistral): `content` is a list of `thinking` chunks (each holding `text`
  chunks) and `text` chunks, in the order the model produced them.
- Inline `<think>` tags (in `_tags`).

Anything else found where reasoning or content should be (an unknown item or chunk type) is
kept as it came in the message's `provider_details` (`unknown_reasoning_details`,
`unknown_content`), put back in place on replay, and reported with a `WarningEvent`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic import JsonValue

from ...messages import Part, ProviderDetails, TextPart, ThinkingBlock
from ...stream import WarningEvent

__all__ = [
    "DETAILS_KEY",
    "ENCRYPTED",
    "UNKNOWN_CONTENT",
    "UNKNOWN_DETAILS",
    "content_chunk",
    "content_parts",
    "detail_blocks",
    "detail_fields",
    "detail_items",
    "plain",
    "thinking_chunk",
    "thinking_text",
    "unknown_warning",
]

DETAILS_KEY = "reasoning_details"
UNKNOWN_DETAILS = "unknown_reasoning_details"
UNKNOWN_CONTENT = "unknown_content"

# reasoning_details item type -> the key holding its text or payload
DETAIL_TEXT = {"reasoning.text": "text", "reasoning.summary": "summary"}
ENCRYPTED = "reasoning.encrypted"
_CONTENT_KEYS = frozenset({"text", "summary", "data", "signature"})


def plain(value: object) -> dict[str, JsonValue] | None:
    """A JSON object as a plain dict (SDK objects and mappings alike), else None."""
    if isinstance(value, Mapping):
        return dict(cast("Mapping[str, JsonValue]", value))
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        result = to_dict(mode="json")
        return cast("dict[str, JsonValue]", result) if isinstance(result, dict) else None
    return None


def detail_fields(item: Mapping[str, JsonValue]) -> ProviderDetails:
    """An item's keys besides its text, payload and signature (`type`, `id`, `format`...)."""
    return {k: v for k, v in item.items() if k not in _CONTENT_KEYS}


def detail_block(item: Mapping[str, JsonValue]) -> ThinkingBlock | None:
    """The thinking block for one `reasoning_details` item, or None for a type (or a shape)
    this version does not know."""
    kind = item.get("type")
    details = detail_fields(item)
    if kind == ENCRYPTED:
        data = item.get("data")
        return (
            ThinkingBlock(redacted=data, provider_details=details)
            if isinstance(data, str)
            else None
        )
    key = DETAIL_TEXT.get(kind) if isinstance(kind, str) else None
    if key is None:
        return None
    text = item.get(key)
    signature = item.get("signature") if kind == "reasoning.text" else None
    if not isinstance(text, str) or not isinstance(signature, str | None):
        return None
    if not text and signature is None:
        return None
    return ThinkingBlock(text=text, signature=signature, provider_details=details)


def detail_blocks(raw: object) -> tuple[list[ThinkingBlock], list[JsonValue]]:
    """The blocks of a `reasoning_details` array, in order, and the items this version does
    not know, each as `{"position": i, "item": ...}` so replay can put it back."""
    blocks: list[ThinkingBlock] = []
    unknown: list[JsonValue] = []
    if not isinstance(raw, list):
        return blocks, ([{"position": 0, "item": cast("JsonValue", raw)}] if raw else [])
    for position, value in enumerate(cast("list[object]", raw)):
        item = plain(value)
        block = detail_block(item) if item is not None else None
        if block is None:
            unknown.append({"position": position, "item": cast("JsonValue", item or value)})
        else:
            blocks.append(block)
    return blocks, unknown


def detail_item(block: ThinkingBlock) -> dict[str, JsonValue] | None:
    """The `reasoning_details` item a block came from (None: the block did not come from one)."""
    details = block.provider_details or {}
    kind = details.get("type")
    if kind == ENCRYPTED:
        return {**details, "data": block.redacted} if block.redacted is not None else None
    key = DETAIL_TEXT.get(kind) if isinstance(kind, str) else None
    if key is None:
        return None
    item: dict[str, JsonValue] = {**details, key: block.text}
    if block.signature is not None:
        item["signature"] = block.signature
    return item


def detail_items(
    blocks: Sequence[ThinkingBlock], unknown: object
) -> tuple[list[JsonValue], list[str]]:
    """The `reasoning_details` array for a message's blocks (the unknown items back in their
    places), and the texts of blocks that came from no item (sent as `reasoning`)."""
    items: list[JsonValue] = []
    texts: list[str] = []
    for block in blocks:
        item = detail_item(block)
        if item is not None:
            items.append(item)
        elif block.text and block.redacted is None:
            texts.append(block.text)
    for entry in cast("list[object]", unknown) if isinstance(unknown, list) else []:
        if isinstance(entry, dict):
            entry = cast("dict[str, JsonValue]", entry)
            position = entry.get("position")
            at = position if isinstance(position, int) else len(items)
            items.insert(min(at, len(items)), entry.get("item"))
    return items, texts


def content_parts(content: object) -> tuple[list[Part], list[JsonValue]]:
    """The parts of a message content given as a list of chunks (Mistral's `thinking` and
    `text` chunks, OpenAI-style `text` parts), in order (consecutive chunks of one kind make
    one part, as a stream of them does), and the chunks this version does not know, each as
    `{"position": i, "chunk": ...}`."""
    parts: list[TextPart | ThinkingBlock] = []
    unknown: list[JsonValue] = []
    for position, value in enumerate(cast("list[object]", content)):
        chunk = content_chunk(value)
        part = _chunk_part(chunk) if chunk is not None else None
        if part is None:
            unknown.append({"position": position, "chunk": cast("JsonValue", chunk or value)})
        elif parts and type(parts[-1]) is type(part):
            last = parts[-1]
            parts[-1] = last.model_copy(update={"text": last.text + part.text})
        else:
            parts.append(part)
    # a thinking block is built unchecked above (its text may still grow): check it now
    return [_checked(p) for p in parts if p.text], unknown


def _checked(part: TextPart | ThinkingBlock) -> Part:
    if isinstance(part, ThinkingBlock):
        return ThinkingBlock.model_validate(part.model_dump())
    return part


def content_chunk(value: object) -> dict[str, JsonValue] | None:
    """A content chunk as a dict (a bare string is a text chunk)."""
    return {"type": "text", "text": value} if isinstance(value, str) else plain(value)


def _chunk_part(chunk: Mapping[str, JsonValue]) -> TextPart | ThinkingBlock | None:
    """The part for a known chunk (its text may be empty), None for an unknown one."""
    kind = chunk.get("type")
    if kind == "text" and isinstance(chunk.get("text"), str):
        return TextPart(text=cast("str", chunk["text"]))
    if kind == "thinking":
        text = thinking_text(chunk.get("thinking"))
        if text is None:
            return None
        extra: ProviderDetails = {k: v for k, v in chunk.items() if k not in ("type", "thinking")}
        return ThinkingBlock.model_construct(text=text, provider_details=extra or None)
    return None


def thinking_text(value: JsonValue) -> str | None:
    """The text of a thinking chunk's `thinking` list (or string); None when it is neither."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    texts: list[str] = []
    for piece in value:
        if isinstance(piece, dict) and isinstance(piece.get("text"), str):
            texts.append(cast("str", piece["text"]))
        elif isinstance(piece, str):
            texts.append(piece)
        else:
            return None
    return "".join(texts)


def thinking_chunk(block: ThinkingBlock) -> dict[str, Any]:
    """A thinking block as Mistral's `thinking` content chunk."""
    chunk: dict[str, Any] = {"type": "thinking", "thinking": [{"type": "text", "text": block.text}]}
    for key, value in (block.provider_details or {}).items():
        chunk.setdefault(key, value)
    return chunk


def unknown_warning(what: str, count: int, scope: str) -> WarningEvent:
    """The warning for parts of a response this version does not know (kept, not parsed)."""
    return WarningEvent(
        "unknown_response_part",
        f"the response had {count} {what} this version does not know; kept as they came in "
        "the message's provider_details and sent back in place",
        scope,
    )
