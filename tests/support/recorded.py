"""The real recorded exchanges in `tests/recorded/` (see its README), loaded once per file."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml

RECORDED = Path(__file__).parent.parent / "recorded"


@functools.cache
def _load(name: str) -> str:
    return (RECORDED / name).read_text(encoding="utf-8")


def interactions(name: str) -> list[dict[str, Any]]:
    """The interactions of one recording (a fresh copy: tests may change it)."""
    return yaml.safe_load(_load(name))["interactions"]


def request_body(interaction: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of an interaction's request."""
    request = interaction["request"]
    return request["parsed_body"] if "parsed_body" in request else json.loads(request["body"])
