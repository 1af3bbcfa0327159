"""A streamed thinking + tool turn cut after each of its events, on every wire API: the run
fails with a `ThinkAgentError` whose history holds the prompt only (never the partial
message), any signed or redacted block that arrived whole is exactly the one the full turn
carries (never a signature on cut text), and the history resumes to the fault-free result."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlencode

import pytest
from botocore.eventstream import EventStreamBuffer

from thinkagent import (
    Agent,
    Message,
    ProviderError,
    ThinkAgentError,
    ThinkingBlock,
    dump_messages,
    validate_history,
)
from thinkagent.emulator import Emulator, Fault, RecordedRequest

from .wires import EMULATOR_API, QUESTION, WIRES, Wire, get_weather, outcome, run, wire_model


def events_in_answer(emu: Emulator, request: RecordedRequest) -> int:
    """How many events the emulator streams in answer to `request` (sent again as it was
    recorded, with a credential): the positions a cut can fall after."""
    skip = {"content-length", "transfer-encoding", "host", "accept-encoding"}
    headers = {k: v for k, v in request.headers.items() if k not in skip}
    headers["authorization"] = "Bearer k"
    path = request.path + (f"?{urlencode(request.query)}" if request.query else "")
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    connection.request(request.method, path, json.dumps(request.body), headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if "eventstream" in (response.getheader("content-type") or ""):
        buffer = EventStreamBuffer()
        buffer.add_data(body)
        return len(list(buffer))
    separator = b"\r\n\r\n" if b"\r\n\r\n" in body else b"\n\n"
    return len([event for event in body.split(separator) if event.strip()])


def check_partial(partial: Message | None, whole: Message) -> None:
    """Whatever of the turn carries a proof arrived whole: it is a block of the full turn."""
    for part in partial.parts if partial is not None else ():
        if isinstance(part, ThinkingBlock) and (part.signature or part.redacted):
            assert part in whole.parts, f"a proof on a block the full turn does not have: {part}"


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_cut_after_any_event_leaves_a_valid_history_that_resumes(
    emu: Emulator, wire: Wire
) -> None:
    async with wire_model(emu, wire, retries=False) as model:
        agent = Agent(model, tools=[get_weather])
        expected = (await run(agent, QUESTION, streamed=True)).messages
        events = events_in_answer(emu, emu.requests[0])
        assert events > 3
        for after in range(events + 1):
            emu.reset()
            emu.inject(Fault.cut(after=after, api=EMULATOR_API[wire]))
            result = await outcome(agent, QUESTION, streamed=True)
            if isinstance(result, ThinkAgentError):
                assert isinstance(result, ProviderError), f"after {after}: {result!r}"
                assert result.retryable, f"after {after}: {result!r}"
                assert result.messages == expected[:1], f"after {after}"
                validate_history(result.messages)
                check_partial(getattr(result, "partial", None), expected[1])
                result = await run(agent, None, history=result.messages, streamed=True)
            else:  # only when every event went out before the connection was cut
                assert after == events, f"the cut after {after} of {events} events went unseen"
            assert dump_messages(result.messages) == dump_messages(expected), f"after {after}"
