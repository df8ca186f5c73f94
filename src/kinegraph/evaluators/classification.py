"""Label-classification metrics as EgoDyn-Bench's `evaluation/metrics.py` computes them.

Counts are taken once with Counters (upstream loops over the data once per class); the arithmetic on the
counts is the same, in the same class order, so every float comes out identical.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any


def _check_lengths(oracle: Sequence[str], pred: Sequence[str]) -> None:
    if len(oracle) != len(pred):
        raise ValueError(f"oracle and pred must have the same length, got {len(oracle)} vs {len(pred)}")


def _classes(oracle: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None) -> list[str]:
    return list(labels) if labels is not None else sorted(set(oracle) | set(pred))


def accuracy(oracle: Sequence[str], pred: Sequence[str]) -> float:
    """Fraction of exact matches; 0.0 for no data."""
    _check_lengths(oracle, pred)
    if not oracle:
        return 0.0
    return sum(o == p for o, p in zip(oracle, pred, strict=True)) / len(oracle)


def _counts(oracle: Sequence[str], pred: Sequence[str]) -> tuple[Counter, Counter, Counter]:
    tp: Counter = Counter(o for o, p in zip(oracle, pred, strict=True) if o == p)
    return tp, Counter(oracle), Counter(pred)


def balanced_accuracy(
    oracle: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None = None
) -> float:
    """Mean recall over the classes with ground-truth support (zero-support classes are skipped)."""
    _check_lengths(oracle, pred)
    classes = _classes(oracle, pred, labels)
    tp, support, _ = _counts(oracle, pred)
    recalls = [tp[c] / support[c] for c in classes if support[c] > 0]
    return sum(recalls) / len(recalls) if recalls else 0.0


def macro_f1(oracle: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None = None) -> float:
    """Mean F1 over every class of the class set; a class with precision + recall = 0 scores 0."""
    _check_lengths(oracle, pred)
    classes = _classes(oracle, pred, labels)
    if not classes:
        return 0.0
    tp, support, predicted = _counts(oracle, pred)
    f1s = []
    for c in classes:
        precision = tp[c] / predicted[c] if predicted[c] > 0 else 0.0
        recall = tp[c] / support[c] if support[c] > 0 else 0.0
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0)
    return sum(f1s) / len(f1s)


def confusion_matrix(
    oracle: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None = None
) -> dict[str, Any]:
    """`{"labels": [...], "matrix": m}` with m[i][j] = #(oracle == labels[i] and pred == labels[j])."""
    _check_lengths(oracle, pred)
    classes = _classes(oracle, pred, labels)
    index = {label: i for i, label in enumerate(classes)}
    matrix = [[0] * len(classes) for _ in classes]
    for o, p in zip(oracle, pred, strict=True):
        i, j = index.get(o), index.get(p)
        if i is not None and j is not None:
            matrix[i][j] += 1
    return {"labels": classes, "matrix": matrix}


def group_metrics(
    oracle: Sequence[str], pred: Sequence[str], labels: Sequence[str] | None = None, ndigits: int = 4
) -> dict[str, Any]:
    """accuracy, balanced_acc, macro_f1 (rounded) and n for one group of records."""
    return {
        "accuracy": round(accuracy(oracle, pred), ndigits),
        "balanced_acc": round(balanced_accuracy(oracle, pred, labels), ndigits),
        "macro_f1": round(macro_f1(oracle, pred, labels), ndigits),
        "n": len(oracle),
    }
