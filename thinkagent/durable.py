"""Durable agent runs on DBOS: a run survives the death of the process that runs it.

`DurableAgent` runs an `Agent` as a DBOS workflow (`pip install 'thinkagent[dbos]'`). Each model
request and each tool call is a DBOS step whose output is checkpointed as thinkagent's own JSON
(the message in its `dump_messages` form, every signature and payload byte for byte), so a run
recovered after a crash, a deploy or a lost node continues with exactly the blocks the provider
signed, and never asks the provider again for a request that completed.

```python
from dbos import DBOS
from thinkagent.durable import DurableAgent

DBOS(config={"name": "my-app", "system_database_url": "sqlite:///agents.sqlite"})
durable = DurableAgent(agent, name="support")  # before DBOS.launch(): recovery needs it
DBOS.launch()  # resumes the runs a dead process left pending
result = await durable.run("Where is my order?", conversation_id="conversation-42")
```

The application owns DBOS (its config, `DBOS.launch()`, `DBOS.destroy()`): SQLite by
default, Postgres in production, where worker processes share runs through a DBOS queue
(`DurableAgent.enqueue`). See `docs/durable.md`.
"""

from __future__ import annotations

import asyncio
import binascii
import contextlib
import contextvars
import copy
import functools
import hashlib
import json
import pickle
import weakref
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from contextlib import nullcontext
from dataclasses import dataclass, fields
from typing import Any, Generic, cast

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic_core import PydanticSerializationError
from typing_extensions import TypeVar

from ._extras import needs

with needs("dbos", "thinkagent.durable"):
    from dbos import DBOS, SetEnqueueOptions, SetWorkflowID

from pydantic import JsonValue

from .agent import Agent, AgentEvent, Approval, RunResult, ToolApproved, ToolDenied
from .context import DepsT, RunContext
from .errors import ConfigurationError, StreamInterrupted, ThinkAgentError
from .history import open_calls
from .messages import (
    Document,
    Image,
    Message,
    TextPart,
    ToolResult,
    Usage,
    UserPrompt,
)
from .providers.base import Model, ModelProfile, ModelRequest, ModelResponse, model_profile
from .stream import (
    PartEnd,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolResultEvent,
    WarningEvent,
)
from .tools import ApprovalRequired, Tool, ToolTimedOut, describe_failure, split_media

__all__ = [
    "CheckpointError",
    "DurableAgent",
    "DurableError",
    "DurableRun",
    "DurableRunContext",
    "ToolInterrupted",
    "WorkflowConflict",
    "idempotency_key",
    "recover_runs",
]

OutputT = TypeVar("OutputT", default=str)

EVENTS_STREAM = "thinkagent.events"
"""The DBOS stream key under which a durable run publishes its events."""

_NO_DEPS: Any = None


class DurableError(ThinkAgentError):
    """A durable run cannot go on as asked; `workflow_id` names the run."""

    def __init__(self, message: str, *, workflow_id: str | None) -> None:
        super().__init__(message)
        self.workflow_id = workflow_id


class WorkflowConflict(DurableError):
    """A workflow id is already the id of another run: of another durable agent, or of this
    one with a different prompt, history, deps or approvals. Nothing was started."""


class CheckpointError(DurableError):
    """A checkpoint of the run cannot be read back (edited, truncated, or written by something
    else). `step` names the DBOS step (its id within the workflow) and what it held."""

    def __init__(self, message: str, *, workflow_id: str | None, step: str) -> None:
        super().__init__(message, workflow_id=workflow_id)
        self.step = step


class ToolInterrupted(DurableError):
    """A call of a tool marked not idempotent had started when its process died, and did not
    finish: whether it took effect is unknown, so it is not run again and the run stops.

    `messages` holds the run's evidence up to the call (its assistant message last);
    `tool_name`, `call_id` and `step` name the call.
    """

    def __init__(
        self, message: str, *, workflow_id: str | None, tool_name: str, call_id: str, step: int
    ) -> None:
        super().__init__(message, workflow_id=workflow_id)
        self.tool_name = tool_name
        self.call_id = call_id
        self.step = step

    def with_result(self, content: JsonValue, *, is_error: bool = False) -> list[Message]:
        """The evidence with the interrupted call answered by you, once you know whether it
        took effect: continue the conversation from it with `run(None, history=...)`, which
        runs the step's other calls (not this one) and asks the model.

        ```python
        except ToolInterrupted as error:
            done = await payments.status(error.call_id)  # did the refund happen?
            history = error.with_result(f"refund status: {done}")
            result = await durable.run(None, history=history, conversation_id=conversation)
        ```
        """
        result = ToolResult(
            call_id=self.call_id, name=self.tool_name, content=content, is_error=is_error
        )
        return [*self.messages, Message(role="user", parts=(result,))]


@dataclass(frozen=True, slots=True)
class DurableRunContext(RunContext[DepsT]):
    """The `RunContext` a tool gets in a durable run: the run's context plus the DBOS step that
    runs the call.

    A call that was running when its process died runs again when the run is recovered, with
    the same `workflow_id`, `step_id` and `tool_call_id`: `idempotency_key` names the call
    across such retries (pass it to a payment API, use it as a database key) so a tool can make
    its effect happen once.
    """

    workflow_id: str = ""
    step_id: int = 0

    @property
    def idempotency_key(self) -> str:
        """`"<workflow id>:<step id>"`: the same on every attempt of this call, unique otherwise."""
        return f"{self.workflow_id}:{self.step_id}"


def idempotency_key(ctx: RunContext[Any]) -> str:
    """The idempotency key of the tool call `ctx` belongs to, in a durable run.

    A tool takes `ctx: RunContext[D]` as usual; in a durable run that context is a
    `DurableRunContext`, and this returns its `idempotency_key`. `ConfigurationError` outside a
    durable run, where a call is never retried by recovery and has no such key.
    """
    if not isinstance(ctx, DurableRunContext):
        raise ConfigurationError(
            "idempotency_key(ctx) needs the context of a tool call in a durable run "
            "(DurableAgent); this call is not running as a DBOS step"
        )
    return ctx.idempotency_key


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _RunRequest(_Record):
    """A run's input, as the workflow records it: what recovery runs again."""

    prompt: str | Message | None = None
    history: list[Message] = []
    deps: str | None = None  # the deps' JSON, as the agent's deps_type dumps it
    approvals: dict[str, bool | str | dict[str, Any]] = {}  # a denial's reason as text, an
    # approval that edits the call as {"arguments": {...}}
    conversation_id: str | None = None


class _RunOutcome(_Record):
    output: Any = None
    messages: list[Message]
    new: int
    usage: Usage
    pending: list[str] = []
    reasons: dict[str, str] = {}
    warnings: list[WarningEvent] = []


class _ToolFailure(_Record):
    type: str
    message: str
    timeout: float | None = None


class _ToolRecord(_Record):
    """A tool call's checkpoint: the result the model gets and, for a failure, what raised;
    for a call its tool paused (`ApprovalRequired`), the reason it gave."""

    result: ToolResult
    failure: _ToolFailure | None = None
    approval: str | None = None


_RESPONSE: TypeAdapter[ModelResponse] = TypeAdapter(ModelResponse)
_EVENT_TYPES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        ThinkingDelta,
        TextDelta,
        ToolCallDelta,
        PartEnd,
        WarningEvent,
        ModelResponse,
        ToolResultEvent,
    )
}
_REQUEST_STARTED = "request_started"


@functools.cache
def _event_adapter(name: str) -> TypeAdapter[Any]:
    return TypeAdapter(_EVENT_TYPES[name])


def _encode_event(event: object) -> str:
    name = type(event).__name__
    data = _event_adapter(name).dump_json(event, exclude_none=True).decode()
    return f'{{"type":"{name}","event":{data}}}'


_live: weakref.WeakValueDictionary[str, DurableAgent[Any, Any]] = weakref.WeakValueDictionary()


class DurableAgent(Generic[DepsT, OutputT]):
    """An `Agent` whose runs are DBOS workflows: checkpointed step by step, resumed after a crash.

    `name` is the run's workflow name in DBOS: keep it stable across deploys, since a recovered
    run finds its code by it, and unique in the process. Create the `DurableAgent` before
    `DBOS.launch()`, in every process that may run or recover its runs.

    Every model request is one step (`<name>.model`), every tool call one (`<name>.tool.<tool>`),
    an instructions function one; their outputs are thinkagent's JSON. Calls the model makes in
    parallel run as parallel steps. A step that completed is never run again; a step that was
    running when its process died runs again on recovery: a model request is sent again (its
    partial stream was never kept), a tool is called again. Tools in durable runs should
    therefore be idempotent (`DurableRunContext.idempotency_key` helps); list the ones that
    cannot be in `not_idempotent`: a call of theirs that was interrupted stops the run with
    `ToolInterrupted` instead of running twice.

    `deps` are checkpointed as JSON with the agent's `deps_type` (a recovered run rebuilds them
    from it, and so does the first execution, so both see the same): declare one that pydantic
    can dump and load. `events=True` publishes each complete model response and tool result to
    the run's DBOS stream (`DurableRun.events`); `stream_deltas=True` streams the model requests
    and publishes their deltas too (one database write each).
    """

    def __init__(
        self,
        agent: Agent[DepsT, OutputT],
        *,
        name: str,
        not_idempotent: Iterable[str] = (),
        events: bool = True,
        stream_deltas: bool = False,
    ) -> None:
        if not name or not name.strip():
            raise ConfigurationError("a durable agent needs a name: its runs' workflow name")
        if name in _live:
            raise ConfigurationError(
                f"a durable agent named {name!r} already exists in this process: a recovered "
                "run would not know which one to resume; give each its own name"
            )
        unknown = sorted(set(not_idempotent) - agent.tools.keys())
        if unknown:
            raise ConfigurationError(
                f"not_idempotent names tools the agent does not have: {', '.join(unknown)}"
            )
        self.agent = agent
        self.name = name
        self.events = events or stream_deltas
        self.stream_deltas = stream_deltas
        self._not_idempotent = frozenset(not_idempotent)
        self._deps = _deps_adapter(agent.deps_type)
        self._output: TypeAdapter[Any] = TypeAdapter(cast("Any", agent.output_type))
        self._runner: Agent[Any, Any] = copy.copy(agent)
        self._runner.model = _StepModel(agent.model, self)
        # Its own overrides: one of the agent's (a model swapped in a test) must not bypass the
        # checkpoints; `DurableAgent.override` puts a model under them.
        self._runner._overrides = contextvars.ContextVar(  # pyright: ignore[reportPrivateUsage]
            f"thinkagent.durable.overrides.{name}", default=None
        )
        self._runner.tools = {
            tool_name: _StepTool(tool, self, tool_name not in self._not_idempotent)
            for tool_name, tool in agent.tools.items()
        }
        instructions = agent.instructions
        if instructions is not None and not isinstance(instructions, str):
            self._runner.instructions = functools.partial(self._instructions, instructions)

        async def workflow(request: str) -> str:
            return await self._execute(request)

        self._workflow = DBOS.workflow(name=_workflow_name(name))(workflow)
        _live[name] = self

    def __repr__(self) -> str:
        return f"DurableAgent({self.name!r})"

    # --- starting runs ---------------------------------------------------------------------

    async def run(
        self,
        prompt: UserPrompt | None = None,
        *,
        workflow_id: str | None = None,
        conversation_id: str | None = None,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
    ) -> RunResult[OutputT]:
        """Run durably to the model's final answer (the arguments of `Agent.run`).

        `workflow_id` is the run's id (a request id): calling again with the same id and the
        same arguments returns the same run's result (waiting for it, or resuming it if its
        process died) without running it twice; with other arguments it raises
        `WorkflowConflict`. A conversation has many turns, each its own run: give
        `conversation_id` instead, and each turn's id is derived from it and the turn's input
        (`turn_id`), so a retried turn is the same run and the next turn a new one. Without
        either, DBOS picks a fresh id.
        """
        run = await self.start(
            prompt,
            workflow_id=workflow_id,
            conversation_id=conversation_id,
            history=history,
            deps=deps,
            approvals=approvals,
        )
        return await run.result()

    def run_sync(
        self,
        prompt: UserPrompt | None = None,
        *,
        workflow_id: str | None = None,
        conversation_id: str | None = None,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
    ) -> RunResult[OutputT]:
        """`run` for scripts: runs its own event loop (not callable from inside one)."""
        return asyncio.run(
            self.run(
                prompt,
                workflow_id=workflow_id,
                conversation_id=conversation_id,
                history=history,
                deps=deps,
                approvals=approvals,
            )
        )

    async def start(
        self,
        prompt: UserPrompt | None = None,
        *,
        workflow_id: str | None = None,
        conversation_id: str | None = None,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
    ) -> DurableRun[OutputT]:
        """Start the run in this process and return its handle at once."""
        request = await self._admit(prompt, workflow_id, conversation_id, history, deps, approvals)
        workflow_id = workflow_id or _turn_id(conversation_id, request)
        with SetWorkflowID(workflow_id) if workflow_id else nullcontext():
            handle = await DBOS.start_workflow_async(self._workflow, request)
        return DurableRun(self, handle.get_workflow_id(), handle)

    def turn_id(
        self,
        conversation_id: str,
        prompt: UserPrompt | None = None,
        *,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        attempt: int = 0,
    ) -> str:
        """The workflow id of one turn of a conversation: `"<conversation id>:<digest>"`, the
        digest of the turn's input (prompt, history, deps, approvals) and `attempt`. The same
        turn asked again (a client's retry) gets the same id, so it runs once; any other turn
        gets its own. Ask the same turn again for a fresh answer (a regenerate) with another
        `attempt`. `run(..., conversation_id=...)` uses it with `attempt=0`."""
        request = self._request(prompt, conversation_id, history, deps, approvals)
        turn = _turn_id(conversation_id, request, attempt)
        assert turn is not None
        return turn

    @contextlib.contextmanager
    def override(self, *, model: Model) -> Generator[None]:
        """Within the block, this durable agent's runs ask `model` (through the same
        checkpointed steps): for tests. Scoped like `Agent.override`; a run recovered in another
        process uses the agent's own model."""
        with self._runner.override(model=_StepModel(model, self)):
            yield

    async def enqueue(
        self,
        prompt: UserPrompt | None = None,
        *,
        queue: str,
        workflow_id: str | None = None,
        conversation_id: str | None = None,
        history: Sequence[Message] = (),
        deps: DepsT = _NO_DEPS,
        approvals: Mapping[str, Approval] | None = None,
        partition_key: str | None = None,
    ) -> DurableRun[OutputT]:
        """Put the run on the DBOS queue `queue`, for whichever worker process has room.

        The queue is declared with `DBOS.register_queue` (its `worker_concurrency` bounds the
        runs of one worker, `global_concurrency` those of all). On a queue with `partition_*`
        limits, runs are partitioned by provider: the key defaults to the model's scope, so
        `partition_concurrency` bounds the runs on one provider across all workers.
        """
        found = await DBOS.retrieve_queue_async(queue)
        if found is None:
            raise ConfigurationError(
                f"there is no DBOS queue {queue!r}: declare it with DBOS.register_queue first"
            )
        if partition_key is None and await asyncio.to_thread(_partitioned, found):
            partition_key = self.agent.model.scope
        request = await self._admit(prompt, workflow_id, conversation_id, history, deps, approvals)
        workflow_id = workflow_id or _turn_id(conversation_id, request)
        with (
            SetWorkflowID(workflow_id) if workflow_id else nullcontext(),
            SetEnqueueOptions(queue_partition_key=partition_key),
        ):
            handle = await found.enqueue_async(self._workflow, request)
        return DurableRun(self, handle.get_workflow_id(), handle)

    def retrieve(self, workflow_id: str) -> DurableRun[OutputT]:
        """The handle of a run started earlier, by any process: its status, events, result."""
        return DurableRun(self, workflow_id)

    def _request(
        self,
        prompt: UserPrompt | None,
        conversation_id: str | None,
        history: Sequence[Message],
        deps: Any,
        approvals: Mapping[str, Approval] | None,
    ) -> str:
        """The run's input as the workflow records it (JSON)."""
        return _RunRequest(
            prompt=_prompt_record(prompt),
            history=list(history),
            deps=self._dump_deps(deps),
            approvals={
                call_id: _decision_record(decision)
                for call_id, decision in (approvals or {}).items()
            },
            conversation_id=conversation_id,
        ).model_dump_json(exclude_none=True)

    async def _admit(
        self,
        prompt: UserPrompt | None,
        workflow_id: str | None,
        conversation_id: str | None,
        history: Sequence[Message],
        deps: Any,
        approvals: Mapping[str, Approval] | None,
    ) -> str:
        """The run's recorded input; `WorkflowConflict` when the id is another run's."""
        request = self._request(prompt, conversation_id, history, deps, approvals)
        workflow_id = workflow_id or _turn_id(conversation_id, request)
        if workflow_id is not None:
            status = await DBOS.get_workflow_status_async(workflow_id)
            if status is not None:
                self._check_same(workflow_id, status.name, status.input, request)
        return request

    def _check_same(self, workflow_id: str, name: str, recorded: Any, request: str) -> None:
        if name != _workflow_name(self.name):
            raise WorkflowConflict(
                f"workflow {workflow_id!r} is a run of {name!r}, not of durable agent "
                f"{self.name!r}: a workflow id names one run; choose another id",
                workflow_id=workflow_id,
            )
        inputs = cast("dict[str, Any]", recorded) if isinstance(recorded, dict) else {}
        args = cast("Sequence[object]", inputs.get("args") or ())
        stored = args[0] if args else None
        if stored == request:
            return
        differs = "its input cannot be read back"
        if isinstance(stored, str):
            try:
                before, now = json.loads(stored), json.loads(request)
            except ValueError:
                pass
            else:
                keys = ("prompt", "history", "deps", "approvals", "conversation_id")
                changed = [key for key in keys if before.get(key) != now.get(key)]
                differs = f"its {' and '.join(changed) or 'input'} differ"
                if len(changed) == 1:
                    differs += "s"
        raise WorkflowConflict(
            f"workflow {workflow_id!r} is already a run of durable agent {self.name!r} with "
            f"other arguments ({differs}): the same id gives the same run; choose another id "
            "for a new one",
            workflow_id=workflow_id,
        )

    def _dump_deps(self, deps: Any) -> str | None:
        if deps is None:
            return None
        if self._deps is None:
            raise ConfigurationError(
                f"deps of type {type(deps).__name__} were given to a durable run, but the agent "
                "declares no deps_type: declare it (Agent(..., deps_type=...)) so a recovered "
                "run can rebuild the deps from their checkpoint"
            )
        try:
            text = self._deps.dump_json(deps).decode()
            self._deps.validate_json(text)
        except (PydanticSerializationError, ValidationError, TypeError, ValueError) as exc:
            raise ConfigurationError(
                f"deps of type {type(deps).__name__} cannot be checkpointed as JSON ({exc}); a "
                "durable run may be resumed in another process, which rebuilds its deps from "
                "the checkpoint: pass data (ids, URLs, settings), not live clients, and build "
                "the clients in the tools"
            ) from exc
        return text

    # --- the workflow ------------------------------------------------------------------------

    async def _execute(self, request: str) -> str:
        """The workflow: run the agent on its recorded input; steps do the expensive parts."""
        workflow_id = DBOS.workflow_id
        try:
            given = _RunRequest.model_validate_json(request)
            deps = None if given.deps is None else self._deps_or_fail().validate_json(given.deps)
        except (ValidationError, ConfigurationError) as exc:
            raise CheckpointError(
                f"workflow {workflow_id!r}: the run's recorded input cannot be read: {exc}",
                workflow_id=workflow_id,
                step="input",
            ) from exc
        prompt: UserPrompt | None
        if isinstance(given.prompt, Message):
            prompt = [
                part.text if isinstance(part, TextPart) else cast("Image | Document", part)
                for part in given.prompt.parts
            ]
        else:
            prompt = given.prompt
        approvals = {call_id: _decision(decision) for call_id, decision in given.approvals.items()}
        try:
            async with self._runner.run_stream(
                prompt,
                history=given.history,
                deps=deps,
                approvals=approvals,
                conversation_id=given.conversation_id,
            ) as stream:
                async for event in stream:
                    if self.events and isinstance(event, ModelResponse | ToolResultEvent):
                        await DBOS.write_stream_async(EVENTS_STREAM, _encode_event(event))
            result = stream.result
        except _Interrupted as signal:
            raise signal.error from None
        if self.events:  # a failed run ends its stream by ending (no step here: replays agree)
            await DBOS.close_stream_async(EVENTS_STREAM)
        pending = [call.id for call in result.pending_approvals]
        output = None if pending else self._output.dump_python(result.output, mode="json")
        return _RunOutcome(
            output=output,
            messages=result.messages,
            new=len(result.new_messages),
            usage=result.usage,
            pending=pending,
            reasons=result.approval_reasons,
            warnings=result.warnings,
        ).model_dump_json(exclude_none=True)

    def _deps_or_fail(self) -> TypeAdapter[Any]:
        if self._deps is None:
            raise ConfigurationError("the agent declares no deps_type")
        return self._deps

    def _decode_result(self, workflow_id: str, text: object) -> RunResult[OutputT]:
        try:
            if not isinstance(text, str):
                raise TypeError(f"not JSON text but {type(text).__name__}")
            outcome = _RunOutcome.model_validate_json(text)
            output = None if outcome.pending else self._output.validate_python(outcome.output)
        except (ValidationError, TypeError) as exc:
            raise CheckpointError(
                f"workflow {workflow_id!r}: the run's recorded result cannot be read: {exc}",
                workflow_id=workflow_id,
                step="output",
            ) from exc
        messages = outcome.messages
        step = next((m for m in reversed(messages) if m.role == "assistant"), None)
        by_id = {
            call.id: call
            for call in (open_calls(step) if step is not None else ())
            if call.id in outcome.pending
        }
        return RunResult(
            cast("OutputT", output),
            messages,
            messages[len(messages) - outcome.new :] if outcome.new else [],
            outcome.usage,
            pending_approvals=[by_id[call_id] for call_id in outcome.pending],
            warnings=outcome.warnings,
            approval_reasons=outcome.reasons,
        )

    # --- steps -------------------------------------------------------------------------------

    async def _model_step(self, model: Model, request: ModelRequest) -> ModelResponse:
        reservation = DBOS.reserve_step()
        ran: list[bool] = []
        name = f"{self.name}.model"

        async def step() -> str:
            return await self._request_model(model, request, ran)

        text = await _checked_step(
            reservation.step_id,
            name,
            reservation.run_async({"name": name}, _named(step, name)),
            ran,
        )
        try:
            return _RESPONSE.validate_json(text)
        except ValidationError as exc:
            raise _corrupt(
                reservation.step_id, f"{self.name}.model", "model response", exc
            ) from exc

    async def _request_model(self, model: Model, request: ModelRequest, ran: list[bool]) -> str:
        ran.append(True)
        if not self.stream_deltas:
            response = await model.request(request)
        else:
            response = None
            started = json.dumps({"type": _REQUEST_STARTED, "step": DBOS.step_id})
            await DBOS.write_stream_async(EVENTS_STREAM, started)
            async for event in model.stream(request):
                if isinstance(event, ModelResponse):
                    response = event
                else:
                    await DBOS.write_stream_async(EVENTS_STREAM, _encode_event(event))
            if response is None:
                raise StreamInterrupted(
                    "the stream ended without a final response", scope=model.scope
                )
        return _RESPONSE.dump_json(response, exclude_none=True).decode()

    async def _instructions(
        self, function: Callable[[RunContext[Any]], str | Awaitable[str]], ctx: RunContext[Any]
    ) -> str:
        async def evaluate() -> str:
            value = function(ctx)
            if asyncio.iscoroutine(value) or isinstance(value, Awaitable):
                value = await value
            return value  # the agent checks it is text

        return await DBOS.run_step_async({"name": f"{self.name}.instructions"}, evaluate)


class DurableRun(Generic[OutputT]):
    """A durable run, by its workflow id: follow it, read its status, wait for its result.

    Any process with the same `DurableAgent` and DBOS system database can get one
    (`DurableAgent.retrieve`), before or after the process that runs it restarted.
    """

    def __init__(
        self, agent: DurableAgent[Any, OutputT], workflow_id: str, handle: Any = None
    ) -> None:
        self.agent = agent
        self.workflow_id = workflow_id
        self._handle = handle  # DBOS's handle when this process started the run

    def __repr__(self) -> str:
        return f"DurableRun({self.workflow_id!r})"

    async def status(self) -> str | None:
        """DBOS's status of the run: `ENQUEUED`, `PENDING` (running, or waiting to be
        recovered), `SUCCESS`, `ERROR`, `CANCELLED`, `MAX_RECOVERY_ATTEMPTS_EXCEEDED`; None
        when there is no such run."""
        status = await DBOS.get_workflow_status_async(self.workflow_id)
        return None if status is None else str(status.status)

    async def result(self) -> RunResult[OutputT]:
        """Wait for the run's result; raises what the run raised (with its evidence)."""
        handle: Any = self._handle or await DBOS.retrieve_workflow_async(self.workflow_id)
        text: object = await handle.get_result()
        return self.agent._decode_result(self.workflow_id, text)  # pyright: ignore[reportPrivateUsage]

    async def events(self, *, offset: int = 0) -> AsyncIterator[AgentEvent]:
        """The run's events from `offset` on, as they are published, until the run ends.

        Each complete `ModelResponse` and each `ToolResultEvent` (in call order), read from the
        run's DBOS stream, so a follower that started after a crash, in any process, sees the
        whole run. With `stream_deltas=True` the deltas come first; a model request that
        restarted after a crash is announced by a `WarningEvent` (code `request_restarted`):
        drop the deltas of that response received so far.
        """
        started: set[int] = set()
        position = offset
        async for value in DBOS.read_stream_async(self.workflow_id, EVENTS_STREAM, offset=offset):
            try:
                if not isinstance(value, str):
                    raise TypeError(f"not JSON text but {type(value).__name__}")
                raw = json.loads(value)
                kind = raw["type"]
                if kind == _REQUEST_STARTED:
                    step = int(raw["step"])
                    if step in started:
                        yield WarningEvent(
                            code="request_restarted",
                            message=f"the model request of step {step} restarted after a crash: "
                            "drop its deltas received so far",
                        )
                    started.add(step)
                    event = None
                else:
                    event = _event_adapter(kind).validate_python(raw["event"])
            except (ValueError, TypeError, KeyError, ValidationError) as exc:
                raise CheckpointError(
                    f"workflow {self.workflow_id!r}: event {position} of its stream cannot be "
                    f"read: {exc}",
                    workflow_id=self.workflow_id,
                    step=f"event {position}",
                ) from exc
            position += 1
            if event is not None:
                yield event


class _StepModel:
    """The agent's model, seen through DBOS: each request is a checkpointed step."""

    def __init__(self, model: Model, durable: DurableAgent[Any, Any]) -> None:
        self._model = model
        self._durable = durable
        self.profile: ModelProfile = model_profile(model)

    @property
    def model_name(self) -> str:
        return self._model.model_name

    @property
    def scope(self) -> str:
        return self._model.scope

    @property
    def client(self) -> Any:
        """The wrapped model's SDK client (where its requests go: traces, the test block)."""
        return getattr(self._model, "client", None)

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await self._durable._model_step(self._model, request)  # pyright: ignore[reportPrivateUsage]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        # The run's deltas go to its DBOS stream (from inside the step); the agent gets the
        # checkpointed response, the same whether the step ran now or before a crash.
        yield await self.request(request)


class _Interrupted(BaseException):
    """Carries `ToolInterrupted` past the agent, which turns a tool's exceptions into error
    results for the model: an interrupted call that must not run again stops the run."""

    def __init__(self, error: ToolInterrupted) -> None:
        super().__init__(str(error))
        self.error = error


class _StepTool(Tool):
    """A tool whose calls run as DBOS steps; the agent sees the same name, schema and settings."""

    def __init__(self, tool: Tool, durable: DurableAgent[Any, Any], idempotent: bool) -> None:
        self.__dict__.update(tool.__dict__)
        self._tool = tool
        self._durable = durable
        self._idempotent = idempotent
        self._step_name = f"{durable.name}.tool.{tool.name}"
        self.takes_context = True  # the agent passes the call's context: the call's id and run

    async def invoke(self, arguments: Mapping[str, Any], ctx: RunContext[Any] | None = None) -> Any:
        self._tool.validate_arguments(arguments)  # the model's mistake: no step, no checkpoint
        assert ctx is not None and ctx.tool_call_id is not None
        # Reserve the step ids before awaiting anything: parallel calls draw them in call order.
        marker = None if self._idempotent else DBOS.reserve_step()
        reservation = DBOS.reserve_step()
        fresh: list[bool] = []
        if marker is not None:
            await marker.run_async({"name": f"{self._step_name}.started"}, _mark, fresh)
        ran: list[bool] = []
        first_attempt = marker is None or bool(fresh)

        async def step() -> str:
            return await self._call(arguments, ctx, reservation.step_id, first_attempt, ran)

        text = await _checked_step(
            reservation.step_id,
            self._step_name,
            reservation.run_async({"name": self._step_name}, _named(step, self._step_name)),
            ran,
        )
        try:
            record = _ToolRecord.model_validate_json(text)
        except ValidationError as exc:
            raise _corrupt(reservation.step_id, self._step_name, "tool result", exc) from exc
        if record.approval is not None:
            raise ApprovalRequired(record.approval)
        failure = record.failure
        if failure is not None:
            if failure.timeout is not None:
                raise ToolTimedOut(failure.timeout)
            raise _error_class(failure.type)(failure.message)
        result = record.result
        return [result.content, *result.media] if result.media else result.content

    async def _call(
        self,
        arguments: Mapping[str, Any],
        ctx: RunContext[Any],
        step_id: int,
        first_attempt: bool,
        ran: list[bool],
    ) -> str:
        ran.append(True)
        workflow_id = DBOS.workflow_id or ""
        call_id = cast("str", ctx.tool_call_id)
        if not first_attempt:
            error = ToolInterrupted(
                f"workflow {workflow_id!r}, step {step_id}: tool {self.name!r} (call "
                f"{call_id!r}) had started when its process stopped and did not finish; it is "
                "marked not idempotent, so it was not run again and whether it took effect is "
                "unknown. Check, then continue the run from its evidence (this error's "
                "messages) with the call's result",
                workflow_id=workflow_id,
                tool_name=self.name,
                call_id=call_id,
                step=step_id,
            )
            error.with_evidence(ctx.messages, ctx.usage)
            raise _Interrupted(error)
        durable_ctx = None
        if self._tool.takes_context:
            values = {field.name: getattr(ctx, field.name) for field in fields(RunContext)}
            durable_ctx = DurableRunContext(**values, workflow_id=workflow_id, step_id=step_id)
        try:
            value = await self._tool.invoke(arguments, durable_ctx)
        except ApprovalRequired as exc:  # the call waits: the run pauses (the same on replay)
            result = ToolResult(call_id=call_id, name=self.name)
            return _ToolRecord(result=result, approval=exc.reason).model_dump_json(
                exclude_none=True
            )
        except Exception as exc:  # the model gets it as the call's error result
            failure = _ToolFailure(
                type=type(exc).__name__,
                message=str(exc),
                timeout=exc.timeout if isinstance(exc, ToolTimedOut) else None,
            )
            result = ToolResult(
                call_id=call_id,
                name=self.name,
                content=describe_failure(self._tool, exc),
                is_error=True,
            )
            return _ToolRecord(result=result, failure=failure).model_dump_json(exclude_none=True)
        content, media = split_media(value)
        result = ToolResult(call_id=call_id, name=self.name, content=content, media=media)
        return _ToolRecord(result=result).model_dump_json(exclude_none=True)


_Step = TypeVar("_Step", bound=Callable[[], Awaitable[str]])


def _named(step: _Step, name: str) -> _Step:
    """`step`, a call that takes no arguments, named after its DBOS step: DBOS prints the
    callable of a cancelled step in a warning, and a call's arguments hold the run's messages
    with their proofs, which no log line may show."""
    step.__qualname__ = step.__name__ = name
    return step


async def _mark(fresh: list[bool]) -> str:
    """The step that records that a call of a tool marked not idempotent started."""
    fresh.append(True)
    return ""


async def _checked_step(step_id: int, name: str, step: Awaitable[str], ran: list[bool]) -> str:
    """The step's output; a checkpoint DBOS cannot decode is a `CheckpointError`."""
    try:
        text = await step
    except (binascii.Error, pickle.UnpicklingError, EOFError, UnicodeDecodeError) as exc:
        if ran:  # raised by the step itself: its own error
            raise
        raise _corrupt(step_id, name, "output", exc) from exc
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise _corrupt(step_id, name, "output", TypeError(f"{type(text).__name__}, not text"))
    return text


def _corrupt(step_id: int, name: str, what: str, exc: BaseException) -> CheckpointError:
    workflow_id = DBOS.workflow_id
    return CheckpointError(
        f"workflow {workflow_id!r}, step {step_id} ({name}): the checkpointed {what} cannot be "
        f"read: {exc}",
        workflow_id=workflow_id,
        step=f"{step_id} ({name})",
    )


class _ReplayedError(Exception):
    """A tool's exception, rebuilt from its checkpoint under the same class name, so the model
    gets the same error text whether the call ran now or before a crash."""


@functools.cache
def _error_class(name: str) -> type[Exception]:
    if not name.isidentifier():
        name = "ToolFailure"
    return type(name, (_ReplayedError,), {"__module__": __name__})


async def recover_runs(executor_id: str, *, queue: str) -> list[str]:
    """Put the runs a dead worker left pending back on `queue`, for the live workers; returns
    their workflow ids.

    DBOS tags each run with the executor (worker) that runs it and, self-hosted, recovers a
    worker's runs when a process with the same `executor_id` starts again. When the worker is
    gone for good, whatever noticed (a supervisor, a health check) calls this from any process
    with DBOS launched; DBOS Conductor does the same by itself. Each run continues from its
    last completed step on the worker that dequeues it; were the worker not dead after all, DBOS
    stops the older execution at its next checkpoint.
    """
    pending = await DBOS.list_workflows_async(status="PENDING", executor_id=executor_id)
    for status in pending:
        await DBOS.resume_workflow_async(status.workflow_id, queue_name=queue)
    return [status.workflow_id for status in pending]


def _decision_record(decision: Approval) -> bool | str | dict[str, Any]:
    if isinstance(decision, bool):
        return decision
    if isinstance(decision, ToolDenied):
        return decision.reason
    if decision.arguments is None:
        return True
    return {"arguments": dict(decision.arguments)}


def _decision(record: bool | str | dict[str, Any]) -> Approval:
    if isinstance(record, bool):
        return record
    if isinstance(record, str):
        return ToolDenied(record)
    return ToolApproved(arguments=record.get("arguments"))


def _turn_id(conversation_id: str | None, request: str, attempt: int = 0) -> str | None:
    """A turn's workflow id: the conversation's, then the digest of the turn's input."""
    if conversation_id is None:
        return None
    digest = hashlib.sha256(f"{attempt}:{request}".encode()).hexdigest()[:20]
    return f"{conversation_id}:{digest}"


def _prompt_record(prompt: UserPrompt | None) -> str | Message | None:
    if prompt is None or isinstance(prompt, str):
        return prompt
    try:
        return Message.user(prompt)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"the prompt cannot be recorded: {exc}") from exc


def _deps_adapter(deps_type: object) -> TypeAdapter[Any] | None:
    if deps_type is None or deps_type is type(None):
        return None
    try:
        return TypeAdapter(cast("Any", deps_type))
    except Exception as exc:  # pydantic cannot build a schema for it
        raise ConfigurationError(
            f"deps_type {deps_type!r} cannot be checkpointed as JSON ({exc}); a durable run "
            "rebuilds its deps from their checkpoint: use a pydantic model, dataclass or "
            "TypedDict of data, and build live clients in the tools"
        ) from exc


def _workflow_name(name: str) -> str:
    return f"thinkagent.durable.{name}"


def _partitioned(queue: Any) -> bool:
    return any(
        getattr(queue, attribute, None) is not None
        for attribute in ("partition_concurrency", "partition_worker_concurrency")
    )
