"""Model roles from the command line: `--role NAME=PROVIDER:MODEL` and `--role-option NAME.key=value`.

A graph declares the roles it asks (`GraphSpec.model_roles`); `--model` fills every role a run does not
name. `base_url` sets a role's server; any other key is a backend option of that role only (as
`--model-option` is of `--model`'s).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kinegraph.errors import UsageError
from kinegraph.types import RoleModel


def _value(text: str) -> Any:
    """JSON when it parses (numbers, true/false, lists), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_roles(roles: Sequence[str] = (), options: Sequence[str] = ()) -> dict[str, RoleModel]:
    """`["answerer=vllm:qwen"]`, `["answerer.base_url=http://..."]` -> {"answerer": RoleModel(...)};
    a malformed pair, a role named twice, or an option for a role not named is a UsageError in one line."""
    named: dict[str, dict[str, Any]] = {}
    for pair in roles:
        name, sep, model = pair.partition("=")
        if not sep or not name.strip() or ":" not in model:
            raise UsageError(f"--role expects NAME=PROVIDER:MODEL, got {pair!r}")
        if name in named:
            raise UsageError(f"--role {name} is given twice")
        named[name] = {"model": model, "options": {}}
    for pair in options:
        key, sep, value = pair.partition("=")
        name, dot, option = key.partition(".")
        if not sep or not dot or not name or not option:
            raise UsageError(f"--role-option expects NAME.key=value, got {pair!r}")
        if name not in named:
            raise UsageError(f"--role-option {key}: no --role {name}=PROVIDER:MODEL to apply it to")
        if option == "base_url":
            named[name]["base_url"] = value
        else:
            named[name]["options"][option] = _value(value)
    return {name: RoleModel(**fields) for name, fields in named.items()}
