"""The bytes on the wire do not depend on how a request is handed to the SDK.

Each adapter hands its vendor SDK a body it need not re-transform, built from each message's
wire form computed once per conversation (ADR 180). Here every request of a conversation goes
twice, through the emulator: first through the plain typed SDK call (`client...create(**params)`
with `build_request` of a fresh adapter, which has seen nothing), then through the adapter's own
path (`request` / `stream`, on the adapter that served the conversation so far). The HTTP client
of each SDK records what it sends: the bodies must be the same bytes, the headers the same
(their volatile ones aside), and the emulator must answer both. Every wire API and every chat
dialect; conversations grown over several runs (streamed and not), begun on another provider,
with images where the model takes them, with the thinking knob turned on and off.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from thinkagent import (
    Agent,
    Image,
    Message,
    ModelRequest,
    ModelSettings,
    SystemNote,
    TextPart,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.base import ModelResponse, ModelStreamEvent

from .conftest import HAS_GENAI

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
VOLATILE = frozenset(
    {
        "authorization",  # SigV4: the signature covers the time
        "x-amz-date",
        "amz-sdk-invocation-id",
        "amz-sdk-request",
        "x-amz-content-sha256",
        "content-length",  # compared through the body
    }
)


async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


@dataclass
class Sent:
    path: str
    headers: dict[str, str]
    body: bytes


class Recorder:
    """What the SDKs' HTTP clients send, in order."""

    def __init__(self) -> None:
        self.sent: list[Sent] = []

    async def httpx_hook(self, request: Any) -> None:
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.sent.append(Sent(request.url.path, headers, bytes(request.content)))

    def botocore_hook(self, request: Any, **_: Any) -> None:
        body = request.body if isinstance(request.body, bytes) else (request.body or b"")
        headers = {k.lower(): v for k, v in request.headers.items()}
        headers = {k: v if isinstance(v, str) else v.decode() for k, v in headers.items()}
        self.sent.append(Sent(request.url.split("?")[0], headers, body))

    def take(self) -> Sent:
        assert self.sent, "nothing was sent"
        return self.sent.pop()


@dataclass(frozen=True)
class Case:
    """One adapter configuration: `make(emu, recorder)` builds the adapter on a recording
    client; `typed(model, params, stream)` sends `params` (its `build_request`) through the
    plain typed SDK call and reads the answer to its end."""

    id: str
    make: Callable[[Emulator, Recorder], Any]
    typed: Callable[[Any, dict[str, Any], bool], Awaitable[None]]
    foreign: str | None = "responses"  # the provider the conversation begins on
    knob: bool = True  # whether the thinking knob may turn thinking off here


def _anthropic(model_name: str, **options: Any) -> Callable[[Emulator, Recorder], Any]:
    def make(emu: Emulator, recorder: Recorder) -> Any:
        import anthropic

        from thinkagent.providers.claude import AnthropicModel

        http = anthropic.DefaultAsyncHttpxClient(event_hooks={"request": [recorder.httpx_hook]})
        client = emu.anthropic_client(max_retries=0, http_client=http)
        return AnthropicModel(model_name, client=client, **options)

    return make


async def _anthropic_typed(model: Any, params: dict[str, Any], stream: bool) -> None:
    if not stream:
        await model.client.messages.create(**params)
        return
    events = await model.client.messages.create(**params, stream=True)
    async with events:
        async for _ in events:
            pass


def _bedrock(model_name: str, **options: Any) -> Callable[[Emulator, Recorder], Any]:
    def make(emu: Emulator, recorder: Recorder) -> Any:
        from thinkagent.providers.bedrock import BedrockModel

        client = emu.bedrock_client()
        client.meta.events.register("before-send.bedrock-runtime", recorder.botocore_hook)
        return BedrockModel(model_name, client=client, **options)

    return make


async def _bedrock_typed(model: Any, params: dict[str, Any], stream: bool) -> None:
    client = model.client
    if not stream:
        await asyncio.to_thread(client.converse, **params)
        return

    def read() -> None:
        for _ in client.converse_stream(**params)["stream"]:
            pass

    await asyncio.to_thread(read)


def _gemini(model_name: str, *, vertex: bool = False, **options: Any) -> Callable[..., Any]:
    def make(emu: Emulator, recorder: Recorder) -> Any:
        import httpx2
        from google.genai import types

        from thinkagent.providers.gemini import GeminiModel

        http = httpx2.AsyncClient(event_hooks={"request": [recorder.httpx_hook]})
        http_options = types.HttpOptions(httpx_async_client=http)
        factory = emu.vertex_client if vertex else emu.gemini_client
        return GeminiModel(model_name, client=factory(http_options=http_options), **options)

    return make


async def _gemini_typed(model: Any, params: dict[str, Any], stream: bool) -> None:
    models = model.client.aio.models
    if not stream:
        await models.generate_content(**params)
        return
    async for _ in await models.generate_content_stream(**params):
        pass


def _interactions(model_name: str, **options: Any) -> Callable[..., Any]:
    def make(emu: Emulator, recorder: Recorder) -> Any:
        import httpx2
        from google.genai import types

        from thinkagent.providers.gemini import GeminiInteractionsModel

        http = httpx2.AsyncClient(event_hooks={"request": [recorder.httpx_hook]})
        client = emu.gemini_client(http_options=types.HttpOptions(httpx_async_client=http))
        return GeminiInteractionsModel(model_name, client=client, **options)

    return make


async def _interactions_typed(model: Any, params: dict[str, Any], stream: bool) -> None:
    interactions = model.client.aio.interactions
    if not stream:
        await interactions.create(**params)
        return
    events = await interactions.create(**params, stream=True)
    async for _ in events:
        pass
    with contextlib.suppress(Exception):
        await events.close()


def _openai(
    kind: str, model_name: str, route: str | None = None, **options: Any
) -> Callable[..., Any]:
    def make(emu: Emulator, recorder: Recorder) -> Any:
        import openai

        from thinkagent.providers.openai import OpenAIChatModel, OpenAIResponsesModel

        http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [recorder.httpx_hook]})
        extra = {"base_url": f"{emu.url}/{route}/v1"} if route else {}
        client = emu.openai_client(max_retries=0, http_client=http, **extra)
        cls = OpenAIChatModel if kind == "chat" else OpenAIResponsesModel
        return cls(model_name, client=client, **options)

    return make


async def _chat_typed(model: Any, params: dict[str, Any], stream: bool) -> None:
    completions = model.client.chat.completions
    if not stream:
        await completions.create(**params)
        return
    if model.dialect.stream_usage:
        params = {**params, "stream_options": {"include_usage": True}}
    chunks = await completions.create(**params, stream=True)
    async with chunks:
        async for _ in chunks:
            pass


async def _responses_typed(model: Any, params: dict[str, Any], stream: bool) -> None:
    responses = model.client.responses
    if not stream:
        await responses.create(**params)
        return
    events = await responses.create(**params, stream=True)
    async with events:
        async for _ in events:
            pass


def _claude_thinking(kind: str) -> Any:
    from thinkagent.providers.claude import ClaudeThinking

    return ClaudeThinking.budget(2048) if kind == "budget" else ClaudeThinking.adaptive()


CHAT_MODELS = {
    "openai": "gpt-5",
    "azure": "gpt-5",
    "deepseek": "deepseek-reasoner",
    "moonshot": "kimi-k2-thinking",
    "zai": "glm-4.6",
    "openrouter": "anthropic/claude-sonnet-4.5",
    "mistral": "magistral-medium-latest",
    "xai": "grok-4",
    "vllm": "Qwen/Qwen3-8B",
    "groq": "openai/gpt-oss-120b",
    "cerebras": "gpt-oss-120b",
    "together": "deepseek-ai/DeepSeek-R1",
    "fireworks": "accounts/fireworks/models/deepseek-v3p1",
    "gemini-openai": "MiniMax-M2",
    "ollama": "qwen3:8b",
    "qwen": "qwen3-max",
    "minimax": "MiniMax-M2",
    "think_tags": "qwq-32b",
    "compatible": "glm-4.6",
}
"""A model for each chat dialect (every named dialect is covered), one the emulator serves."""
NO_KNOB = frozenset({"deepseek"})
"""Dialects whose service refuses a later tool turn when thinking was off for an earlier one."""


def _cases() -> list[Case]:
    from thinkagent.providers.openai import DIALECTS

    assert set(CHAT_MODELS) == set(DIALECTS), "a chat dialect without a wire-bytes case"
    cases = [
        Case(
            "anthropic-budget",
            _anthropic("claude-sonnet-4-5", thinking=_claude_thinking("budget")),
            _anthropic_typed,
        ),
        Case(
            "anthropic-preserved",
            _anthropic("claude-opus-5-5", thinking=_claude_thinking("adaptive")),
            _anthropic_typed,
            knob=False,
        ),
        Case(
            "anthropic-uncached",
            _anthropic(
                "claude-opus-4-7",
                thinking=_claude_thinking("adaptive"),
                settings={"prompt_cache": False},
                extra_body={"metadata": {"user_id": "u-1"}},
                extra_headers={"x-trace": "1"},
            ),
            _anthropic_typed,
            foreign="gemini",
        ),
        Case(
            "bedrock-claude",
            _bedrock(
                "us.anthropic.claude-sonnet-4-5-20250929-v1:0", thinking=_claude_thinking("budget")
            ),
            _bedrock_typed,
        ),
        Case(
            "bedrock-nova",
            _bedrock("us.amazon.nova-2-lite-v1:0"),
            _bedrock_typed,
            foreign="anthropic",
        ),
        Case(
            "responses",
            _openai("responses", "gpt-5"),
            _responses_typed,
            foreign="anthropic",
        ),
        Case(
            "responses-store",
            _openai("responses", "gpt-5", store=True),
            _responses_typed,
            foreign="anthropic",
        ),
        Case(  # DeepSeek refuses a tool call without its reasoning: not begun elsewhere
            "responses-deepseek",
            _openai("responses", "deepseek-v4-pro"),
            _responses_typed,
            foreign=None,
            knob=False,
        ),
    ]
    for dialect, model_name in CHAT_MODELS.items():
        route = "vllm" if dialect == "vllm" else None
        cases.append(
            Case(
                f"chat-{dialect}",
                _openai("chat", model_name, route, dialect=dialect),
                _chat_typed,
                foreign="anthropic",
                knob=dialect not in NO_KNOB,
            )
        )
    if HAS_GENAI:
        cases += [
            Case("gemini", _gemini("gemini-3-pro-preview"), _gemini_typed, foreign="anthropic"),
            Case(
                "vertex",
                _gemini("gemini-2.5-pro", vertex=True, replay_thoughts="all"),
                _gemini_typed,
                foreign="anthropic",
            ),
            Case(
                "interactions",
                _interactions("gemini-3-pro-preview"),
                _interactions_typed,
                foreign="anthropic",
            ),
            Case(
                "interactions-stateful",
                _interactions("gemini-3-pro-preview", stateful=True),
                _interactions_typed,
                foreign="anthropic",
            ),
        ]
    return cases


CASES = _cases()


class Twin:
    """A model that sends every request twice: by the plain typed SDK call of a fresh adapter,
    then by the adapter that served the conversation so far, and checks that both sent the same
    request. Everything else is the served adapter's."""

    def __init__(self, case: Case, emu: Emulator, recorder: Recorder) -> None:
        self._case, self._emu, self._recorder = case, emu, recorder
        self.served = case.make(emu, recorder)
        self.compared = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.served, name)

    async def _typed(self, request: ModelRequest, stream: bool) -> Sent:
        fresh = self._case.make(self._emu, self._recorder)
        await self._case.typed(fresh, fresh.build_request(request), stream)
        return self._recorder.take()

    def _check(self, typed: Sent) -> None:
        own = self._recorder.take()
        assert own.path == typed.path
        assert own.body == typed.body, _first_difference(own.body, typed.body)
        volatile = VOLATILE | {"x-stainless-retry-count"}
        assert {k: v for k, v in own.headers.items() if k not in volatile} == {
            k: v for k, v in typed.headers.items() if k not in volatile
        }
        self.compared += 1

    async def request(self, request: ModelRequest) -> ModelResponse:
        typed = await self._typed(request, stream=False)
        response = await self.served.request(request)
        self._check(typed)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        typed = await self._typed(request, stream=True)
        async for event in self.served.stream(request):
            yield event
        self._check(typed)


def _first_difference(a: bytes, b: bytes) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"the bodies differ at byte {at}: {a[max(0, at - 80) : at + 80]!r} vs {b[max(0, at - 80) : at + 80]!r}"


async def _foreign_history(emu: Emulator, kind: str | None) -> list[Message]:
    """A 2-turn tool loop on another provider: the conversation's first four messages."""
    if kind is None:
        return []
    if kind == "anthropic":
        from thinkagent.providers.claude import AnthropicModel

        client: Any = emu.anthropic_client(max_retries=0)
        model: Any = AnthropicModel(
            "claude-sonnet-4-5", client=client, thinking=_claude_thinking("budget")
        )
    elif kind == "gemini":
        from thinkagent.providers.gemini import GeminiModel

        client = emu.gemini_client()
        model = GeminiModel("gemini-3-pro-preview", client=client)
    else:
        from thinkagent.providers.openai import OpenAIResponsesModel

        client = emu.openai_client(max_retries=0)
        model = OpenAIResponsesModel("gpt-5", client=client)
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Lyon?")
    if kind == "gemini":
        await client.aio.aclose()
    else:
        await client.close()
    return result.messages


async def _run(
    agent: Agent[Any, Any], prompt: Any, history: list[Message], stream: bool
) -> list[Message]:
    if not stream:
        return (await agent.run(prompt, history=history)).messages
    async with agent.run_stream(prompt, history=history) as run:
        async for _ in run:
            pass
    return run.result.messages


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_the_adapter_sends_the_bytes_of_the_typed_sdk_call(emu: Emulator, case: Case) -> None:
    recorder = Recorder()
    twin = Twin(case, emu, recorder)
    history = await _foreign_history(emu, case.foreign)
    agent = Agent(twin, tools=[get_weather], instructions="Answer briefly.")
    off: ModelSettings = {"thinking": False}
    thinking_off = Agent(
        twin, tools=[get_weather], instructions="Answer briefly.", model_settings=off
    )
    takes_images = "image/png" in twin.served.profile.media.types
    prompts: list[Any] = [
        "What's the weather in Paris?",
        ["And in Rome? Here is the view:", Image(data=PNG, media_type="image/png")]
        if takes_images
        else "And in Rome?",
        "And in Oslo?",
        "And in Bern?",
    ]
    for turn, prompt in enumerate(prompts):
        runner = thinking_off if turn == 2 and case.knob else agent
        history = await _run(runner, prompt, history, stream=turn % 2 == 1)
    # the same conversation once more, with the other instructions (a changed prefix)
    other = Agent(twin, tools=[get_weather], instructions="Answer in one word.")
    await _run(other, "And in Nice?", history, stream=False)
    assert twin.compared >= 2 * (len(prompts) + 1)
    assert not recorder.sent


async def test_a_message_shared_by_two_conversations_goes_in_each_conversation_s_shape(
    emu: Emulator,
) -> None:
    """One adapter, two conversations holding the same message objects in different places:
    each request is the typed call's for its own conversation (what is kept per message does
    not depend on where it was first sent)."""
    case = next(c for c in CASES if c.id == "anthropic-budget")
    recorder = Recorder()
    twin = Twin(case, emu, recorder)
    agent = Agent(twin, tools=[get_weather])
    first = (await agent.run("What's the weather in Paris?")).messages
    second = (await agent.run("What's the weather in Rome?")).messages
    await agent.run("Compare them.", history=[*second, *first])
    await agent.run("Compare them.", history=[*first, *second])
    assert twin.compared >= 6 and 2 * twin.compared == len(emu.requests)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_a_request_resumed_from_what_was_kept_sends_the_typed_call_s_bytes(
    emu: Emulator, case: Case
) -> None:
    """What the passes over a conversation found in its first messages is kept for its next
    requests (`PerPrefix`): the next run from the same history, a run on the history with a
    message edited or the end cut off, a run with other instructions (a system note on Claude)
    and runs after it each send what a fresh adapter sends."""
    recorder = Recorder()
    twin = Twin(case, emu, recorder)
    agent = Agent(twin, tools=[get_weather], instructions="Answer briefly.")
    history = await _foreign_history(emu, case.foreign)
    for prompt in ("What's the weather in Paris?", "And in Rome?"):
        history = await _run(agent, prompt, history, stream=False)
    for prompt in ("And in Oslo?", "And in Bern?"):  # the same history, another prompt
        await _run(agent, prompt, history, stream=prompt.endswith("Bern?"))
    answer = history[-1]
    edited = answer.model_copy(update={"parts": (TextPart(text="It is sunny in Rome."),)})
    await _run(agent, "And in Oslo?", [*history[:-1], edited], stream=False)
    await _run(agent, "And in Oslo?", history[:-4], stream=False)
    other = Agent(twin, tools=[get_weather], instructions="Answer in one word.")
    noted = await _run(other, "And in Nice?", history, stream=False)
    await _run(agent, "And in Brest?", history, stream=False)  # before the note, as it was
    for prompt in ("And in Lyon?", "And in Metz?"):
        await _run(other, prompt, noted, stream=False)
    assert twin.compared >= 18
    assert not recorder.sent


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_a_turn_scoped_note_kept_in_its_turn_is_left_out_once_the_turn_is_over(
    emu: Emulator, case: Case
) -> None:
    """What was kept for the messages of a turn holds while the turn lasts: once the next
    prompt comes, a turn-scoped note (shown in its turn only) is left out again, as a fresh
    adapter leaves it out."""
    twin = Twin(case, emu, recorder := Recorder())
    note = SystemNote(text="Answer in French.", clear_at="next_user_message")
    asked = Message(role="user", parts=(TextPart(text="What's the weather in Paris?"), note))
    first = await twin.request(ModelRequest(messages=[asked]))
    await twin.request(ModelRequest(messages=[asked, first.message, Message.user("And Rome?")]))
    assert twin.compared == 2
    assert not recorder.sent


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_what_is_kept_per_message_goes_with_the_conversation(
    emu: Emulator, case: Case
) -> None:
    """An adapter keeps what it derived from each message while the message lives, never
    longer: once a conversation is dropped, nothing of it is left (no growth across
    conversations)."""
    model = case.make(emu, Recorder())
    agent = Agent(model, tools=[get_weather], instructions="Answer briefly.")
    history = await _foreign_history(emu, case.foreign)
    for prompt in ("What's the weather in Paris?", "And in Rome?"):
        history = await _run(agent, prompt, history, stream=False)
    assert len(model._per_message) > 0  # pyright: ignore[reportPrivateUsage]
    del history
    gc.collect()
    assert len(model._per_message) == 0  # pyright: ignore[reportPrivateUsage]
    assert len(model._per_prefix._kept) == 0  # pyright: ignore[reportPrivateUsage]


def _refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("the SDK encoded the conversation itself")


@pytest.mark.parametrize("case_id", ["anthropic-budget", "responses", "chat-deepseek"])
async def test_the_conversation_is_not_encoded_by_the_sdk(
    emu: Emulator, case_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the SDK takes a body as JSON text, the conversation's JSON is put together from
    pieces encoded once: the SDK's own encoder never runs (it would cost the body's JSON again
    on every request)."""
    import anthropic._base_client
    import openai._base_client

    case = next(c for c in CASES if c.id == case_id)
    agent = Agent(case.make(emu, Recorder()), tools=[get_weather])
    history = (await agent.run("What's the weather in Paris?")).messages
    monkeypatch.setattr(anthropic._base_client, "openapi_dumps", _refuse)
    monkeypatch.setattr(openai._base_client, "openapi_dumps", _refuse)
    await _run(agent, "And in Rome?", history, stream=False)
    await _run(agent, "And in Oslo?", history, stream=True)


@pytest.mark.skipif(not HAS_GENAI, reason="google-genai needs Python 3.11+")
async def test_google_genai_does_not_encode_the_contents(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """google-genai encodes a request body with `json.dumps` when it sends it: the adapter
    hands it the body already written, the contents put together from each content's JSON,
    encoded once (the SDK's dump would walk the whole conversation on every request)."""
    import json

    import google.genai._api_client as api_client

    case = next(c for c in CASES if c.id == "gemini")
    agent = Agent(case.make(emu, Recorder()), tools=[get_weather])
    history = (await agent.run("What's the weather in Paris?")).messages

    class Refusing:
        def __getattr__(self, name: str) -> Any:
            return getattr(json, name)

        @staticmethod
        def dumps(value: Any, *args: Any, **kwargs: Any) -> str:
            if isinstance(value, dict) and "contents" in value:
                _refuse()
            return json.dumps(value, *args, **kwargs)

    monkeypatch.setattr(api_client, "json", Refusing())
    await _run(agent, "And in Rome?", history, stream=False)
    await _run(agent, "And in Oslo?", history, stream=True)


async def test_botocore_neither_validates_nor_serialises_the_conversation(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bedrock: botocore serialises a body with no messages, and the messages' JSON goes into it
    (a `before-call` hook), so it neither validates nor serialises them on every request."""
    from botocore.validate import ParamValidator

    case = next(c for c in CASES if c.id == "bedrock-claude")
    agent = Agent(case.make(emu, Recorder()), tools=[get_weather])
    history = (await agent.run("What's the weather in Paris?")).messages
    seen: list[int] = []
    validate = ParamValidator.validate

    def counting(self: Any, params: Any, shape: Any) -> Any:
        if isinstance(params, dict) and "messages" in params:
            seen.append(len(params["messages"]))
        return validate(self, params, shape)

    monkeypatch.setattr(ParamValidator, "validate", counting)
    await _run(agent, "And in Rome?", history, stream=False)
    await _run(agent, "And in Oslo?", history, stream=True)
    assert seen and set(seen) == {0}
