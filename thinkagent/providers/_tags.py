"""Inline reasoning tags (`<think>...</think>`) split out of content, incrementally (used by
OpenAI-compatible Chat endpoints and by Kimi on Bedrock).

Some endpoints put the reasoning in the content itself. `ThinkTagSplitter` separates it as the
content streams in, whatever the chunk boundaries (a tag may be split across chunks), and
`split_think_tags` does the same for a whole content string, so a streamed response and a
non-streamed one yield the same parts.

Whitespace: reasoning is trimmed; text right after a closing tag loses its leading whitespace
and text right before an opening tag its trailing whitespace (`"<think>a</think>\\n\\nB"` is
reasoning `"a"` and text `"B"`); any other text is kept exactly.
"""

from __future__ import annotations

__all__ = ["DEFAULT_TAGS", "Segment", "ThinkTagSplitter", "join_think_tags", "split_think_tags"]

DEFAULT_TAGS: tuple[str, str] = ("<think>", "</think>")

Segment = tuple[int, bool, str]
"""`(segment number, is reasoning, text)`: pieces of one segment share its number."""


class ThinkTagSplitter:
    """Feed content chunks; get back reasoning and text pieces as soon as they are certain.

    A piece is held back only while it may still be part of a tag, or while it is trailing
    whitespace that a following tag would remove. Each side of a tag is a new segment;
    segments that end up empty produce nothing.
    """

    __slots__ = ("_after_close", "_buf", "_close", "_open", "_segment", "_started", "_thinking")

    def __init__(self, tags: tuple[str, str] = DEFAULT_TAGS) -> None:
        self._open, self._close = tags
        if not self._open or not self._close:
            raise ValueError("both reasoning tags must be non-empty")
        self._buf = ""
        self._thinking = False
        self._segment = 0
        self._started = False
        self._after_close = False

    def feed(self, chunk: str) -> list[Segment]:
        """The pieces `chunk` completes (possibly none)."""
        if not chunk:
            return []
        out: list[Segment] = []
        buf = self._buf + chunk
        while True:
            tag = self._close if self._thinking else self._open
            pos = buf.find(tag)
            if pos < 0:
                break
            self._emit(buf[:pos].rstrip(), out)
            buf = buf[pos + len(tag) :]
            self._cross()
        keep = _partial_tag(buf, tag)
        body = buf[: len(buf) - keep]
        text = body.rstrip()
        self._emit(text, out)
        self._buf = buf[len(text) :]
        return out

    def end(self) -> list[Segment]:
        """The pieces still held back when the content is complete; the splitter starts over."""
        out: list[Segment] = []
        rest = self._buf
        self._emit(rest.rstrip() if self._thinking else rest, out)
        self._buf = ""
        self._thinking = False
        self._segment += 1
        self._started = False
        self._after_close = False
        return out

    def _emit(self, text: str, out: list[Segment]) -> None:
        if not text:
            return
        if not self._started:
            if self._thinking or self._after_close:
                text = text.lstrip()
                if not text:
                    return
            self._started = True
        out.append((self._segment, self._thinking, text))

    def _cross(self) -> None:
        self._thinking = not self._thinking
        self._segment += 1
        self._started = False
        self._after_close = not self._thinking


def _partial_tag(buf: str, tag: str) -> int:
    """The length of the longest proper prefix of `tag` that `buf` ends with."""
    for k in range(min(len(tag) - 1, len(buf)), 0, -1):
        if buf.endswith(tag[:k]):
            return k
    return 0


def split_think_tags(content: str, tags: tuple[str, str] = DEFAULT_TAGS) -> list[tuple[bool, str]]:
    """The `(is reasoning, text)` segments of a whole content string, in order."""
    splitter = ThinkTagSplitter(tags)
    segments: dict[int, tuple[bool, list[str]]] = {}
    for number, thinking, text in [*splitter.feed(content), *splitter.end()]:
        segments.setdefault(number, (thinking, []))[1].append(text)
    return [(thinking, "".join(pieces)) for thinking, pieces in segments.values()]


def join_think_tags(segments: list[tuple[bool, str]], tags: tuple[str, str] = DEFAULT_TAGS) -> str:
    """Content with its reasoning put back inline: the inverse of `split_think_tags`, up to
    the whitespace around the tags."""
    out: list[str] = []
    for thinking, text in segments:
        if thinking:
            out.append(f"{tags[0]}\n{text}\n{tags[1]}\n\n")
        else:
            out.append(text)
    return "".join(out)
