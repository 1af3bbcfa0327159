"""`FallbackModel`: the next model takes the request after a retryable error."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from thinkagent import (
    Agent,
    ConfigurationError,
    FallbackExhausted,
    FallbackModel,
    HistoryError,
    MediaSupport,
    Message,
    ModelProfile,
    ProviderError,
    StreamInterrupted,
    TextDelta,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    WarningEvent,
)
from thinkagent.history import for_scope
from thinkagent.providers.base import ModelRequest, ModelResponse, ModelStreamEvent
from thinkagent.testing import ScriptedModel, ScriptedResponse

OVERLOADED = ProviderError("overloaded", scope="a", status=529, retryable=True)
REFUSED = ProviderError("bad request", scope="a", status=400)


def answer(text: str, sig: str) -> Message:
    return Message(role="assistant", parts=(ThinkingBlock.signed("hm", sig), TextPart(text=text)))


class ReplayingModel(ScriptedModel):
    """A scripted model that applies the replay policy an adapter applies (ADR 5, 29)."""

    sent: list[list[Message]]

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.sent = [*getattr(self, "sent", []), for_scope(request.messages, self.scope)]
        return await super().request(request)


async def test_a_retryable_error_moves_the_request_to_the_next_model() -> None:
    first = ScriptedModel([OVERLOADED], scope="a", model_name="model-a")
    second = ScriptedModel([answer("from b", "sig-b")], scope="b", model_name="model-b")
    result = await Agent(FallbackModel(first, second)).run("q")
    assert result.output == "from b"
    assert (result.messages[-1].scope, result.messages[-1].model) == ("b", "model-b")
    assert len(first.requests) == len(second.requests) == 1


async def test_a_non_retryable_error_is_the_runs() -> None:
    first = ScriptedModel([REFUSED], scope="a")
    second = ScriptedModel([answer("never", "s")], scope="b")
    with pytest.raises(ProviderError, match="bad request"):
        await Agent(FallbackModel(first, second)).run("q")
    assert second.requests == []


async def test_the_user_names_the_errors_that_move_on() -> None:
    first = ScriptedModel([REFUSED], scope="a")
    second = ScriptedModel([answer("from b", "s")], scope="b")
    model = FallbackModel(first, second, fallback_on=[ProviderError])
    assert (await Agent(model).run("q")).output == "from b"
    third = ScriptedModel([KeyError("boom")], scope="c")
    fourth = ScriptedModel([answer("from d", "s")], scope="d")
    model = FallbackModel(third, fourth, fallback_on=lambda e: isinstance(e, KeyError))
    assert (await Agent(model).run("q")).output == "from d"


async def test_when_every_model_fails_the_error_holds_each() -> None:
    other = ProviderError("rate limited", scope="b", status=429, retryable=True)
    model = FallbackModel(ScriptedModel([OVERLOADED], scope="a"), ScriptedModel([other], scope="b"))
    with pytest.raises(FallbackExhausted, match="all 2 models failed; last: rate limited") as info:
        await Agent(model).run("q")
    assert info.value.errors == [OVERLOADED, other]
    assert isinstance(info.value, ProviderError) and info.value.status == 429
    assert info.value.messages == [Message.user("q")]


async def test_the_next_provider_never_receives_a_proof_it_did_not_issue() -> None:
    calling = Message(
        role="assistant",
        parts=(ThinkingBlock.signed("use the tool", "sig-from-a"), ToolCall(id="c", name="noop")),
    )

    def noop() -> str:
        return "ok"

    first = ReplayingModel([calling, OVERLOADED], scope="a")
    second = ReplayingModel([answer("done", "sig-from-b")], scope="b")
    result = await Agent(FallbackModel(first, second), tools=[noop]).run("q")
    assert [m.scope for m in result.messages if m.role == "assistant"] == ["a", "b"]
    (sent_to_b,) = second.sent
    assert sent_to_b[1].thinking == []  # a's signed thinking is not replayed to b
    assert sent_to_b[1].tool_calls == calling.tool_calls
    assert result.messages[1].thinking[0].signature == "sig-from-a"  # the evidence keeps it


async def test_streamed_fallback_before_the_first_delta() -> None:
    cut = ScriptedResponse(answer("partial", "s"), interrupt_after=0)
    first = ScriptedModel([cut], scope="a")
    second = ScriptedModel(
        [ScriptedResponse(answer("from b", "sig-b"), warnings=[WarningEvent("w", "note", "b")])],
        scope="b",
    )
    events = []
    async with Agent(FallbackModel(first, second)).run_stream("q") as stream:
        async for event in stream:
            events.append(event)
    assert stream.result.output == "from b"
    assert stream.result.warnings == [WarningEvent("w", "note", "b")]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "from b"


async def test_streamed_fallback_never_after_a_delta() -> None:
    cut = ScriptedResponse(answer("partial answer", "s"), interrupt_after=2)
    first = ScriptedModel([cut], scope="a")
    second = ScriptedModel([answer("from b", "s")], scope="b")
    with pytest.raises(StreamInterrupted):
        async with Agent(FallbackModel(first, second)).run_stream("q") as stream:
            async for _ in stream:
                pass
    assert second.requests == []


async def test_a_stream_that_ends_without_a_response_moves_on() -> None:
    class Silent(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
            yield WarningEvent("w", "only a warning")

    second = ScriptedModel([answer("from b", "s")], scope="b")
    async with Agent(FallbackModel(Silent([]), second)).run_stream("q") as stream:
        async for _ in stream:
            pass
    assert stream.result.output == "from b"
    assert stream.result.warnings == []  # the silent model's warning did not apply


def test_the_profile_is_what_every_model_can_do() -> None:
    a = ModelProfile(
        native_output=True,
        media=MediaSupport(frozenset({"image/*", "application/pdf"}), urls=True, max_bytes=10),
    )
    b = ModelProfile(
        native_output=False,
        media=MediaSupport(frozenset({"image/png"}), in_tool_results=True, max_bytes=5),
    )
    model = FallbackModel(ScriptedModel([], profile=a), ScriptedModel([], profile=b))
    assert model.profile == ModelProfile(
        native_output=False, media=MediaSupport(frozenset({"image/png"}), max_bytes=5)
    )
    assert model.scope == "scripted" and model.model_name == "scripted-model"
    with pytest.raises(ConfigurationError):
        FallbackModel()


# --- a fallback that sticks ----------------------------------------------------------------


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def call(sig: str) -> Message:
    return Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("I need the weather.", sig),
            ToolCall(id=f"call-{sig}", name="get_weather", arguments={"city": "Paris"}),
        ),
    )


async def test_a_fallback_that_answered_the_turn_keeps_it() -> None:
    """Once the second model began the tool loop, the loop's next request starts with it: the
    first model (recovered) is not asked to continue a loop it did not begin."""
    first = ScriptedModel([OVERLOADED, answer("never", "s")], scope="a", model_name="model-a")
    second = ScriptedModel(
        [call("sig-b"), answer("sunny", "sig-b2")], scope="b", model_name="model-b"
    )
    result = await Agent(FallbackModel(first, second), tools=[get_weather]).run("Weather?")
    assert result.output == "sunny"
    assert len(first.requests) == 1 and len(second.requests) == 2
    # a new user turn starts with the first model again
    more = await Agent(FallbackModel(first, second), tools=[get_weather]).run(
        "And tomorrow?", history=result.messages
    )
    assert more.output == "never" and len(first.requests) == 2


async def test_a_later_model_that_cannot_take_the_history_is_passed_over() -> None:
    """The sticky model fails; the first model refuses the loop the other began (before
    sending): the request is exhausted with both errors, not the first model's history error."""

    class Strict(ScriptedModel):
        async def request(self, request: ModelRequest) -> ModelResponse:
            raise HistoryError("cannot continue a loop it did not begin", message_index=1)

    busy = ProviderError("overloaded", scope="b", status=529, retryable=True)
    sticky = ScriptedModel([busy], scope="b", model_name="model-b")
    first = Strict([], scope="a", model_name="model-a")
    began = call("sig-b").model_copy(update={"scope": "b", "model": "model-b"})
    result = ToolResult(call_id="call-sig-b", name="get_weather", content="sunny")
    history = [Message.user("Weather?"), began, Message.user_results([result])]
    with pytest.raises(FallbackExhausted) as caught:
        await FallbackModel(first, sticky).request(ModelRequest(messages=history))
    assert [e.scope for e in caught.value.errors] == ["b", "a"]
    assert "model-a cannot continue this history" in str(caught.value.errors[1])
    assert isinstance(caught.value.errors[1].__cause__, HistoryError)
    # asked first, the same refusal is the history's error, raised as it is
    with pytest.raises(HistoryError):
        await FallbackModel(first, sticky).request(ModelRequest(messages=history[:1]))
