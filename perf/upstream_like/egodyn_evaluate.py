"""A minimal stand-in for upstream EgoDyn-Bench's `scripts/evaluate.py`, for start-up timing only.

Written from the spec (../shared/spec/egodyn.md §5, benchmarks-formats-and-scoring.md §1.4-1.5) when no
upstream checkout is at hand: the same imports (argparse, json, re, yaml, collections), the YAML question
template read on every run, the 4-stage parser, and the metrics in plain Python with one pass over the
records per class, as upstream's `evaluation/metrics.py` computes them. `perf/startup.py` checks that it
prints the same numbers as `kinegraph evaluate egodyn`.
Usage: python egodyn_evaluate.py --predictions FILE.jsonl --config questions_template.yaml
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict

import yaml

RULES = [  # (if question, op, value) -> (then question, op, value), upstream's order
    (("significant_heading_change", "==", "yes"), ("yaw_rate_turn_direction", "!=", "straight")),
    (("high_lateral_accel", "==", "yes"), ("yaw_rate_turn_direction", "!=", "straight")),
    (("yaw_rate_turn_direction", "==", "straight"), ("significant_heading_change", "==", "no")),
    (("yaw_rate_turn_direction", "==", "straight"), ("high_lateral_accel", "==", "no")),
    (("speed_regime", "==", "highway"), ("mean_speed_low", "==", "no")),
    (("speed_regime", "==", "stopped"), ("mean_speed_low", "==", "yes")),
    (("speed_regime", "==", "stopped"), ("speed_trend", "!=", "accelerating")),
    (("brake_then_turn", "==", "yes"), ("braking_intensity", "!=", "none")),
    (("brake_then_turn", "==", "yes"), ("yaw_rate_turn_direction", "!=", "straight")),
    (("stop_and_go", "==", "yes"), ("speed_regime", "!=", "stopped")),
]


def norm(text):
    text = re.sub(r"\s+", " ", text.lower().strip().replace("*", "").replace("`", ""))
    return text.rstrip(".,;:!?")


def exact(text, choices):
    if text in choices:
        return text
    for c in choices:
        if c.replace("_", " ") == text or c == text.replace(" ", "_"):
            return c
    return None


def substring(text, choices):
    for c in sorted(choices, key=len, reverse=True):
        for variant in (c, c.replace("_", " ")):
            if re.search(r"\b" + re.escape(variant) + r"\b", text):
                return c
    return None


def parse(answer, choices, answer_type):
    if not answer or not str(answer).strip():
        return None
    if answer_type == "numeric":
        found = re.search(r"-?\d+(?:\.\d+)?", str(answer))
        return f"{float(found.group()):g}" if found else None
    if not choices:
        return None
    full = norm(str(answer))
    if (hit := exact(full, choices)) is not None:
        return hit
    lines = [line for line in str(answer).splitlines() if line.strip()]
    last = norm(lines[-1]) if lines else ""
    return exact(last, choices) or substring(last, choices) or substring(full, choices)


def group(oracle, pred, labels=None):
    classes = labels if labels is not None else sorted(set(oracle) | set(pred))
    recalls, f1s = [], []
    for c in classes:
        tp = sum(o == c and p == c for o, p in zip(oracle, pred, strict=True))
        fp = sum(o != c and p == c for o, p in zip(oracle, pred, strict=True))
        fn = sum(o == c and p != c for o, p in zip(oracle, pred, strict=True))
        if tp + fn:
            recalls.append(tp / (tp + fn))
        precision, recall = (tp / (tp + fp) if tp + fp else 0.0), (tp / (tp + fn) if tp + fn else 0.0)
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    accuracy = sum(o == p for o, p in zip(oracle, pred, strict=True)) / len(oracle) if oracle else 0.0
    return {
        "accuracy": round(accuracy, 4),
        "balanced_acc": round(sum(recalls) / len(recalls), 4) if recalls else 0.0,
        "macro_f1": round(sum(f1s) / len(f1s), 4) if f1s else 0.0,
        "n": len(oracle),
    }


def holds(answer, op, value):
    return answer == value if op == "==" else answer != value


def consistency(clips):
    applicable, evaluable, consistent = [0] * len(RULES), 0, 0
    for answers in clips.values():
        n_app = n_viol = 0
        for i, ((q1, op1, v1), (q2, op2, v2)) in enumerate(RULES):
            if q1 in answers and q2 in answers and holds(answers[q1], op1, v1):
                n_app += 1
                applicable[i] += 1
                n_viol += not holds(answers[q2], op2, v2)
        evaluable += n_app > 0
        consistent += n_app > 0 and n_viol == 0
    rate = round(consistent / evaluable, 4) if evaluable else 0.0
    return {"rate": rate, "wemcr": round(rate * sum(a > 0 for a in applicable) / len(RULES), 4)}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--config", required=True)
    args = parser.parse_args()
    with open(args.config) as f:
        questions = {q["question_id"]: q for q in yaml.safe_load(f)["questions"]}
    records = []
    with open(args.predictions) as f:
        for line in f:
            if line.strip():
                records.append(json.loads(line))
    buckets, clips = defaultdict(lambda: ([], [])), defaultdict(dict)
    for rec in records:
        qid, clip = rec.get("question_id"), rec.get("clip_id")
        oracle, q = rec.get("oracle_label", rec.get("answer")), questions.get(qid)
        if clip is None or oracle is None or q is None:
            continue
        choices = [str(c).lower() for c in q["choices"]] if q.get("choices") else None
        pred = parse(rec.get("model_answer", ""), choices, q["answer_type"])
        if pred is None:
            continue
        oracle = str(oracle).lower().strip()
        keys = ["global", f"category/{rec.get('category', 'unknown')}", f"question/{qid}"]
        keys += [f"source/{'nuscenes' if clip.startswith('clip_') else 'carla'}"]
        keys += ["temporal"] * bool(q.get("metadata", {}).get("temporal", False))
        for key in keys:
            buckets[key][0].append(oracle)
            buckets[key][1].append(pred)
        clips[clip][qid] = pred
    out = {"n_total": len(records), "n_parsed": len(buckets["global"][0])}
    for key, (oracle, pred) in sorted(buckets.items()):
        labels = questions[key.split("/")[1]].get("choices") if key.startswith("question/") else None
        out[key] = group(oracle, pred, [str(c).lower() for c in labels] if labels else None)
    out["consistency"] = consistency(clips)
    json.dump(out, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
