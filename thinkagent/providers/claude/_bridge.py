"""boto3 on asyncio: blocking calls in threads of each client's own, and a stream read by a thread.

boto3 is synchronous. `in_worker` runs a call in a pool of worker threads that belongs to the
boto3 client making it (as many threads as the client has connections), apart from the loop's
default executor and from every other client's pool, so one client's hung calls cannot hold up
another's. `StreamReader` makes a streaming call in a dedicated thread and reads its botocore
`EventStream` there, handing the events to the loop a network chunk at a time; leaving it (an
error, a cancellation, an early close) shuts the connection down and joins the thread (ADR 6).

A thread cannot be interrupted while botocore waits for a response. A call whose awaiting task
is cancelled is *abandoned*: a `before-send` hook registered on each client refuses every later
attempt of it, so botocore does not retry it and its thread is back within the attempt under
way (at most the client's connect and read timeouts), never after the retries (ADR 70).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import importlib
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any

__all__ = ["CallAbandoned", "ReadFailure", "StreamReader", "in_worker"]

# botocore ships no type information: its names are reached through `Any`.
_EventStreamBuffer: Any = getattr(
    importlib.import_module("botocore.eventstream"), "EventStreamBuffer", None
)

_DEFAULT_CONNECTIONS = 10
"""botocore's default `max_pool_connections`, for a client whose config does not say."""

_HOOK_ID = "thinkagent-refuse-abandoned-attempts"


class CallAbandoned(Exception):
    """Raised by botocore in place of a new attempt (a retry) of a call nobody waits for."""


class _Call:
    """One blocking call; `abandoned` once the task that waited for it has given up."""

    __slots__ = ("abandoned",)

    def __init__(self) -> None:
        self.abandoned = False

    def abandon_if_cancelled(self, future: asyncio.Future[Any]) -> None:
        if future.cancelled():
            self.abandoned = True


_CURRENT: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "thinkagent_bedrock_call", default=None
)
"""The call the current worker thread makes (set in the thread's own context)."""


def _refuse_abandoned(**_: Any) -> None:
    """botocore's `before-send` hook: no attempt of an abandoned call goes out. botocore treats
    the exception as the attempt's failure, not a retryable one, and the call raises it."""
    call = _CURRENT.get()
    if call is not None and call.abandoned:
        raise CallAbandoned("the call was cancelled; botocore sends no further attempt of it")


_clients: weakref.WeakKeyDictionary[Any, concurrent.futures.ThreadPoolExecutor] = (
    weakref.WeakKeyDictionary()
)
_clients_lock = threading.Lock()


def _threads(client: Any) -> concurrent.futures.ThreadPoolExecutor:
    """`client`'s worker threads, kept while the client lives and started as needed: as many as
    the client has connections (`max_pool_connections`), since more could only wait for one.
    The hook that refuses abandoned attempts is registered on the client with them."""
    with _clients_lock:
        executor = _clients.get(client)
        if executor is None:
            config: Any = client.meta.config
            size = getattr(config, "max_pool_connections", None) or _DEFAULT_CONNECTIONS
            executor = concurrent.futures.ThreadPoolExecutor(
                size, thread_name_prefix="thinkagent-bedrock"
            )
            service: str = client.meta.service_model.service_id.hyphenize()
            client.meta.events.register_first(
                f"before-send.{service}", _refuse_abandoned, unique_id=_HOOK_ID
            )
            _clients[client] = executor
        return executor


def in_worker(client: Any, function: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run `function()` (a blocking call of `client`) in `client`'s worker threads, in a copy of
    the current context.

    Cancelling the returned future abandons the call: its current attempt still runs to its
    end in its thread (boto3 cannot be interrupted), but botocore sends no retry of it.
    """
    call = _Call()

    def run() -> Any:
        _CURRENT.set(call)  # in the copied context: the caller's is left alone
        return function()

    future = asyncio.get_running_loop().run_in_executor(
        _threads(client), functools.partial(contextvars.copy_context().run, run)
    )
    future.add_done_callback(call.abandon_if_cancelled)
    return future


class ReadFailure(Exception):
    """What the reader thread raised: `error`, and whether the response had begun
    (`streaming`: the call returned and its stream was being read)."""

    def __init__(self, error: BaseException, streaming: bool) -> None:
        super().__init__(error)
        self.error = error
        self.streaming = streaming


_END: Any = object()
"""Posted last by the reader thread, whatever happened."""

_START_GRACE = 0.2
"""Seconds a closed stream waits for a response already on its way (then it shuts the
connection and joins its thread) before leaving the thread to end on its own."""


class StreamReader:
    """Runs `call` (a streaming call of `client`, which returns `{"stream": EventStream}`) and
    reads the stream in a dedicated thread; iterated with `async for`, it gives the events in batches, one per network
    chunk, and raises `ReadFailure` for what the thread raised.

    `async with` starts the thread and, on the way out, stops reading, shuts the connection
    down and joins the thread. `timeout` bounds each wait for the next batch
    (`asyncio.TimeoutError`). The thread appends to a deque and wakes the loop only when the
    consumer is waiting, so a burst of events costs one wake-up, not one per event.
    """

    def __init__(self, client: Any, call: Callable[[], Any], timeout: float | None = None) -> None:
        _threads(client)  # the hook that refuses the attempts of an abandoned call
        self._call = call
        self._job = _Call()
        self._timeout = timeout
        self._loop = asyncio.get_running_loop()
        self._items: deque[Any] = deque()  # batches, then perhaps a ReadFailure, then _END
        self._lock = threading.Lock()
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False  # _END was taken: the thread has nothing more to post
        self._stopping = False
        self._stream: Any = None
        self._answered = False  # `call` returned (or raised)
        self._answer_waiter: asyncio.Future[None] | None = None
        self._thread = threading.Thread(
            target=self._run, name="thinkagent-bedrock-stream", daemon=True
        )

    async def __aenter__(self) -> StreamReader:
        self._thread.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def __aiter__(self) -> StreamReader:
        return self

    async def __anext__(self) -> Sequence[Any]:
        items = self._items
        if not items:
            if self._timeout is None:
                await self._wait()
            else:
                await asyncio.wait_for(self._wait(), self._timeout)
        item = items.popleft()
        if item is _END:
            self._ended = True
            raise StopAsyncIteration
        if isinstance(item, ReadFailure):
            items.popleft()  # the _END the thread posted with it
            self._ended = True
            raise item
        return item

    async def _wait(self) -> None:
        """Return once the deque holds something."""
        with self._lock:
            if self._items:
                return
            waiter = self._waiter = self._loop.create_future()
        await waiter

    def _post(self, items: Sequence[Any]) -> None:
        with self._lock:
            self._items.extend(items)
            waiter, self._waiter = self._waiter, None
        self._notify(waiter)

    def _notify(self, waiter: asyncio.Future[None] | None) -> None:
        if waiter is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is listening
                self._loop.call_soon_threadsafe(_wake, waiter)

    def _mark_answered(self) -> None:
        with self._lock:
            self._answered = True
            waiter, self._answer_waiter = self._answer_waiter, None
        self._notify(waiter)

    def _run(self) -> None:
        _CURRENT.set(self._job)  # this thread's own context
        stream: Any = None
        tail: list[Any] = []
        try:
            try:
                stream = self._call()["stream"]
                self._stream = stream
            finally:
                self._mark_answered()
            if not self._stopping:
                for batch in _batches(stream):
                    if tail or "metadata" in batch[-1]:
                        # The terminal event: hand it over with the end of the stream, in
                        # one wake-up, once the connection is read to its end.
                        tail.append(batch)
                    else:
                        self._post((batch,))
                    if self._stopping:
                        break
        except BaseException as exc:
            if not self._stopping:
                tail.append(ReadFailure(exc, streaming=stream is not None))
        finally:
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
            tail.append(_END)
            self._post(tail)

    async def _answered_within(self, seconds: float) -> bool:
        """Whether `call` has returned, waiting up to `seconds` for it."""
        with self._lock:
            if self._answered:
                return True
            waiter = self._answer_waiter = self._loop.create_future()
        try:
            await asyncio.wait_for(waiter, seconds)
        except asyncio.TimeoutError:
            with self._lock:
                self._answer_waiter = None
                return self._answered
        return True

    async def close(self) -> None:
        """Stop reading, shut the connection down and join the thread.

        Before the response has begun there is no connection to shut down: the blocked call
        can last its whole read timeout. The call is then abandoned (botocore sends no retry of
        it) and the reader left to finish on its own (a daemon thread that discards what comes
        and ends when the attempt under way does), after a short grace for a response already
        on its way.
        """
        if self._ended:
            self._thread.join()
            return
        self._stopping = True
        if not await self._answered_within(_START_GRACE):
            self._job.abandoned = True
            return
        stream = self._stream
        if stream is not None:
            # Shutting the socket down wakes the blocked read at once (closing it does not).
            shutdown = getattr(getattr(stream, "_raw_stream", None), "shutdown", None)
            if shutdown is not None:
                with contextlib.suppress(Exception):
                    shutdown()
        while True:
            if not self._items:
                await self._wait()
            if self._items.popleft() is _END:
                break
        self._ended = True
        self._thread.join()


def _batches(stream: Any) -> Iterator[Sequence[Any]]:
    """The events of a botocore `EventStream`, grouped by the network chunk they came in.

    Handing the loop one batch per chunk instead of one event at a time spares a thread
    switch per event (each wake-up makes the two threads trade the GIL). This reads the
    stream the way `EventStream.__iter__` does; if botocore ever changes those internals,
    the events are read one by one through the public iterator instead.
    """
    raw = getattr(stream, "_raw_stream", None)
    parse = getattr(stream, "_parse_event", None)
    if raw is None or parse is None or _EventStreamBuffer is None:
        for event in stream:
            yield (event,)
        return
    buffer = _EventStreamBuffer()
    for chunk in raw.stream():
        buffer.add_data(chunk)
        batch = [event for event in map(parse, buffer) if event]
        if batch:
            yield batch


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
