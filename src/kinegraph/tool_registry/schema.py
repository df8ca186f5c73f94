"""JSON schemas of tool functions, derived from their signatures and docstrings.

A parameter's JSON type comes from its annotation (float, int, str, bool, Literal[...], list[...],
`X | None`), its description from the docstring's `Args:` block; a parameter with a default is optional.
Units belong in the names (`focal_px`, `camera_height_m`), so the schema carries them to the model.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union

_SCALARS: dict[type, str] = {float: "number", int: "integer", str: "string", bool: "boolean"}
_ARG_LINE = re.compile(r"^ {4}(?P<name>\w+):\s*(?P<text>.*)$")


def docstring_parts(func: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a docstring whose `Args:` block lists parameters."""
    doc = inspect.getdoc(func) or ""
    head, _, args = doc.partition("\nArgs:\n")
    described: dict[str, str] = {}
    current = ""
    for line in args.splitlines():
        match = _ARG_LINE.match(line)
        if match:
            current = match["name"]
            described[current] = match["text"].strip()
        elif current and line.strip():
            described[current] += " " + line.strip()
    return " ".join(head.split()), described


def type_schema(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON schema of one annotation; ValueError for a type a JSON argument cannot carry."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        values = list(typing.get_args(annotation))
        return {"type": _SCALARS[type(values[0])], "enum": values}
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(inner) != 1:
            raise ValueError(f"{where}: only `X | None` unions are supported, got {annotation}")
        return type_schema(inner[0], where)
    if origin in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        if not args:
            raise ValueError(f"{where}: say what the list holds, got {annotation}")
        schema: dict[str, Any] = {"type": "array", "items": type_schema(args[0], where)}
        if origin is tuple and Ellipsis not in typing.get_args(annotation):
            schema["minItems"] = schema["maxItems"] = len(args)
        return schema
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    raise ValueError(f"{where}: {annotation!r} cannot be a JSON argument")


def function_schema(func: Callable[..., Any], skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The JSON schema (an object of named arguments) of `func`'s parameters other than `skip`."""
    hints = typing.get_type_hints(func)
    _, described = docstring_parts(func)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, parameter in inspect.signature(func).parameters.items():
        if name in skip:
            continue
        where = f"{func.__name__}({name})"
        schema = type_schema(hints[name], where)
        if name not in described:
            raise ValueError(f"{where}: the docstring's Args: block does not describe it")
        schema["description"] = described[name]
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif parameter.default is not None:
            schema["default"] = parameter.default
        properties[name] = schema
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def argument_errors(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """What is wrong with `arguments` for a JSON schema's object subset (properties, required, enum, type,
    additionalProperties: false); empty when they fit."""
    if not isinstance(arguments, dict):
        return ["arguments must be a JSON object"]
    if "_unparsed" in arguments and "_unparsed" not in schema.get("properties", {}):
        return [
            f"arguments are not a JSON object: {arguments['_unparsed']!r}"
        ]  # as the wire parsers mark them
    properties: Mapping[str, Any] = schema.get("properties", {})
    errors = [f"missing required argument {k!r}" for k in schema.get("required", []) if k not in arguments]
    for key, value in arguments.items():
        spec = properties.get(key)
        if spec is None:
            if schema.get("additionalProperties", True) is False:
                errors.append(f"unexpected argument {key!r} (accepted: {sorted(properties) or 'none'})")
            continue
        wanted = _JSON_TYPES.get(spec.get("type", ""))
        bad_bool = isinstance(value, bool) and spec.get("type") in ("integer", "number")
        if wanted is not None and (not isinstance(value, wanted) or bad_bool):
            errors.append(f"argument {key!r} must be of type {spec['type']}, got {value!r}")
        elif "enum" in spec and value not in spec["enum"]:
            errors.append(f"argument {key!r} must be one of {spec['enum']}, got {value!r}")
    return errors
