"""Tools, questions and comparison helpers shared by the OpenAI tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

from tests.support import without_ids as without_ids
from thinkagent import Message, ThinkingBlock

QUESTION = "What's the weather and the time in Paris?"
"""Two matching tools: a 3-turn loop (get_weather, then get_time, then the answer)."""


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str, format: str = "24h") -> str:
    """Local time in a city."""
    return "14:05"


TOOLS = [get_weather, get_time]


def thinking(messages: Iterable[Message]) -> list[ThinkingBlock]:
    return [block for m in messages for block in m.thinking]


def bodies(emu: Any, api: str | None = None) -> list[dict[str, Any]]:
    """The JSON bodies the emulator received (of one API), in order."""
    return [r.body for r in emu.requests if api is None or r.api == api]


def contains(body: object, needle: str) -> bool:
    return needle in json.dumps(body)


class FakeStream:
    """Stands in for `openai.AsyncStream`: an async context manager iterating given events,
    optionally raising after them."""

    def __init__(self, events: Sequence[Any], error: BaseException | None = None) -> None:
        self._events = list(events)
        self._error = error

    async def __aenter__(self) -> FakeStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def __aiter__(self) -> AsyncIterator[Any]:
        for event in self._events:
            yield event
        if self._error is not None:
            raise self._error


class FakeClient:
    """A client whose `chat.completions.create` and `responses.create` return what is queued:
    a `FakeStream` for `stream=True`, else the object itself; records the keyword arguments."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []
        self.api_key = "sk-fake-key-0123456789"
        self.base_url = "https://api.example.com/v1"
        self.chat = _Namespace(completions=_Namespace(create=self._create))
        self.responses = _Namespace(create=self._create)

    async def _create(self, **params: Any) -> Any:
        self.calls.append(params)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


class _Namespace:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)


def response_events(response: dict[str, Any], *, chunk: int = 7) -> list[dict[str, Any]]:
    """The Responses stream events (as JSON) that deliver `response`, in the service's order:
    items added, their deltas (summary parts, argument and text fragments), items done with
    their complete content, then `response.completed`."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, **fields, "sequence_number": len(events)})

    def pieces(text: str) -> list[str]:
        return [text[i : i + chunk] for i in range(0, len(text), chunk)]

    emit(
        "response.created",
        response={**response, "status": "in_progress", "output": [], "usage": None},
    )
    for index, item in enumerate(response["output"]):
        if item["type"] == "reasoning":
            emit(
                "response.output_item.added",
                output_index=index,
                item={"id": item["id"], "type": "reasoning", "summary": []},
            )
            for s, part in enumerate(item["summary"]):
                emit(
                    "response.reasoning_summary_part.added",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=s,
                    part={"type": "summary_text", "text": ""},
                )
                for piece in pieces(part["text"]):
                    emit(
                        "response.reasoning_summary_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        summary_index=s,
                        delta=piece,
                    )
                emit(
                    "response.reasoning_summary_part.done",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=s,
                    part=part,
                )
            for c, part in enumerate(item.get("content") or []):
                emit(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=index,
                    content_index=c,
                    part={**part, "text": ""},
                )
                for piece in pieces(part["text"]):
                    emit(
                        "response.reasoning_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=c,
                        delta=piece,
                    )
        elif item["type"] == "function_call":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            for piece in pieces(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=piece,
                )
        elif item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "content": [], "status": "in_progress"},
            )
            for c, part in enumerate(item["content"]):
                refusal = part["type"] == "refusal"
                emit(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=index,
                    content_index=c,
                    part={**part, "refusal": ""} if refusal else {**part, "text": ""},
                )
                for piece in pieces(part["refusal"] if refusal else part["text"]):
                    emit(
                        "response.refusal.delta" if refusal else "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=c,
                        delta=piece,
                        **({} if refusal else {"logprobs": []}),
                    )
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=response)
    return events


def stream_events(events: list[dict[str, Any]]) -> list[Any]:
    """JSON events as the SDK's typed `ResponseStreamEvent`s."""
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    return [construct_type(type_=ResponseStreamEvent, value=event) for event in events]
