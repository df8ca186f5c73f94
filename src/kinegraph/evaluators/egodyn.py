"""EgoDyn-Bench answer parser and metric dict, as upstream `evaluation/{parsers,metrics}.py`.

Three stages: `parse_answer` (free text -> canonical label), `score_record` (one prediction record ->
oracle/pred pair or unparsed), `aggregate` (global, temporal, per-category, per-question with confusion
matrices, per-source, consistency). Keys and 4-decimal rounding are upstream's.
Upstream excludes unparsed answers from every metric (they only lower `parsable_coverage`); the paper
says they count as wrong. `penalize_unparsed=True` is that non-official variant.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from kinegraph.benchmarks.egodyn.loader import source_of
from kinegraph.benchmarks.egodyn.questions import EgoDynQuestion, load_question_bank
from kinegraph.errors import DataError
from kinegraph.evaluators.classification import confusion_matrix, group_metrics
from kinegraph.evaluators.egodyn_consistency import compute_consistency
from kinegraph.jsonfiles import read_jsonl

UNPARSED = "<unparsed>"  # label of an unparsed answer under the non-official penalize_unparsed mode

_STRIP_MARKUP = re.compile(r"[*`]")
_WHITESPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def normalize_text(raw: str) -> str:
    """Lowercase, strip, drop `*` and backticks, collapse whitespace, strip trailing `.,;:!?`."""
    text = _STRIP_MARKUP.sub("", raw.lower().strip())
    return _WHITESPACE.sub(" ", text).rstrip(".,;:!?")


def normalize_numeric(value: str) -> str:
    """`"42.0"` and `"42"` compare equal: format with `:g`; non-numbers pass through."""
    try:
        return f"{float(value):g}"
    except (ValueError, OverflowError):
        return value


def _exact_or_underscore(norm: str, choices: Sequence[str]) -> str | None:
    """Stages 1-2: exact match, then `first half` <-> `first_half` equivalence."""
    if norm in choices:
        return norm
    for choice in choices:
        if "_" in choice and choice.replace("_", " ") == norm:
            return choice
        if " " in choice and choice.replace(" ", "_") == norm:
            return choice
    return None


@functools.lru_cache(maxsize=256)
def _word_patterns(choices: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(choice, whole-word pattern) pairs, longest choice first, `a_b` also as `a b`; compiled once."""
    pairs = []
    for choice in sorted(choices, key=len, reverse=True):
        variants = [choice, choice.replace("_", " ")] if "_" in choice else [choice]
        pairs += [(choice, re.compile(r"\b" + re.escape(variant) + r"\b")) for variant in variants]
    return tuple(pairs)


def _substring_match(norm: str, choices: Sequence[str]) -> str | None:
    """Stage 4: whole-word match, longest choice first (`no_peak` before `no`; `no` not in `cannot`)."""
    for choice, pattern in _word_patterns(tuple(choices)):
        if pattern.search(norm):
            return choice
    return None


def _last_line(text: str) -> str | None:
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip()
    return None


def parse_answer(model_answer: str | None, choices: Sequence[str] | None, answer_type: str) -> str | None:
    """Map a model's free text to a canonical label, or None when it cannot be parsed."""
    if not model_answer or not model_answer.strip():
        return None
    if answer_type == "numeric":
        match = _NUMBER.search(model_answer)
        return normalize_numeric(match.group(0)) if match else None
    if choices is None:
        return None
    norm = normalize_text(model_answer)
    label = _exact_or_underscore(norm, choices)
    if label is not None:
        return label
    last = _last_line(model_answer)
    if last:
        last_norm = normalize_text(last)
        label = _exact_or_underscore(last_norm, choices) or _substring_match(last_norm, choices)
        if label is not None:
            return label
    return _substring_match(norm, choices)


class ScoredRecord(NamedTuple):
    """A parsed record: the fields every aggregate groups by."""

    clip_id: str
    question_id: str
    category: str
    oracle: str
    pred: str


def score_record(
    record: Mapping[str, Any], bank: Mapping[str, EgoDynQuestion], penalize_unparsed: bool = False
) -> ScoredRecord | None:
    """Parse one upstream-format record; None when upstream counts it as unparsed.

    Missing clip_id/question_id/oracle and unknown question ids count as unparsed, as upstream.
    """
    qid, clip_id = record.get("question_id"), record.get("clip_id")
    if qid is None or clip_id is None:
        return None
    oracle_raw = record.get("oracle_label", record.get("answer"))
    if oracle_raw is None:
        return None
    question = bank.get(qid)
    if question is None:
        return None
    oracle = str(oracle_raw).lower().strip()
    if question.answer_type == "numeric":
        oracle = normalize_numeric(oracle)
    # Upstream reads the category from the record, not from the question bank; kept for parity.
    category = record.get("category", "unknown")
    pred = parse_answer(record.get("model_answer", ""), question.choices, question.answer_type)
    if pred is None:
        if not penalize_unparsed:
            return None
        pred = UNPARSED
    return ScoredRecord(str(clip_id), qid, category, oracle, pred)


def aggregate(
    scored: Sequence[ScoredRecord], n_total: int, bank: Mapping[str, EgoDynQuestion]
) -> dict[str, Any]:
    """The upstream metric dict from the parsed records."""
    buckets: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    clip_answers: dict[str, dict[str, str]] = defaultdict(dict)
    src_clip_answers: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for rec in scored:
        source = source_of(rec.clip_id)
        keys = ["global", f"cat:{rec.category}", f"q:{rec.question_id}", f"src:{source}"]
        if bank[rec.question_id].temporal:
            keys.append("temporal")
        for key in keys:
            buckets[key][0].append(rec.oracle)
            buckets[key][1].append(rec.pred)
        if rec.pred != UNPARSED:
            clip_answers[rec.clip_id][rec.question_id] = rec.pred  # the last answer wins, as upstream
            src_clip_answers[source][rec.clip_id][rec.question_id] = rec.pred

    def group(key: str, labels: Sequence[str] | None = None) -> dict[str, Any]:
        oracle, pred = buckets[key] if key in buckets else ([], [])
        return group_metrics(oracle, pred, labels)

    def named(prefix: str) -> list[str]:
        return sorted(k[len(prefix) :] for k in buckets if k.startswith(prefix))

    n_parsed = sum(1 for rec in scored if rec.pred != UNPARSED)
    per_question = {}
    for qid in named("q:"):
        labels = bank[qid].choices
        per_question[qid] = {
            **group(f"q:{qid}", labels),
            "confusion_matrix": confusion_matrix(*buckets[f"q:{qid}"], labels=labels),
        }
    return {
        "n_total": n_total,
        "n_parsed": n_parsed,
        "parsable_coverage": round(n_parsed / n_total, 4) if n_total else 0.0,
        "global": group("global"),
        "temporal": group("temporal"),
        "per_category": {cat: group(f"cat:{cat}") for cat in named("cat:")},
        "per_question": per_question,
        "consistency": compute_consistency(dict(clip_answers)),
        "per_source": {
            src: {**group(f"src:{src}"), "consistency": compute_consistency(dict(src_clip_answers[src]))}
            for src in named("src:")
        },
    }


def score(
    records: Iterable[Mapping[str, Any]],
    bank: Mapping[str, EgoDynQuestion] | None = None,
    penalize_unparsed: bool = False,
) -> dict[str, Any]:
    """Score upstream-format prediction records (`clip_id, question_id, oracle_label, model_answer`)."""
    bank = bank if bank is not None else load_question_bank()
    records = list(records)
    scored = [s for r in records if (s := score_record(r, bank, penalize_unparsed)) is not None]
    return aggregate(scored, len(records), bank)


def read_prediction_records(path: str | Path) -> list[dict[str, Any]]:
    """Read an upstream prediction JSONL; a non-JSON or non-object line is an error naming the line."""
    records = [record for _, record in read_jsonl(path)]
    if not records:
        raise DataError("no prediction records (empty file)", path=path)
    return records


def structural_warnings(
    records: Sequence[Mapping[str, Any]], bank: Mapping[str, EgoDynQuestion]
) -> list[str]:
    """Records upstream silently counts as unparsed for reasons other than the answer text."""
    unknown = sorted(
        {
            str(r["question_id"])
            for r in records
            if r.get("question_id") not in bank and r.get("question_id") is not None
        }
    )
    missing = {field: sum(1 for r in records if r.get(field) is None) for field in ("clip_id", "question_id")}
    no_oracle = sum(1 for r in records if r.get("oracle_label", r.get("answer")) is None)
    out = []
    if unknown:
        out.append(f"unknown question_id(s) counted as unparsed, as upstream: {', '.join(unknown)}")
    for field, n in missing.items():
        if n:
            out.append(f"{n} record(s) without '{field}' counted as unparsed, as upstream")
    if no_oracle:
        out.append(f"{no_oracle} record(s) without 'oracle_label'/'answer' counted as unparsed, as upstream")
    return out
