"""Time `kinegraph compare`'s per-item paired bootstrap: 6 suites x 14 items x 2000 resamples, 1000 groups.

Each suite-shaped case pairs two runs over 1000 clips: EgoDyn-style per-question balanced accuracy
(class-recall statistics from 14,000 records) and five mean-style item sets (14 items of [sum, count]).
Prints the time to build the EgoDyn item statistics from records and the bootstrap time per case and in total.
"""

from __future__ import annotations

import time

import numpy as np

from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK, load_question_bank
from kinegraph.evaluators.egodyn_suite import question_stats
from kinegraph.report.bootstrap import bootstrap_weights, paired_bootstrap_items
from kinegraph.suites import GroupStats, mean_columns

N_GROUPS, N_ITEMS, N_BOOT, REPEATS = 1000, 14, 2000, 5


def egodyn_records(rng: np.random.Generator, accuracy: float) -> list[dict]:
    records = []
    for i in range(N_GROUPS):
        for q in QUESTION_BANK:
            oracle = str(rng.choice(q.choices))
            answer = oracle if rng.random() < accuracy else str(rng.choice(q.choices))
            records.append({"clip_id": f"clip_{i:05d}", "question_id": q.question_id, "model_answer": answer,
                            "oracle_label": oracle, "category": q.category})  # fmt: skip
    return records


def mean_items(rng: np.random.Generator, accuracy: float) -> dict[str, GroupStats]:
    counts = rng.integers(1, 4, size=(N_GROUPS, N_ITEMS)).astype(float)
    sums = rng.binomial(counts.astype(int), accuracy).astype(float)
    matrix = np.stack([sums, counts], axis=2).reshape(N_GROUPS, 2 * N_ITEMS)
    groups = [f"g{i:05d}" for i in range(N_GROUPS)]
    return mean_columns(groups, matrix, [f"item{k:02d}" for k in range(N_ITEMS)])


def best_of(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    bank = load_question_bank()
    records_a, records_b = egodyn_records(rng, 0.5), egodyn_records(rng, 0.6)
    build_s = best_of(lambda: question_stats(records_a, bank), 3)
    cases = {"egodyn (class recall)": (question_stats(records_a, bank), question_stats(records_b, bank))}
    for name in ("quantiphy", "tad", "stsbench", "dsi", "autodridm"):
        cases[f"{name}-shaped (mean)"] = (mean_items(rng, 0.5), mean_items(rng, 0.55))
    print(f"{N_GROUPS} groups, {N_ITEMS} items per suite, {N_BOOT} resamples, best of {REPEATS}")
    print(f"EgoDyn item stats from {len(records_a)} records: {build_s * 1e3:.1f} ms")
    draw_s = best_of(lambda: (bootstrap_weights.cache_clear(), bootstrap_weights(N_GROUPS, N_BOOT, 0)))
    print(f"one draw of the resampling weights (cached per comparison): {draw_s * 1e3:.1f} ms")
    cold, warm = [], []
    for name, (a, b) in cases.items():

        def from_scratch(a=a, b=b):
            bootstrap_weights.cache_clear()
            paired_bootstrap_items(a, b, n_boot=N_BOOT)

        cold.append(best_of(from_scratch))
        warm.append(best_of(lambda a=a, b=b: paired_bootstrap_items(a, b, n_boot=N_BOOT)))
        print(
            f"  {name:<28} {len(a):>2} items  with draw {cold[-1] * 1e3:6.1f} ms  "
            f"items only {warm[-1] * 1e3:6.1f} ms"
        )
    print(
        f"6 suites: {sum(cold) * 1e3:.1f} ms each drawing its own weights, "
        f"{sum(warm) * 1e3:.1f} ms for the items alone"
    )


if __name__ == "__main__":
    main()
