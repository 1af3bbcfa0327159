"""boto3 on asyncio: blocking calls in threads of their own, and a stream read by a thread.

boto3 is synchronous. `in_worker` runs a call in a small pool of Bedrock worker threads, apart
from the loop's default executor. `StreamReader` makes a streaming call in a dedicated thread
and reads its botocore `EventStream` there, handing the events to the loop a network chunk at a
time; leaving it (an error, a cancellation, an early close) shuts the connection down and joins
the thread (ADR 6).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import importlib
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any

__all__ = ["ReadFailure", "StreamReader", "in_worker"]

# botocore ships no type information: its names are reached through `Any`.
_EventStreamBuffer: Any = getattr(
    importlib.import_module("botocore.eventstream"), "EventStreamBuffer", None
)

_WORKERS = 10
"""Threads for non-streamed calls (botocore's default connection pool size)."""

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def in_worker(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run `function(*args)` in the Bedrock worker threads, in a copy of the current context.

    boto3 blocks: its calls get threads of their own, apart from the loop's default executor
    (where `asyncio.to_thread` and sync tools run), so neither can starve the other. A call
    whose awaiting task is cancelled still runs to its end in its thread.
    """
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = concurrent.futures.ThreadPoolExecutor(
                    _WORKERS, thread_name_prefix="thinkagent-bedrock"
                )
    context = contextvars.copy_context()
    return asyncio.get_running_loop().run_in_executor(
        _executor, functools.partial(context.run, function, *args)
    )


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
    """Runs `call` (which returns `{"stream": EventStream}`) and reads the stream in a
    dedicated thread; iterated with `async for`, it gives the events in batches, one per network
    chunk, and raises `ReadFailure` for what the thread raised.

    `async with` starts the thread and, on the way out, stops reading, shuts the connection
    down and joins the thread. `timeout` bounds each wait for the next batch
    (`asyncio.TimeoutError`). The thread appends to a deque and wakes the loop only when the
    consumer is waiting, so a burst of events costs one wake-up, not one per event.
    """

    def __init__(self, call: Callable[[], Any], timeout: float | None = None) -> None:
        self._call = call
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
        can last its whole read timeout, retries included. The reader is then left to finish
        on its own (a daemon thread that discards what comes and ends when the call returns),
        after a short grace for a response already on its way.
        """
        if self._ended:
            self._thread.join()
            return
        self._stopping = True
        if not await self._answered_within(_START_GRACE):
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
