"""Tools from plain functions: schema from hints and docstrings, validation before the call."""

from __future__ import annotations

import asyncio
import functools
import threading
from enum import Enum
from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from thinkagent import Tool, ToolError
from thinkagent.tools import ToolTimedOut


class Unit(Enum):
    C = "celsius"
    F = "fahrenheit"


class Place(BaseModel):
    city: str
    country: str | None = None


def forecast(
    place: Place, days: int = 1, unit: Unit = Unit.C, detail: Literal["short", "long"] = "short"
) -> dict[str, object]:
    """Forecast the weather.

    Looks the place up first.

    Args:
        place: Where to forecast.
        days: How many days ahead,
            counting today.
        unit: Temperature unit.
        detail: How much to say.

    Returns:
        The forecast.
    """
    return {"city": place.city, "days": days, "unit": unit.value, "detail": detail}


def test_schema_from_type_hints_and_google_docstring() -> None:
    definition = Tool(forecast).definition
    assert definition.name == "forecast"
    assert definition.description == "Forecast the weather.\n\nLooks the place up first."
    params = definition.parameters
    assert params["type"] == "object"
    assert params["required"] == ["place"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert props["days"] == {
        "default": 1,
        "description": "How many days ahead, counting today.",
        "type": "integer",
    }
    assert props["detail"]["enum"] == ["short", "long"]
    assert props["place"]["description"] == "Where to forecast."
    assert "title" not in str(params.get("$defs", {}).get("Place", {}).keys())


def test_sphinx_docstrings_and_overrides() -> None:
    def add(a: int, b: int) -> int:
        """Add numbers.

        :param a: first
        :param b: second
        """
        return a + b

    tool = Tool(add, name="plus", description="Adds.")
    assert (tool.name, tool.description) == ("plus", "Adds.")
    assert tool.definition.parameters["properties"]["a"]["description"] == "first"
    assert Tool(add).description == "Add numbers."


async def test_arguments_are_validated_and_coerced() -> None:
    tool = Tool(forecast)
    result = await tool.call({"place": {"city": "Oslo"}, "days": "3", "unit": "fahrenheit"})
    assert result == {"city": "Oslo", "days": 3, "unit": "fahrenheit", "detail": "short"}
    with pytest.raises(ValidationError):
        await tool.call({"place": {"city": "Oslo"}, "bogus": 1})
    with pytest.raises(ValidationError):
        await tool.call({})


async def test_sync_tools_run_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()

    def where() -> bool:
        return threading.get_ident() != loop_thread

    assert await Tool(where).call({}) is True


async def test_async_tools_and_timeouts() -> None:
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    with pytest.raises(ToolTimedOut, match=r"timed out after 0\.01 seconds"):
        await Tool(slow, timeout=0.01).call({})
    assert asyncio.all_tasks() == {asyncio.current_task()}  # the late call was cancelled


def test_unsupported_signatures_are_refused() -> None:
    def star(*args: int) -> int:
        return 0

    with pytest.raises(ToolError, match="parameter 'args'"):
        Tool(star)
    with pytest.raises(ToolError, match="negative"):
        Tool(forecast, max_retries=-1)


async def test_results_become_json() -> None:
    class Out(BaseModel):
        value: int

    def make() -> Out:
        return Out(value=3)

    assert await Tool(make).call({}) == {"value": 3}


def test_partial_functions_keep_their_name_docs_and_types() -> None:
    def scale(value: float, factor: int) -> float:
        """Scale a value.

        Args:
            value: The number to scale.
            factor: The multiplier.
        """
        return value * factor

    tool = Tool(functools.partial(scale, factor=3))
    assert (tool.name, tool.description) == ("scale", "Scale a value.")
    assert tool.definition.parameters["properties"]["value"] == {
        "description": "The number to scale.",
        "type": "number",
    }
    assert "factor" in tool.definition.parameters["properties"]  # still settable, default 3


async def test_unencodable_text_in_results_is_mended() -> None:
    def lone_surrogate() -> dict[str, str]:
        return {"text": "bad \ud800 char"}

    result = await Tool(lone_surrogate).call({})
    assert result == {"text": "bad ? char"}
