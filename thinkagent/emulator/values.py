"""Typed access to decoded JSON values (request bodies, JSON schemas)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["as_list", "as_mapping", "list_or_none", "mapping_or_none"]


def mapping_or_none(value: Any) -> Mapping[str, Any] | None:
    """``value`` as a JSON object, or ``None`` if it is not one."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` as a JSON object (empty if it is not one)."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` as a JSON array (empty if it is not one)."""
    return cast("list[Any]", value) if isinstance(value, list) else []


def list_or_none(value: Any) -> list[Any] | None:
    """``value`` as a JSON array, or ``None`` if it is not one."""
    return cast("list[Any]", value) if isinstance(value, list) else None
