"""EgoDyn-Bench's ego-motion consistency (EMCR, rule coverage, WEMCR/WPCR) over parsed predictions.

Reproduces upstream `compute_consistency`: the paper's Eq. 2 cannot produce its own tables, the code can,
so this follows the code (see spec egodyn.md §5.4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

Op = Literal["==", "!="]


class Condition(NamedTuple):
    question_id: str
    op: Op
    value: str

    def holds(self, answer: str) -> bool:
        return answer == self.value if self.op == "==" else answer != self.value


class ConsistencyRule(NamedTuple):
    """`if antecedent then consequent`, checked on one clip's parsed answers."""

    name: str
    antecedent: Condition
    consequent: Condition


CONSISTENCY_RULES: tuple[ConsistencyRule, ...] = (
    ConsistencyRule(
        "heading_change_implies_turning",
        Condition("significant_heading_change", "==", "yes"),
        Condition("yaw_rate_turn_direction", "!=", "straight"),
    ),
    ConsistencyRule(
        "lateral_accel_implies_turning",
        Condition("high_lateral_accel", "==", "yes"),
        Condition("yaw_rate_turn_direction", "!=", "straight"),
    ),
    ConsistencyRule(
        "straight_implies_no_heading_change",
        Condition("yaw_rate_turn_direction", "==", "straight"),
        Condition("significant_heading_change", "==", "no"),
    ),
    ConsistencyRule(
        "straight_implies_no_high_lateral_accel",
        Condition("yaw_rate_turn_direction", "==", "straight"),
        Condition("high_lateral_accel", "==", "no"),
    ),
    ConsistencyRule(
        "highway_implies_not_low_speed",
        Condition("speed_regime", "==", "highway"),
        Condition("mean_speed_low", "==", "no"),
    ),
    ConsistencyRule(
        "stopped_implies_low_speed",
        Condition("speed_regime", "==", "stopped"),
        Condition("mean_speed_low", "==", "yes"),
    ),
    ConsistencyRule(
        "stopped_not_accelerating",
        Condition("speed_regime", "==", "stopped"),
        Condition("speed_trend", "!=", "accelerating"),
    ),
    ConsistencyRule(
        "brake_then_turn_implies_braking",
        Condition("brake_then_turn", "==", "yes"),
        Condition("braking_intensity", "!=", "none"),
    ),
    ConsistencyRule(
        "brake_then_turn_implies_turning",
        Condition("brake_then_turn", "==", "yes"),
        Condition("yaw_rate_turn_direction", "!=", "straight"),
    ),
    ConsistencyRule(
        "stop_and_go_not_stopped",
        Condition("stop_and_go", "==", "yes"),
        Condition("speed_regime", "!=", "stopped"),
    ),
)


def check_rule(rule: ConsistencyRule, answers: Mapping[str, str]) -> tuple[bool, bool]:
    """(applicable, violated): applicable when both questions were answered and the antecedent holds."""
    cond = answers.get(rule.antecedent.question_id)
    impl = answers.get(rule.consequent.question_id)
    if cond is None or impl is None or not rule.antecedent.holds(cond):
        return False, False
    return True, not rule.consequent.holds(impl)


def compute_consistency(
    clip_answers: Mapping[str, Mapping[str, str]],
    rules: tuple[ConsistencyRule, ...] = CONSISTENCY_RULES,
) -> dict[str, Any]:
    """The upstream consistency block for `{clip_id: {question_id: parsed_label}}`."""
    per_rule: dict[str, dict[str, Any]] = {r.name: {"n_applicable": 0, "n_violations": 0} for r in rules}
    n_evaluable = n_consistent = total_violations = 0
    compliance_scores: list[float] = []
    for answers in clip_answers.values():
        applicable = violations = 0
        for rule in rules:
            is_applicable, is_violated = check_rule(rule, answers)
            if is_applicable:
                applicable += 1
                per_rule[rule.name]["n_applicable"] += 1
                if is_violated:
                    per_rule[rule.name]["n_violations"] += 1
                    violations += 1
        if applicable > 0:
            n_evaluable += 1
            total_violations += violations
            compliance_scores.append((applicable - violations) / applicable)
            n_consistent += violations == 0

    for stats in per_rule.values():
        n_app = stats["n_applicable"]
        stats["compliance"] = round(1 - stats["n_violations"] / n_app, 4) if n_app > 0 else 1.0

    n_clips = len(clip_answers)
    emcr = round(n_consistent / n_evaluable, 4) if n_evaluable > 0 else 0.0
    n_triggered = sum(1 for stats in per_rule.values() if stats["n_applicable"] > 0)
    rule_coverage = n_triggered / len(rules) if rules else 0.0
    return {
        "rate": emcr,
        # Upstream multiplies the already-rounded EMCR by the coverage; kept for parity.
        "wemcr": round(emcr * rule_coverage, 4),
        "mean_compliance": round(sum(compliance_scores) / len(compliance_scores), 4)
        if compliance_scores
        else 0.0,
        "rule_coverage": round(rule_coverage, 4),
        "n_rules_triggered": n_triggered,
        "n_rules_total": len(rules),
        "n_clips": n_clips,
        "n_evaluable": n_evaluable,
        "n_consistent": n_consistent,
        "consistency_coverage": round(n_evaluable / n_clips, 4) if n_clips > 0 else 0.0,
        "mean_violations": round(total_violations / n_evaluable, 4) if n_evaluable > 0 else 0.0,
        "per_rule": per_rule,
    }
