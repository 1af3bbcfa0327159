"""An agent's run in the AG-UI protocol (docs.ag-ui.com, protocol 1.0), both ways: the events a
run streams, and the `RunAgentInput` a client sends, read back into a thinkagent history.

Like `thinkagent.sse`'s `UIChat`, the proofs stay on the server: `AGUIThread` keeps each thread's
thinkagent messages (signatures, redacted payloads, encrypted reasoning) by the AG-UI message
ids the client knows, and a request names them by id; the client sees reasoning text, never a
proof (no `REASONING_ENCRYPTED_VALUE` is ever sent). A run that stops for approval ends with an
interrupt outcome (`reason: "tool_approval"`, one per call), and the next run's `resume` entries
decide the calls.

```python
thread = AGUIThread.load(stored) if stored else AGUIThread()
turn = thread.turn(await request.json())              # prompt, history, approvals
stream = agent.run_stream(turn.prompt, history=turn.history, approvals=turn.approvals)
return turn.response(stream, on_end=lambda ended: save(turn.commit(ended)))
```

Events, in order: `RUN_STARTED`; per model request `STEP_STARTED` (`stepName` `request-<n>`),
the thinking as `REASONING_START`, `REASONING_MESSAGE_START`, `REASONING_MESSAGE_CONTENT`,
`REASONING_MESSAGE_END`, `REASONING_END` (a redacted block with `metadata`
`{"thinkagent": {"redacted": true}}` and no content), text as `TEXT_MESSAGE_START`,
`TEXT_MESSAGE_CONTENT`, `TEXT_MESSAGE_END`, tool calls as `TOOL_CALL_START` (with the step's
assistant message as `parentMessageId`), `TOOL_CALL_ARGS`, `TOOL_CALL_END`, then
`STEP_FINISHED` and a `STATE_SNAPSHOT` of the run's state (`usage`, `finishReason`, and the
structured `output` as it streams); each tool result as `TOOL_CALL_RESULT`; warnings as
`CUSTOM` events named `thinkagent.warning`; then `RUN_FINISHED` with the `result` (the output),
the outcome (`success`, or `interrupt` for calls awaiting approval) and the `usage`, or
`RUN_ERROR`. Needs the `sse` extra for `AGUITurn.response`.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import pydantic_core
from pydantic import BaseModel, ConfigDict, TypeAdapter

from ._telemetry import call_arguments
from .agent import AgentStream, Approval, RunResult, ToolApproved, ToolDenied
from .errors import ProviderError, ThinkAgentError
from .history import repair
from .messages import (
    Document,
    FinishReason,
    Image,
    Message,
    Part,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    UserPrompt,
)
from .providers.base import ModelResponse
from .stream import (
    PartEnd,
    PartialOutput,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolResultEvent,
    WarningEvent,
)

__all__ = [
    "AG_UI_PROTOCOL_VERSION",
    "AGUIEntry",
    "AGUIRequestError",
    "AGUIThread",
    "AGUITurn",
    "ag_ui_events",
]

AG_UI_PROTOCOL_VERSION = "1.0"
"""The AG-UI protocol version these events follow."""

TOOL_APPROVAL = "tool_approval"
"""The `reason` of the interrupt for a call awaiting approval."""

_FINISH: dict[str | None, str] = {
    "stop": "stop",
    "tool_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "error": "error",
}


class AGUIRequestError(ValueError):
    """A `RunAgentInput` thinkagent cannot take (answer it with a 4xx), naming what is wrong."""


def _jsonable(value: object) -> Any:
    return pydantic_core.to_jsonable_python(value)


def _usage(usage: Usage, model: str | None) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.total_tokens,
    }
    if model:
        counts["model"] = model
    if usage.thinking_tokens:
        counts["reasoningTokens"] = usage.thinking_tokens
    if usage.cache_read_tokens:
        counts["cachedInputTokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        counts["cacheWriteInputTokens"] = usage.cache_write_tokens
    return counts


async def ag_ui_events(
    stream: AgentStream[Any],
    *,
    thread_id: str,
    run_id: str,
    denied: Sequence[str] = (),
) -> AsyncIterator[dict[str, Any]]:
    """The run as AG-UI events (the module's docstring lists them). Message ids are
    `<run id>-<step>-<index>` (a reasoning or text part's; a tool call's parent is the step's
    first text, or `<run id>-<step>` when the step has none before it) and
    `<run id>-result-<call id>` (a tool result's)."""
    yield {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}
    step = 0
    in_step = False
    open_parts: dict[int, tuple[str, str]] = {}  # index -> (kind, id)
    parents: dict[str, str] = {}  # step -> the assistant message its tool calls belong to
    state: dict[str, Any] = {}
    finish: FinishReason | None = None
    model: str | None = None
    try:
        async for item in stream:
            if isinstance(item, ThinkingDelta | TextDelta | ToolCallDelta):
                if not in_step:
                    step += 1
                    in_step = True
                    yield {"type": "STEP_STARTED", "stepName": f"request-{step}"}
                async for event in _delta(item, f"{run_id}-{step}", open_parts, parents):
                    yield event
            elif isinstance(item, PartEnd):
                opened = open_parts.pop(item.index, None)
                if opened is not None:
                    for event in _part_end(opened):
                        yield event
            elif isinstance(item, ModelResponse):
                if not in_step:
                    step += 1
                    yield {"type": "STEP_STARTED", "stepName": f"request-{step}"}
                for index in sorted(open_parts):  # a part its adapter did not close
                    for event in _part_end(open_parts[index]):
                        yield event
                open_parts.clear()
                in_step = False
                finish, model = item.message.finish_reason, item.message.model
                yield {"type": "STEP_FINISHED", "stepName": f"request-{step}"}
                state["usage"] = _usage(stream.usage, model)
                state["finishReason"] = _FINISH.get(finish, "other")
                yield {"type": "STATE_SNAPSHOT", "snapshot": dict(state)}
            elif isinstance(item, ToolResultEvent):
                result = item.result
                event: dict[str, Any] = {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"{run_id}-result-{result.call_id}",
                    "toolCallId": result.call_id,
                    "content": result.content_text(),
                    "role": "tool",
                }
                if result.is_error:
                    flags = {"isError": True, "denied": result.call_id in denied}
                    event["metadata"] = {"thinkagent": flags}
                yield event
            elif isinstance(item, PartialOutput):
                state["output"] = _jsonable(item.output)
                yield {"type": "STATE_SNAPSHOT", "snapshot": dict(state)}
            elif isinstance(item, WarningEvent):  # pyright: ignore[reportUnnecessaryIsInstance]
                yield {
                    "type": "CUSTOM",
                    "name": "thinkagent.warning",
                    "value": {"code": item.code, "message": item.message},
                }
    except Exception as exc:  # the run failed: say so, then end the stream cleanly
        error: dict[str, Any] = {"type": "RUN_ERROR", "message": "the run failed on the server"}
        if isinstance(exc, ThinkAgentError):
            error["message"] = str(exc)
            error["code"] = (
                exc.error_type or type(exc).__name__
                if isinstance(exc, ProviderError)
                else type(exc).__name__
            )
        yield error
        return
    result = stream.result
    finished: dict[str, Any] = {
        "type": "RUN_FINISHED",
        "threadId": thread_id,
        "runId": run_id,
        "usage": [_usage(result.usage, model)],
    }
    if result.pending_approvals:
        finished["outcome"] = {
            "type": "interrupt",
            "interrupts": [
                {
                    "id": call.id,
                    "reason": TOOL_APPROVAL,
                    "message": result.approval_reasons.get(call.id)
                    or f"{call.name} needs approval",
                    "toolCallId": call.id,
                    "metadata": {
                        "thinkagent": {"toolName": call.name, "arguments": call_arguments(call)}
                    },
                }
                for call in result.pending_approvals
            ],
        }
    else:
        finished["outcome"] = {"type": "success"}
        if result.output is not None:
            finished["result"] = _jsonable(result.output)
    yield finished


async def _delta(
    delta: ThinkingDelta | TextDelta | ToolCallDelta,
    step_id: str,
    open_parts: dict[int, tuple[str, str]],
    parents: dict[str, str],
) -> AsyncIterator[dict[str, Any]]:
    index = delta.index
    if isinstance(delta, ToolCallDelta):
        if index not in open_parts:
            call_id = delta.id or f"{step_id}-{index}"
            open_parts[index] = ("tool", call_id)
            yield {
                "type": "TOOL_CALL_START",
                "toolCallId": call_id,
                "toolCallName": delta.name or "",
                "parentMessageId": parents.setdefault(step_id, step_id),
            }
        if delta.args_fragment:
            yield {
                "type": "TOOL_CALL_ARGS",
                "toolCallId": open_parts[index][1],
                "delta": delta.args_fragment,
            }
        return
    kind = "reasoning" if isinstance(delta, ThinkingDelta) else "text"
    if index not in open_parts:
        message_id = f"{step_id}-{index}"
        open_parts[index] = (kind, message_id)
        if kind == "reasoning":
            start: dict[str, Any] = {"type": "REASONING_START", "messageId": message_id}
            message: dict[str, Any] = {
                "type": "REASONING_MESSAGE_START",
                "messageId": message_id,
                "role": "reasoning",
            }
            if isinstance(delta, ThinkingDelta) and delta.redacted is not None:
                message["metadata"] = {"thinkagent": {"redacted": True}}
            yield start
            yield message
        else:
            parents.setdefault(step_id, message_id)  # the step's calls join its first text
            yield {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"}
    if delta.text:
        content = "REASONING_MESSAGE_CONTENT" if kind == "reasoning" else "TEXT_MESSAGE_CONTENT"
        yield {"type": content, "messageId": open_parts[index][1], "delta": delta.text}


def _part_end(opened: tuple[str, str]) -> list[dict[str, Any]]:
    kind, part_id = opened
    if kind == "tool":
        return [{"type": "TOOL_CALL_END", "toolCallId": part_id}]
    if kind == "reasoning":
        return [
            {"type": "REASONING_MESSAGE_END", "messageId": part_id},
            {"type": "REASONING_END", "messageId": part_id},
        ]
    return [{"type": "TEXT_MESSAGE_END", "messageId": part_id}]


# --- RunAgentInput, read back into a thinkagent history -------------------------------------------


@dataclass(frozen=True, slots=True)
class AGUIEntry:
    """A user message, or the messages of the runs that answered it, with every AG-UI message
    id the client knows them by (the user message's; the ids of the reasoning, text, tool call
    parents and tool results the runs streamed)."""

    ids: tuple[str, ...]
    role: Literal["user", "assistant"]
    messages: tuple[Message, ...]


class AGUIThread:
    """The server side of one AG-UI thread: its thinkagent messages, proofs included, by the
    ids the client knows. Persist it with `dump()` and `AGUIThread.load()`; `version` counts
    its commits, for a store that refuses a stale write."""

    def __init__(self, entries: Sequence[AGUIEntry] = (), *, version: int = 0) -> None:
        self.entries: list[AGUIEntry] = list(entries)
        self.version = version

    @property
    def messages(self) -> list[Message]:
        return [message for entry in self.entries for message in entry.messages]

    def dump(self) -> str:
        record = _ThreadRecord(
            version=self.version,
            entries=[
                _EntryRecord(ids=list(e.ids), role=e.role, messages=list(e.messages))
                for e in self.entries
            ],
        )
        return _THREAD.dump_json(record, exclude_none=True).decode()

    @classmethod
    def load(cls, data: str | bytes) -> AGUIThread:
        record = _THREAD.validate_json(data)
        return cls(
            [AGUIEntry(tuple(e.ids), e.role, tuple(e.messages)) for e in record.entries],
            version=record.version,
        )

    def turn(self, body: Mapping[str, Any]) -> AGUITurn:
        """What the `RunAgentInput` `body` asks for: the messages it names by id are taken
        from this thread (with their proofs), up to the last one it knows; after them, a new
        user message is the prompt; `resume` entries answer the calls the last run stopped at
        (`resolved` approves, with `payload` `{"approved": false, "reason": ...}` to deny or
        `{"arguments": {...}}` to edit; `cancelled` denies); with neither, the run answers the
        last user message again (a regenerate). A message this thread does not hold is read
        from the body without reasoning."""
        thread_id = body.get("threadId")
        run_id = body.get("runId")
        if not isinstance(thread_id, str) or not isinstance(run_id, str):
            raise AGUIRequestError("the input needs a threadId and a runId")
        raw = body.get("messages")
        if not isinstance(raw, list):
            raise AGUIRequestError("the input has no messages list")
        messages = [_message(m, i) for i, m in enumerate(cast("list[Any]", raw))]
        where = {i: n for n, entry in enumerate(self.entries) for i in entry.ids}
        last_known = max((i for i, m in enumerate(messages) if m["id"] in where), default=-1)
        kept = self.entries[: where[messages[last_known]["id"]] + 1] if last_known >= 0 else []
        new = messages[last_known + 1 :]
        resume = body.get("resume")
        state = body.get("state")
        context = [
            f"{item.get('description', '')}: {item.get('value', '')}"
            for c in cast("list[Any]", body.get("context") or [])
            if isinstance(c, dict) and (item := cast("dict[str, Any]", c))
        ]
        common: dict[str, Any] = {"thread_id": thread_id, "run_id": run_id, "state": state}
        if isinstance(resume, list) and resume:
            if new:
                raise AGUIRequestError("a resumed run takes no new messages")
            if not kept or kept[-1].role != "assistant":
                raise AGUIRequestError("resume answers a run of this thread that stopped")
            approvals = _approvals(cast("list[Any]", resume))
            return AGUITurn(
                self, kept, None, approvals, continues=kept[-1], context=context, **common
            )
        users = [i for i, m in enumerate(new) if m.get("role") == "user"]
        if users:
            last = users[-1]
            history = [*kept]
            for i, m in enumerate(new[:last]):
                history.append(_entry(m, last_known + 1 + i))
            prompt = _prompt(new[last], last_known + 1 + last)
            return AGUITurn(
                self,
                history,
                prompt,
                {},
                prompt_id=new[last]["id"],
                context=context,
                **common,
            )
        if kept and kept[-1].role == "user":
            return AGUITurn(self, kept, None, {}, context=context, **common)
        raise AGUIRequestError(
            "nothing to run: no new user message, no resume entries, and the messages do not "
            "end with a user message to answer again"
        )


class AGUITurn:
    """One `RunAgentInput`, read: run the agent with `prompt`, `history` and `approvals` (the
    client's `state` and `context` are in `state` and `context`, for the app to use), stream
    it with `events` or `response`, and `commit` it to get the thread to store."""

    def __init__(
        self,
        thread: AGUIThread,
        kept: list[AGUIEntry],
        prompt: UserPrompt | None,
        approvals: dict[str, Approval],
        *,
        thread_id: str,
        run_id: str,
        state: Any,
        context: list[str],
        prompt_id: str | None = None,
        continues: AGUIEntry | None = None,
    ) -> None:
        self.thread = thread
        self.prompt = prompt
        self.approvals = approvals
        self.thread_id = thread_id
        self.run_id = run_id
        self.state = state
        self.context = context
        self._kept = kept[:-1] if continues is not None else kept
        self._continues = continues
        self._prompt_id = prompt_id
        self.history: list[Message] = [m for entry in kept for m in entry.messages]

    @property
    def denied(self) -> list[str]:
        return [
            i for i, d in self.approvals.items() if not (d is True or isinstance(d, ToolApproved))
        ]

    def events(self, stream: AgentStream[Any]) -> AsyncIterator[dict[str, Any]]:
        return ag_ui_events(
            stream, thread_id=self.thread_id, run_id=self.run_id, denied=self.denied
        )

    def response(
        self, stream: AgentStream[Any], *, on_end: Any = None, ping: float | None = 15
    ) -> Any:
        """The run as AG-UI events over Server-Sent Events (`data:` lines of JSON), cancelled
        if the client goes away; `on_end(stream)` runs once it has ended."""
        from sse_starlette import EventSourceResponse

        from .sse import _ended  # pyright: ignore[reportPrivateUsage]

        async def data() -> AsyncIterator[dict[str, str]]:
            async for event in self.events(stream):
                yield {"data": json.dumps(event, ensure_ascii=False)}

        return EventSourceResponse(_ended(data(), stream, on_end), ping=ping)

    def commit(self, ended: AgentStream[Any] | RunResult[Any]) -> AGUIThread:
        """The thread with this run in it (a new `AGUIThread`, `version` one higher): the
        entries before it, the prompt's user message, and the run's messages under the ids it
        streamed (a continued run adds to the entry it continues)."""
        if isinstance(ended, RunResult):
            messages, pending = ended.messages, bool(ended.pending_approvals)
            new = ended.new_messages
        else:
            messages, new = ended.messages, ended.new_messages
            try:
                pending = bool(ended.result.pending_approvals)
            except RuntimeError:
                pending = False
        entries = list(self._kept)
        start = sum(len(entry.messages) for entry in entries)
        if self._prompt_id is not None:
            if len(messages) <= start:
                return AGUIThread(self.thread.entries, version=self.thread.version)
            entries.append(AGUIEntry((self._prompt_id,), "user", (messages[start],)))
            start += 1
        answer = list(messages[start:])
        if not pending and answer:
            answer = repair(answer)
        if answer:
            before = self._continues.ids if self._continues is not None else ()
            ids = (*before, *_streamed_ids(self.run_id, new))
            entries.append(AGUIEntry(ids, "assistant", tuple(answer)))
        return AGUIThread(entries, version=self.thread.version + 1)


def _streamed_ids(run_id: str, messages: Sequence[Message]) -> list[str]:
    """The AG-UI message ids `ag_ui_events` gave `messages` (one run's, in order)."""
    ids: list[str] = []
    step = 0
    for message in messages:
        if message.role == "assistant":
            step += 1
            step_id = f"{run_id}-{step}"
            ids.append(step_id)
            ids.extend(
                f"{step_id}-{i}"
                for i, part in enumerate(message.parts)
                if isinstance(part, ThinkingBlock | TextPart)
            )
        else:
            ids.extend(f"{run_id}-result-{r.call_id}" for r in message.tool_results)
    return ids


class _EntryRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    ids: list[str]
    role: Literal["user", "assistant"]
    messages: list[Message]


class _ThreadRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = 0
    entries: list[_EntryRecord] = []


_THREAD: TypeAdapter[_ThreadRecord] = TypeAdapter(_ThreadRecord)


def _message(raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise AGUIRequestError(f"messages[{index}] is not an object")
    message = cast("dict[str, Any]", raw)
    if not isinstance(message.get("id"), str):
        raise AGUIRequestError(f"messages[{index}] has no id")
    return message


def _approvals(resume: list[Any]) -> dict[str, Approval]:
    decisions: dict[str, Approval] = {}
    for i, raw in enumerate(resume):
        entry: dict[str, Any] = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
        if not isinstance(entry.get("interruptId"), str):
            raise AGUIRequestError(f"resume[{i}] needs an interruptId")
        payload = entry.get("payload")
        answer: dict[str, Any] = (
            cast("dict[str, Any]", payload) if isinstance(payload, dict) else {}
        )
        call_id = entry["interruptId"]
        if entry.get("status") == "cancelled" or answer.get("approved") is False:
            reason = answer.get("reason")
            decisions[call_id] = ToolDenied(reason) if isinstance(reason, str) else False
        elif entry.get("status") == "resolved":
            arguments = answer.get("arguments")
            decisions[call_id] = (
                ToolApproved(arguments=cast("dict[str, Any]", arguments))
                if isinstance(arguments, dict)
                else True
            )
        else:
            raise AGUIRequestError(f"resume[{i}]: status must be 'resolved' or 'cancelled'")
    return decisions


def _prompt(message: Mapping[str, Any], index: int) -> UserPrompt:
    content = message.get("content")
    if isinstance(content, str):
        if not content.strip():
            raise AGUIRequestError(f"messages[{index}]: the user message is empty")
        return content
    if not isinstance(content, list):
        raise AGUIRequestError(f"messages[{index}]: content must be text or parts")
    prompt: list[str | Image | Document] = []
    for j, raw in enumerate(cast("list[Any]", content)):
        part: dict[str, Any] = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
        kind = part.get("type")
        if kind == "text":
            prompt.append(str(part.get("text", "")))
        elif kind in ("image", "document"):
            prompt.append(_media(part, index, j))
    if not prompt:
        raise AGUIRequestError(f"messages[{index}]: the user message has no text or media")
    return prompt


def _media(part: Mapping[str, Any], index: int, j: int) -> Image | Document:
    source: dict[str, Any] = (
        cast("dict[str, Any]", part["source"]) if isinstance(part.get("source"), dict) else {}
    )
    kind = Image if part.get("type") == "image" else Document
    value = source.get("value")
    mime = source.get("mimeType")
    try:
        if source.get("type") == "data" and isinstance(value, str):
            return kind(data=base64.b64decode(value, validate=True), media_type=mime)
        if source.get("type") == "url" and isinstance(value, str):
            return kind(url=value, media_type=mime)
    except (ValueError, binascii.Error) as exc:
        raise AGUIRequestError(f"messages[{index}].content[{j}]: {exc}") from exc
    raise AGUIRequestError(f"messages[{index}].content[{j}]: a data or url source is needed")


def _entry(message: Mapping[str, Any], index: int) -> AGUIEntry:
    """A message this thread does not hold, read from the client (never its reasoning)."""
    role = message.get("role")
    if role == "user":
        return AGUIEntry((message["id"],), "user", (Message.user(_prompt(message, index)),))
    if role == "assistant":
        parts: list[Part] = []
        if isinstance(message.get("content"), str) and message["content"]:
            parts.append(TextPart(text=message["content"]))
        for raw in cast("list[Any]", message.get("toolCalls") or []):
            call = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
            function = cast("dict[str, Any]", call.get("function") or {})
            parts.append(
                ToolCall(
                    id=str(call.get("id")),
                    name=str(function.get("name")),
                    arguments=str(function.get("arguments") or "{}"),
                )
            )
        found = (Message(role="assistant", parts=tuple(parts)),) if parts else ()
        return AGUIEntry((message["id"],), "assistant", found)
    if role == "tool":
        result = ToolResult(
            call_id=str(message.get("toolCallId")),
            name=str(message.get("toolCallId")),
            content=str(message.get("content", "")),
            is_error="error" in message,
        )
        return AGUIEntry((message["id"],), "user", (Message(role="user", parts=(result,)),))
    return AGUIEntry((message["id"],), "user", ())  # reasoning, system, developer: not replayed


def new_run_id() -> str:
    """A fresh run id, for a server that makes its own."""
    return f"run-{uuid.uuid4().hex}"
