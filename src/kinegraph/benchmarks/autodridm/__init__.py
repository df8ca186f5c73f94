"""AutoDriDM's home: the loader and the synthetic world."""

from kinegraph.benchmarks.autodridm.loader import (
    BENCHMARK,
    HIGH_RISK_MIN_DANGER,
    MULTI_SELECT_TASKS,
    SOURCES,
    SYSTEM_PROMPT_MULTI,
    SYSTEM_PROMPT_SINGLE,
    TASKS,
    USER_TEMPLATE,
    load,
    load_task,
    parse_danger,
    parse_options,
    source_dataset,
    task_keys,
    user_prompt,
)

__all__ = [
    "BENCHMARK",
    "HIGH_RISK_MIN_DANGER",
    "MULTI_SELECT_TASKS",
    "SOURCES",
    "SYSTEM_PROMPT_MULTI",
    "SYSTEM_PROMPT_SINGLE",
    "TASKS",
    "USER_TEMPLATE",
    "load",
    "load_task",
    "parse_danger",
    "parse_options",
    "source_dataset",
    "task_keys",
    "user_prompt",
]
