"""Coverage (answered / asked) of a run, overall and per breakdown item, written beside every score."""

from __future__ import annotations

from collections.abc import Sequence

from kinegraph.types import Prediction, Status


def answered(prediction: Prediction) -> bool:
    """The sample got a scored answer: the call succeeded and an answer was parsed."""
    return prediction.status == Status.ok and prediction.answer is not None


def coverage(predictions: Sequence[Prediction]) -> str:
    """`answered/asked (share)`: how many samples got a scored answer, beside every score (a graph that
    skips questions it cannot measure is scored on fewer than it was asked)."""
    asked = len(predictions)
    done = sum(map(answered, predictions))
    return f"{done}/{asked} ({done / asked:.0%})" if asked else "0/0"


def item_names_of(prediction: Prediction) -> set[str]:
    """The breakdown items a prediction can count under: its question id, its metadata's text values
    (task, category, ...) and `"<scenario_group>: <scenario>"` (STSBench's per-scenario keys)."""
    meta = prediction.metadata
    names = {str(v) for v in meta.values() if isinstance(v, str)}
    if prediction.question_id:
        names.add(prediction.question_id)
    if "scenario_group" in meta and "scenario" in meta:
        names.add(f"{meta['scenario_group']}: {meta['scenario']}")
    return names


def item_coverage(predictions: Sequence[Prediction], items: Sequence[str]) -> dict[str, str]:
    """Per item: `answered/asked` over the predictions that count under it; "?/?" when none names it."""
    counts = {item: [0, 0] for item in items}
    for p in predictions:
        for name in item_names_of(p) & counts.keys():
            counts[name][0] += answered(p)
            counts[name][1] += 1
    return {item: f"{done}/{asked}" if asked else "?/?" for item, (done, asked) in counts.items()}
