"""The deterministic reasoning policy, provider-neutral."""

from __future__ import annotations

import json
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkagent.emulator.brain import MAGIC_REDACTED_PROMPT, MAX_DEPTH, MAX_ITEMS, plan, subjects
from thinkagent.emulator.model import (
    Call,
    CallResult,
    Conversation,
    Media,
    Settings,
    ToolSpec,
    Turn,
)

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
STOCKS = ToolSpec(
    "stock_price",
    "Latest price of a stock ticker.",
    {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
)
THINK = Settings(thinking=True)


def ask(question: str, *tools: ToolSpec, settings: Settings = THINK) -> Any:
    return plan(Conversation(turns=(Turn("user", question),), tools=tools), settings)


def answer_loop(question: str, *tools: ToolSpec, settings: Settings = THINK) -> list[Any]:
    """Run the loop to the end, answering every call with "ok <name>"."""
    turns: list[Turn] = [Turn("user", question)]
    replies = []
    for step in range(10):
        reply = plan(Conversation(turns=tuple(turns), tools=tools), settings)
        replies.append(reply)
        if not reply.tool_calls:
            return replies
        calls = tuple(
            Call(f"c{step}-{i}", c.name, c.arguments) for i, c in enumerate(reply.tool_calls)
        )
        turns.append(Turn("assistant", text=reply.text, thinking=reply.thinking or "", calls=calls))
        turns.append(Turn("user", results=tuple(CallResult(c.id, f"ok {c.name}") for c in calls)))
    raise AssertionError("the loop did not end")


def test_subjects() -> None:
    assert subjects("What's the weather in Paris and in London?") == ["Paris", "London"]
    assert subjects("Tell me about New York, please.") == ["New York"]
    assert subjects("What is the largest city in the user country?") == []
    assert subjects("Now do Lyon too.") == ["Lyon"]
    assert subjects(MAGIC_REDACTED_PROMPT) == []


def test_matching_tools_in_offered_order_then_answer() -> None:
    replies = answer_loop(
        "What's the weather at ACME headquarters, and its stock price?", STOCKS, WEATHER
    )
    assert [[(c.name, dict(c.arguments)) for c in r.tool_calls] for r in replies] == [
        [("stock_price", {"ticker": "ACME"})],
        [("get_weather", {"city": "ACME"})],
        [],
    ]
    final = replies[-1]
    assert final.stop == "end_turn"
    assert "ok stock_price" in final.text
    assert "ok get_weather" in final.text
    assert "ok get_weather" in (final.thinking or "")


def test_unmatched_question_calls_the_first_tool_it_can_fill_and_no_tools_answers() -> None:
    assert [c.name for c in ask("And ACME?", STOCKS, WEATHER).tool_calls] == ["stock_price"]
    assert ask("Hello!", STOCKS, WEATHER).tool_calls == ()  # nothing to fill a ticker with
    direct = ask("Hello!")
    assert direct.tool_calls == ()
    assert "Hello!" in direct.text
    assert direct.stop == "end_turn"
    assert ask("Weather in Paris?", WEATHER, settings=Settings(tool_choice="none")).tool_calls == ()


def test_parallel_calls_and_their_opt_out() -> None:
    reply = ask("Weather in Paris and in London?", WEATHER)
    assert [c.arguments for c in reply.tool_calls] == [{"city": "Paris"}, {"city": "London"}]
    single = ask(
        "Weather in Paris and in London?", WEATHER, settings=Settings(parallel_tool_calls=False)
    )
    assert [c.arguments for c in single.tool_calls] == [{"city": "Paris"}]


def test_forced_choices() -> None:
    forced = ask(
        "Hello!", STOCKS, WEATHER, settings=Settings(tool_choice="tool", tool_name="get_weather")
    )
    assert [c.name for c in forced.tool_calls] == ["get_weather"]
    done = (
        Turn("user", "Weather in Paris?"),
        Turn("assistant", calls=(Call("c1", "get_weather", {"city": "Paris"}),)),
        Turn("user", results=(CallResult("c1", "sunny"),)),
    )
    conversation = Conversation(turns=done, tools=(WEATHER,))
    assert plan(conversation, Settings()).tool_calls == ()  # every planned tool was called: answer
    assert [c.name for c in plan(conversation, Settings(tool_choice="any")).tool_calls] == [
        "get_weather"
    ]


def test_arguments_follow_the_schema() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "$defs": {
            "Point": {
                "type": "object",
                "properties": {"lat": {"type": "number"}},
                "required": ["lat"],
            }
        },
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "verbose": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "where": {"$ref": "#/$defs/Point"},
            "note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 5}]},
            "when": {"type": "string", "format": "date"},
            "kind": {"const": "forecast"},
            "limit": {"type": "integer", "default": 3},
            "optional": {"type": "string"},
        },
        "required": [
            "city",
            "unit",
            "days",
            "verbose",
            "tags",
            "where",
            "note",
            "when",
            "kind",
            "limit",
        ],
    }
    tool = ToolSpec("forecast", "Weather forecast", schema)
    forced = Settings(thinking=True, tool_choice="any")  # a forced call fills the date anyway
    question = "Forecast for Paris over 12 days in fahrenheit"
    args = ask(question, tool, settings=forced).tool_calls[0].arguments
    assert args == {
        "city": "Paris",
        "unit": "fahrenheit",
        "days": 7,
        "verbose": True,
        "tags": ["Paris", "Paris"],
        "where": {"lat": 12},
        "note": "Paris",
        "when": "2025-01-01",
        "kind": "forecast",
        "limit": 3,
    }


def _tool(name: str, description: str, **properties: dict[str, Any]) -> ToolSpec:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return ToolSpec(name, description, schema)


REFUND = _tool("refund", "Refund an order.", order_id={"type": "string"})
DELETE = _tool("delete_file", "Delete a file.", path={"type": "string"})
LIST = _tool("list_files", "List the files.")


def calls(question: str, *tools: ToolSpec) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments)) for c in ask(question, *tools).tool_calls]


def test_the_emulator_makes_up_no_argument_a_tool_that_cannot_be_filled_is_not_called() -> None:
    # the startling answers of issue 26: refund(order_id='Where is my order?'),
    # delete_file(path='Clean')
    where = ask("Where is my order?", REFUND)
    assert where.tool_calls == ()
    assert where.text == "To answer that I need the order_id for refund. Could you tell me?"
    assert "will not make it up" in (where.thinking or "")
    assert calls("Clean up the old files.", DELETE, LIST) == [("list_files", {})]
    assert subjects("Clean up the old files.") == []  # an opening verb is not a name


def test_an_argument_named_like_a_word_before_an_entity_of_the_question_is_filled() -> None:
    assert calls("Refund order A-1042, please.", REFUND) == [("refund", {"order_id": "A-1042"})]
    assert calls("Refund order number 42", REFUND) == [("refund", {"order_id": "42"})]
    assert calls("Delete the file notes.txt.", DELETE, LIST) == [
        ("delete_file", {"path": "notes.txt"})
    ]
    assert calls("Delete 'old.log'", DELETE) == [("delete_file", {"path": "old.log"})]


def test_an_id_ending_in_one_digit_is_an_entity() -> None:
    # "order A-7" was not read: the entity needed a character after its last digit, so the
    # number after "Refund" was taken instead
    amount = _tool(
        "refund", "Refund an order.", order={"type": "string"}, amount={"type": "number"}
    )
    assert calls("Refund 20 on order A-7.", amount) == [("refund", {"order": "A-7", "amount": 20})]
    assert calls("Refund order 7", REFUND) == [("refund", {"order_id": "7"})]
    assert calls("Refund order ., please", REFUND) == []  # punctuation alone is no entity


def test_the_instructions_fill_arguments_only_when_they_speak_of_the_tool() -> None:
    # "Summarise the ticket." on an agent whose instructions say "answer in JSON" called
    # get_weather(city='JSON'): a name of the instructions is no city
    def turn(system: str, question: str) -> list[tuple[str, dict[str, Any]]]:
        conversation = Conversation(
            system=system, turns=(Turn("user", question),), tools=(WEATHER,)
        )
        return [(c.name, dict(c.arguments)) for c in plan(conversation, THINK).tool_calls]

    assert turn("Be brief. Answer in JSON, as Safari shows it.", "Summarise the ticket.") == []
    assert turn("Look up the weather in Paris.", "Please go ahead.") == [
        ("get_weather", {"city": "Paris"})
    ]


def test_values_the_question_writes_or_the_schema_gives_are_sensible() -> None:
    book = _tool(
        "book_table",
        "Book a table.",
        day={"type": "string", "format": "date"},
        guests={"type": "integer", "examples": [2]},
        seating={"type": "string", "enum": ["inside", "terrace"]},
    )
    assert calls("Book a table on 2026-05-01 on the terrace.", book) == [
        ("book_table", {"day": "2026-05-01", "guests": 2, "seating": "terrace"})
    ]
    assert calls("Book a table for tomorrow.", book) == []  # no date written: none made up
    price = _tool("check_price", "Check a price.", amount={"type": "number"})
    assert calls("Check the price $0.05.", price) == [("check_price", {"amount": 0.05})]
    assert calls("Check the price.", price) == []
    mail = _tool("send_mail", "Send an e-mail.", to={"type": "string", "format": "email"})
    assert calls("Send a mail to ada@example.org", mail) == [
        ("send_mail", {"to": "ada@example.org"})
    ]


def test_a_forced_tool_choice_still_calls_a_tool_that_cannot_be_filled() -> None:
    forced = Settings(thinking=True, tool_choice="tool", tool_name="refund")
    reply = ask("Where is my order?", REFUND, settings=forced)
    assert [c.name for c in reply.tool_calls] == ["refund"]


def _depth(value: Any) -> int:
    if isinstance(value, list) and value:
        return 1 + max(_depth(v) for v in value)
    if isinstance(value, dict) and value:
        return 1 + max(_depth(v) for v in value.values())
    return 1 if isinstance(value, (list, dict)) else 0


def test_pathological_schemas_are_bounded() -> None:
    recursive_array = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/y"}},
        "required": ["x"],
        "$defs": {"y": {"type": "array", "items": {"$ref": "#/$defs/y"}}},
    }
    wide_all_of = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
        "required": ["x"],
        "$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}] * 10}},
    }
    huge = {
        "type": "object",
        "properties": {
            "x": {
                "type": "array",
                "minItems": 3_000_000,
                "items": {"type": "array", "minItems": 1000, "items": {"type": "string"}},
            }
        },
        "required": ["x"],
    }
    for schema in (recursive_array, wide_all_of, huge):
        started = time.monotonic()
        reply = ask("Go.", ToolSpec("go", "Go.", schema))
        assert time.monotonic() - started < 0.5
        arguments = reply.tool_calls[0].arguments
        assert _depth(arguments) <= MAX_DEPTH + 2
    assert len(arguments["x"]) == MAX_ITEMS
    assert ask("Go.", ToolSpec("go", "Go.", recursive_array)).tool_calls[0].arguments["x"]


def test_several_name_slots_take_the_subjects_in_order() -> None:
    flights = ToolSpec(
        "find_flights",
        "Flights between two cities",
        {
            "type": "object",
            "properties": {
                "origin": {"type": "string"},
                "destination": {"type": "string"},
                "query": {"type": "string"},
            },
            "required": ["origin", "destination", "query"],
        },
    )
    args = ask("Flights from Paris to Tokyo?", flights).tool_calls[0].arguments
    assert args == {
        "origin": "Paris",
        "destination": "Tokyo",
        "query": "Flights from Paris to Tokyo?",
    }


def test_thinking_effort_interleaving_and_redaction() -> None:
    assert ask("Weather in Paris?", WEATHER, settings=Settings()).thinking is None
    low = (
        ask("Weather in Paris?", WEATHER, settings=Settings(thinking=True, effort="low")).thinking
        or ""
    )
    high = (
        ask("Weather in Paris?", WEATHER, settings=Settings(thinking=True, effort="max")).thinking
        or ""
    )
    assert '"Weather in Paris?"' in low
    assert len(low) < len(high)
    non_interleaved = answer_loop(
        "Weather in Paris?", WEATHER, settings=Settings(thinking=True, interleaved=False)
    )
    assert [r.thinking is not None for r in non_interleaved] == [True, False]
    assert ask(MAGIC_REDACTED_PROMPT).redacted
    assert not ask(MAGIC_REDACTED_PROMPT, settings=Settings()).redacted
    # Anywhere in the user's text: the follow-up turn is redacted too.
    triggered = ask(MAGIC_REDACTED_PROMPT)
    follow_up = Conversation(
        turns=(
            Turn("user", MAGIC_REDACTED_PROMPT),
            Turn("assistant", text=triggered.text),
            Turn("user", "What was that?"),
        )
    )
    assert plan(follow_up, THINK).redacted
    assert "What was that?" in plan(follow_up, THINK).text


def test_usage_and_max_tokens() -> None:
    reply = ask("Weather in Paris?", WEATHER)
    assert reply.usage is not None
    assert reply.usage.output_tokens > reply.usage.thinking_tokens > 0
    longer = ask("Weather in Paris? " * 50, WEATHER)
    assert longer.usage is not None
    assert longer.usage.input_tokens > reply.usage.input_tokens
    cut = ask("Hello " * 200, settings=Settings(max_tokens=20))
    assert cut.stop == "max_tokens"
    assert cut.usage is not None
    assert cut.usage.output_tokens == 20


@settings(max_examples=50, deadline=None)
@given(question=st.text(max_size=200), thinking=st.booleans())
def test_deterministic_for_any_question(question: str, thinking: bool) -> None:
    settings_ = Settings(thinking=thinking)
    assert ask(question, WEATHER, STOCKS, settings=settings_) == ask(
        question, WEATHER, STOCKS, settings=settings_
    )


WEATHER_REPORT = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "temperature_c": {"type": "number"},
        "conditions": {"type": "string"},
    },
    "required": ["city", "temperature_c", "conditions"],
}


def test_images_and_documents_are_seen_with_their_sizes() -> None:
    media = (Media("image", "image/png", size=1234), Media("document", "application/pdf", 5678))
    reply = plan(Conversation(turns=(Turn("user", "What is in these?", media=media),)), Settings())
    assert "image (image/png, 1234 bytes)" in reply.text
    assert "document (application/pdf, 5678 bytes)" in reply.text


def test_a_response_schema_makes_the_answer_json_valid_for_it() -> None:
    weather = WEATHER
    first = Turn("user", "What's the weather in Paris?")
    call = Call("c1", "get_weather", {"city": "Paris"})
    turns = (
        first,
        Turn("assistant", calls=(call,)),
        Turn("user", results=(CallResult("c1", "sunny, 21 C"),)),
    )
    reply = plan(
        Conversation(turns=turns, tools=(weather,)), Settings(response_schema=WEATHER_REPORT)
    )
    assert json.loads(reply.text) == {"city": "Paris", "temperature_c": 21, "conditions": "Paris"}


def test_the_tool_the_instructions_name_for_the_final_answer_is_called_last() -> None:
    weather = WEATHER
    final = ToolSpec("final_result", "The final answer.", WEATHER_REPORT)
    system = "Be brief. Give your final answer by calling the `final_result` tool."
    first = Turn("user", "What's the weather in Paris?")
    conversation = Conversation(system, (first,), (weather, final))
    assert [c.name for c in plan(conversation, Settings()).tool_calls] == ["get_weather"]
    call = Call("c1", "get_weather", {"city": "Paris"})
    turns = (
        first,
        Turn("assistant", calls=(call,)),
        Turn("user", results=(CallResult("c1", "21 C"),)),
    )
    (answer,) = plan(Conversation(system, turns, (weather, final)), Settings()).tool_calls
    assert answer.name == "final_result"
    assert answer.arguments == {"city": "Paris", "temperature_c": 21, "conditions": "Paris"}
    refused = Call("c2", "final_result", answer.arguments)
    retry = (
        *turns,
        Turn("assistant", calls=(refused,)),
        Turn("user", results=(CallResult("c2", "bad", True),)),
    )
    again = plan(Conversation(system, retry, (weather, final)), Settings(thinking=True))
    assert [c.name for c in again.tool_calls] == ["final_result"]
    assert again.thinking is not None and "was refused" in again.thinking
