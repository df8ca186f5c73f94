"""`kinegraph reproduce paper:table`: a table's reproducible arms as one sweep, then published vs measured.

The sweep is built in code from the table (one graph entry per distinct graph + options; the user's model
for every VLM arm, the paper's model being only a label) and written to OUT/sweep.yaml, so the same
runs can be resumed or extended with `kinegraph sweep`. Arms that share a graph and options share a run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kinegraph.atomic import write_atomic
from kinegraph.errors import UsageError
from kinegraph.graphs import graph_spec
from kinegraph.report.published import ArmResult, PublishedTable, write_published_report
from kinegraph.reproduce.catalog import NOT_HERE, Arm, PaperTable, papers
from kinegraph.run.sweep import SweepResult, run_sweep
from kinegraph.run.sweep_spec import SweepSpec, expand
from kinegraph.types import FAILED_STATUSES, RoleModel, Status

SWEEP_YAML = "sweep.yaml"


@dataclass
class Request:
    """What the user gave: model, data and where to write; the table supplies the rest."""

    out: Path
    data: str | None = None
    model: str | None = None
    base_url: str | None = None
    roles: dict[str, RoleModel] = field(default_factory=dict)  # model roles (e.g. Scene-CoT's answerer)
    model_options: dict[str, Any] = field(default_factory=dict)  # backend options, as `run --model-option`
    limit: int | None = None
    #: `--limit` counts groups per value of this key; None: the suite's strata (per task / category)
    limit_per: str | None = None
    subset: dict[str, list[str]] = field(default_factory=dict)  # as `run --subset`; over the table's own
    loader_options: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 8
    repeats: int = 1
    skip: tuple[str, ...] = ()
    use_ray: bool = False
    ray_address: str | None = None


def arm_key(arm: Arm) -> str:
    """Arms with the same key run once: graph and options."""
    return json.dumps([arm.graph, arm.options], sort_keys=True)


def runnable_arms(table: PaperTable, skip: tuple[str, ...]) -> list[Arm]:
    return [a for a in table.reproducible if a.graph not in skip]


def sweep_spec(table: PaperTable, request: Request, seed: int | None) -> SweepSpec:
    """The table's runnable arms as a sweep: one graph entry per distinct graph + options; `seed` (None:
    none sent, the graphs' own defaults) is the runs' seed (`RunConfig.seed`)."""
    arms = runnable_arms(table, request.skip)
    needs_model = any(graph_spec(a.graph).needs_model for a in arms if a.graph)
    if needs_model and not request.model:
        raise UsageError(f"{table.key} runs VLM graphs: pass --model PROVIDER:MODEL")
    if arms and not request.data:
        raise UsageError(f"{table.key} needs --data: the {table.benchmark} files to run on")
    entries = {arm_key(a): {"graph": a.graph, "options": a.options} for a in arms}
    run: dict[str, Any] = {"concurrency": request.concurrency}
    if seed is not None:
        run["seed"] = seed
    if request.repeats > 1:
        run["use_cache"] = False  # a repeat asks the model again; a cached answer would repeat the first
    bench = {
        "data": _absolute(request.data),
        "limit": request.limit,
        "limit_per": limit_per(table, request),
        "loader_options": {k: _absolute(v) for k, v in request.loader_options.items()},
        "subset": {**table.subset, **request.subset},
    }
    model = None
    if request.model:
        roles = {name: role.model_dump() for name, role in request.roles.items()}
        model = {
            "model": request.model,
            "base_url": request.base_url,
            "options": request.model_options,
            "roles": roles,
        }
    return SweepSpec.model_validate(
        {
            "benchmarks": {table.benchmark: bench},
            "graphs": list(entries.values()),
            "models": [model] if model and needs_model else [],
            "run": run,
        }
    )


def _absolute(value: Any) -> Any:
    """A path given relative to where the command runs, made absolute: OUT/sweep.yaml is read relative
    to OUT, so a relative `--data` (or loader option naming a file) would point into the output folder."""
    if isinstance(value, str) and value and Path(value).exists() and not Path(value).is_absolute():
        return str(Path(value).resolve())
    return value


def _check_keys(table: PaperTable, request: Request) -> None:
    """A `--subset` or `--limit-per` key the suite does not have is refused before any run starts."""
    from kinegraph.subsets import check_keys, check_limit_key
    from kinegraph.suites import suites

    keys = suites.get(table.benchmark).subset_keys
    check_keys({**table.subset, **request.subset}, keys, table.benchmark)
    if (key := limit_per(table, request)) is not None:
        check_limit_key(key, keys, table.benchmark)


def limit_per(table: PaperTable, request: Request) -> str | None:
    """The key a `--limit` is stratified over: the user's, else the suite's (None without a limit)."""
    from kinegraph.suites import suites

    if request.limit is None:
        return None
    return request.limit_per or suites.get(table.benchmark).strata


def repeat_seed(repeat: int, repeats: int) -> int | None:
    """The seed of repeat `repeat`: its number when the arms run several times (so each repeat asks
    genuinely different requests), else None (one run as the paper's setting: no seed sent)."""
    return repeat if repeats > 1 else None


def _repeat_dir(out: Path, repeat: int, repeats: int) -> Path:
    return out if repeats == 1 else out / f"repeat-{repeat}"


def reproduce(
    table: PaperTable, request: Request, announce: Callable[[str], None] = lambda line: None
) -> tuple[PublishedTable, list[SweepResult]]:
    """Run the table's arms (once per repeat), then write reproduce.md / .html beside the sweep."""
    if runnable_arms(table, request.skip):
        sweep_spec(table, request, None)  # a missing --model or --data is refused before anything runs
        _check_keys(table, request)
    for line in role_lines(table, request):
        if "the paper's is" in line:
            announce(f"{table.key}: {line}")
    for arm in table.arms:
        if arm.status == NOT_HERE:
            announce(f"{table.key}: {arm.label}: not reproducible here: {arm.reason}")
        elif arm.graph in request.skip:
            announce(f"{table.key}: {arm.label}: skipped (--skip {arm.graph})")
    results = []
    runs_of: dict[str, list[str]] = {}
    if runnable_arms(table, request.skip):
        for repeat in range(request.repeats):
            out = _repeat_dir(request.out, repeat, request.repeats)
            spec = sweep_spec(table, request, repeat_seed(repeat, request.repeats))
            out.mkdir(parents=True, exist_ok=True)
            sweep_file = out / SWEEP_YAML
            write_atomic(sweep_file, yaml.safe_dump(spec.model_dump(exclude_defaults=True), sort_keys=False))
            plans = expand(spec, out, sweep_file)
            for key, plan in zip(
                dict.fromkeys(map(arm_key, runnable_arms(table, request.skip))), plans, strict=True
            ):
                runs_of.setdefault(key, []).append(plan.config.out_dir)
            results.append(
                run_sweep(
                    sweep_file,
                    out,
                    use_ray=request.use_ray,
                    ray_address=request.ray_address,
                    show_progress=True,  # on stderr, like the announced lines
                    on_run=lambda plan: announce(f"{table.key}: running {plan.benchmark}/{plan.name}"),
                )
            )
    status = {r.out_dir: r for result in results for r in result.runs}
    published = PublishedTable(
        title=f"{table.key} · {table.title}",
        lines=_header_lines(table, request),
        columns=table.columns,
        arms=[_arm_result(table, arm, request, runs_of, status) for arm in table.arms],
    )
    write_published_report(published, request.out)
    return published, results


def _header_lines(table: PaperTable, request: Request) -> list[str]:
    paper = papers()[table.paper]
    lines = [
        f"Paper: {paper.title}",
        f"Numbers: {table.source.table}, lines {table.source.lines} of the paper's text ({paper.seed})",
        f"Benchmark: {table.benchmark}; data: {request.data}; limit: {_limit_line(table, request)}; "
        f"subset: {_subset_line(table, request)}",
        f"Model for every VLM arm: {request.model or 'none (VLM-free arms only)'}; the paper's model names "
        "are labels only",
    ]
    lines += role_lines(table, request)
    if request.repeats > 1:
        lines.append(
            f"Repeats: {request.repeats} (repeat k runs with seed k, 0..{request.repeats - 1}: the model's "
            "sampling seed where its provider takes one (openai, vllm, google; not anthropic), and the "
            "seed option of graphs that draw at random (frame order, few-shot exemplars) unless the arm "
            "sets it; no response cache)"
        )
    if table.unmapped:
        lines.append(f"Printed columns with no metric in the suite: {', '.join(table.unmapped)}")
    if table.notes:
        lines.append(table.notes)
    return lines


def role_lines(table: PaperTable, request: Request) -> list[str]:
    """Which model answers each paper-declared role of the runnable arms: `--role NAME` when given, else
    `--model`, said beside the paper's own (Scene-CoT's answerer is Qwen2.5-14B-Instruct-1M in TAD)."""
    lines = []
    for role, paper_model in table.roles.items():
        graphs = sorted(
            {
                a.graph
                for a in runnable_arms(table, request.skip)
                if a.graph and role in graph_spec(a.graph).model_roles
            }
        )
        if not graphs:
            continue
        where = ", ".join(graphs)
        if role in request.roles:
            lines.append(
                f"Model role {role} ({where}): {request.roles[role].model} (--role {role}); "
                f"the paper's: {paper_model}"
            )
        else:
            lines.append(
                f"Model role {role} ({where}): {request.model} (--model, no --role {role}); the paper's is "
                f"{paper_model}: pass --role {role}=PROVIDER:MODEL to run it as the paper did"
            )
    return lines


def _limit_line(table: PaperTable, request: Request) -> str:
    key = limit_per(table, request)
    if request.limit is None:
        return "none"
    return f"the first {request.limit} groups of each {key}" if key else f"the first {request.limit} samples"


def _subset_line(table: PaperTable, request: Request) -> str:
    subset = {**table.subset, **request.subset}
    text = " ".join(f"{k}={','.join(v)}" for k, v in subset.items()) or "all samples"
    if table.subset and all(request.subset.get(k, v) == v for k, v in table.subset.items()):
        text += " (the paper's)"
    return text


def _arm_result(
    table: PaperTable, arm: Arm, request: Request, runs_of: dict[str, list[str]], status: dict[str, Any]
) -> ArmResult:
    from kinegraph.report.runs import RunData

    result = ArmResult(label=arm.label, published=table.published(arm))
    if arm.status == NOT_HERE:
        result.note = f"not reproducible here: {arm.reason}"
        return result
    if arm.graph in request.skip:
        result.note = f"skipped (--skip {arm.graph})"
        return result
    dirs = runs_of.get(arm_key(arm), [])
    finished = [d for d in dirs if status[d].n_predictions > 0]
    failed = [status[d] for d in dirs if status[d].status == "failed"]
    if not finished:
        result.note = "failed: " + "; ".join(str(r.error) for r in failed) if failed else "no predictions"
        return result
    result.run = str(Path(finished[0]).relative_to(request.out))
    runs = [RunData.load(d) for d in finished]
    for data in runs:
        counts = Counter(str(p.status) for p in data.predictions)
        n = len(data.predictions)
        result.error_rate.append(sum(counts[str(s)] for s in FAILED_STATUSES) / n)
        result.coverage.append(counts[str(Status.ok)] / n)
    if not any(result.coverage):
        result.note = "no valid answer: " + _failures(runs[0])
        return result
    for data in runs:
        values = {**data.suite.breakdown(data.metrics), **data.suite.headline(data.metrics)}
        for key in result.published:
            result.measured.setdefault(key, []).append(metric_value(key, values, data.metrics))
    return result


def metric_value(key: str, values: dict[str, Any], metrics: dict[str, Any]) -> float | None:
    """A column's measured number: a headline or breakdown key, or a `/` path into metrics.json
    (`ego/mc_action`, `temporal/macro_f1`) for a printed number the suite computes but does not headline."""
    if "/" not in key:
        return values.get(key)
    found: Any = metrics
    for part in key.split("/"):
        found = found.get(part) if isinstance(found, dict) else None
    return float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None


def _failures(data: Any) -> str:
    """`graph_error 6/6 (first: <its error>)`: how a run's predictions ended, and the first error."""
    counts = Counter(str(p.status) for p in data.predictions)
    n = len(data.predictions)
    text = ", ".join(f"{status} {k}/{n}" for status, k in counts.most_common())
    first = next((p.error for p in data.predictions if p.error), None)
    return text + (f" (first: {first})" if first else "") + f"; run {data.path}"
