"""Benchmark the 7-card evaluator against the PyPI package ``treys`` and check they agree.

Run from the repository root: ``.venv/bin/python bench/evaluator.py [--hands N] [--seed S]``.

Prints the table build time and memory, evaluations per second for our scalar ``rank7``,
for treys (cards converted to treys' ints before timing), and for ``rank7_batch``, and the
ratio ours/treys. Exits non-zero if any hand orders differently from treys (treys ranks 1 =
best, so ours must equal ``7463 - treys``; pairs of hands are also compared in order).
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from treys import Card as TreysCard
from treys import Evaluator

from rules import hands
from rules.batch import rank7_batch
from rules.cards import DECK

ROOT = Path(__file__).resolve().parents[1]


# Run in a fresh interpreter: import time, first-call (build) time, RSS before/after (Linux
# /proc), and the size of the evaluator's Python lists.
COLD_BUILD = """
import sys, time
from pathlib import Path
def rss():
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 1e6
start = time.perf_counter()
import rules.hands as hands
imported = time.perf_counter()
assert "numpy" not in sys.modules
before = rss()
hands.rank7(51, 47, 43, 39, 35, 0, 1)
built = time.perf_counter()
lists = (hands._RANK7, hands._FLUSH_RANK, hands._FLUSH_BITS, hands._CARD_KEY)
print((imported - start) * 1000, (built - imported) * 1000, before, rss(),
      sum(sys.getsizeof(table) for table in lists) / 1e6)
"""


def best_of(runs: int, function: object) -> float:
    """Best wall time of several runs of a no-argument callable, in seconds."""
    timings = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        function()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    rows = np.argsort(rng.random((args.hands, 52)), axis=1)[:, :7].astype(np.uint8)
    seven = [tuple(row) for row in rows.tolist()]
    print(f"{len(seven):,} random 7-card hands, seed {args.seed}")

    # Table build, cold: a fresh interpreter that has not imported numpy yet.
    cold = subprocess.run(
        [sys.executable, "-c", COLD_BUILD],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    import_ms, build_ms, rss_before, rss_after, list_mb = (float(v) for v in cold)
    print(
        f"cold start: import rules.hands {import_ms:.0f} ms (numpy not loaded); "
        f"first rank7 call builds the tables in {build_ms:.0f} ms incl. numpy import; "
        f"RSS {rss_before:.0f} -> {rss_after:.0f} MB (+{rss_after - rss_before:.0f} MB, "
        f"of which Python lists {list_mb:.0f} MB)"
    )
    hands.rank7(*seven[0])

    rank7 = hands.rank7
    ours: list[int] = []

    def run_ours() -> None:
        ours[:] = [rank7(*hand) for hand in seven]

    ours_time = best_of(args.runs, run_ours)
    ours_rate = len(seven) / ours_time
    print(f"ours   rank7 (scalar):     {ours_rate:>13,.0f} evals/s")

    evaluator = Evaluator()
    names = [str(card) for card in DECK]
    treys_deck = [TreysCard.new(name) for name in names]
    treys_hands = [([treys_deck[i] for i in hand[:2]], [treys_deck[i] for i in hand[2:]])
                   for hand in seven]  # fmt: skip
    theirs: list[int] = []

    def run_treys() -> None:
        evaluate = evaluator.evaluate
        theirs[:] = [evaluate(hole, board) for hole, board in treys_hands]

    treys_time = best_of(1, run_treys)
    treys_rate = len(seven) / treys_time
    print(f"treys  Evaluator.evaluate: {treys_rate:>13,.0f} evals/s")
    print(f"ratio ours/treys:          {ours_rate / treys_rate:>13.1f}x")

    batch = np.empty(0, dtype=np.uint16)

    def run_batch() -> None:
        nonlocal batch
        batch = rank7_batch(rows)

    batch_time = best_of(args.runs, run_batch)
    print(f"ours   rank7_batch:        {len(rows) / batch_time:>13,.0f} hands/s ({len(rows):,})")
    big = np.tile(rows, (max(1, 5_000_000 // len(rows)), 1))
    big_time = best_of(args.runs, lambda: rank7_batch(big))
    print(f"ours   rank7_batch:        {len(big) / big_time:>13,.0f} hands/s ({len(big):,})")

    # Agreement: identical scale (ours = 7463 - treys) and pairwise order on a sample.
    failures = 0
    if batch.tolist() != ours:
        print("MISMATCH: rank7_batch differs from rank7")
        failures += 1
    mapped = [7463 - rank for rank in theirs]
    exact = sum(a == b for a, b in zip(ours, mapped, strict=True))
    print(f"same class as treys: {exact:,} of {len(ours):,} hands")
    pair_rng = np.random.default_rng(args.seed + 1)
    left, right = pair_rng.integers(0, len(ours), size=(2, 100_000)).tolist()
    disagreements = 0
    for i, j in zip(left, right, strict=True):
        ours_sign = (ours[i] > ours[j]) - (ours[i] < ours[j])
        treys_sign = (theirs[i] < theirs[j]) - (theirs[i] > theirs[j])  # treys: lower is better
        disagreements += ours_sign != treys_sign
    print(f"pairwise order checks: {len(left):,}, disagreements: {disagreements}")
    if exact != len(ours) or disagreements:
        print("MISMATCH: our ordering differs from treys'")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
