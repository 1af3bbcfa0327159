"""The AWS event-stream encoder, checked against botocore's own parser."""

from __future__ import annotations

import json

from botocore.eventstream import EventStreamBuffer
from hypothesis import given, settings
from hypothesis import strategies as st

from thinkagent.emulator.eventstream import (
    encode_headers,
    encode_message,
    event_message,
    exception_message,
)

names = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=30)
values = st.text(max_size=200)


@settings(max_examples=100, deadline=None)
@given(
    messages=st.lists(
        st.tuples(st.dictionaries(names, values, max_size=5), st.binary(max_size=2000)),
        min_size=1,
        max_size=5,
    ),
    split=st.integers(min_value=1, max_value=64),
)
def test_botocore_parses_what_we_encode(
    messages: list[tuple[dict[str, str], bytes]], split: int
) -> None:
    stream = b"".join(encode_message(encode_headers(h.items()), p) for h, p in messages)
    buffer = EventStreamBuffer()
    parsed = []
    for start in range(0, len(stream), split):  # fed in arbitrary pieces, as a socket would
        buffer.add_data(stream[start : start + split])
        parsed.extend(buffer)
    assert [(m.headers, m.payload) for m in parsed] == list(messages)


def test_event_and_exception_messages() -> None:
    buffer = EventStreamBuffer()
    buffer.add_data(
        event_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "héllo"}})
    )
    buffer.add_data(exception_message("throttlingException", {"message": "slow down"}))
    event, exception = list(buffer)
    assert event.headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert json.loads(event.payload) == {"contentBlockIndex": 0, "delta": {"text": "héllo"}}
    assert exception.headers[":message-type"] == "exception"
    assert exception.headers[":exception-type"] == "throttlingException"
    assert json.loads(exception.payload) == {"message": "slow down"}
