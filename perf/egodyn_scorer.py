"""Time the EgoDyn scorer (parse + full metric dict) on 14,000 records; prints records/second.

Records are the 1000 x 14 oracle answers of selected_clips.json when the golden files are present
(else 1000 synthetic clips), with model answers in a mix of styles: exact, verbose, last-line, unparsable.
"""

from __future__ import annotations

import random
import statistics
import time

from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.evaluators.egodyn import score
from kinegraph.fixtures import fixtures_dir


def make_records(seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    golden = fixtures_dir()
    if golden is not None:
        from kinegraph.benchmarks.egodyn.loader import load_selected_clips

        pairs = [
            (s.group, s.question_id, s.answer)
            for s in load_selected_clips(golden / "egodyn" / "selected_clips.json")
        ]
    else:
        pairs = [
            (f"clip_{i:05d}", q.question_id, rng.choice(q.choices))
            for i in range(1000)
            for q in QUESTION_BANK
        ]
    bank = {q.question_id: q for q in QUESTION_BANK}
    styles = [
        lambda c: c,
        lambda c: f"**{c.replace('_', ' ').title()}**.",
        lambda c: f"Looking at the frames, the motion suggests a change.\nAnswer: {c}",
        lambda c: f"The vehicle is most likely {c.replace('_', ' ')} in this clip.",
        lambda c: "I cannot determine this from the images.",
    ]
    records = []
    for clip, qid, oracle in pairs:
        guess = rng.choice(bank[qid].choices)
        records.append(
            {
                "clip_id": clip,
                "question_id": qid,
                "category": bank[qid].category,
                "oracle_label": oracle,
                "model_answer": rng.choice(styles)(guess),
            }
        )
    return records


def main() -> None:
    records = make_records()
    score(records[:500])  # warm-up
    times = []
    for _ in range(5):
        start = time.perf_counter()
        metrics = score(records)
        times.append(time.perf_counter() - start)
    best, median = min(times), statistics.median(times)
    print(f"egodyn scorer: {len(records)} records, n_parsed {metrics['n_parsed']}")
    print(
        f"  best {best * 1000:.0f} ms ({len(records) / best:,.0f} records/s), "
        f"median {median * 1000:.0f} ms ({len(records) / median:,.0f} records/s)"
    )


if __name__ == "__main__":
    main()
