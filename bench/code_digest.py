"""How long the digest of the installed code takes (core.code_digest), as the start-up gate pays
it: once per process, in a fresh process, files read from the page cache after the first run.

    .venv/bin/python bench/code_digest.py [--runs 20]

Prints the files, bytes, and the wall time of each run (the first, then the median and the
slowest of the rest), and writes bench/results/code_digest.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.results import write_result
from core import code_digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        digest = code_digest.digest()
        times.append(time.perf_counter() - started)
    lines = code_digest.manifest().splitlines()
    size = sum((code_digest.ROOT / line.split("  ", 1)[1]).stat().st_size for line in lines)
    rest = times[1:] or times
    figures = {
        "digest": digest,
        "files": len(lines),
        "bytes": size,
        "first_ms": round(times[0] * 1000, 1),
        "median_ms": round(statistics.median(rest) * 1000, 1),
        "max_ms": round(max(rest) * 1000, 1),
    }
    for name, value in figures.items():
        print(f"{name:<10} {value}")
    write_result("code_digest", figures, runs=runs)


if __name__ == "__main__":
    main()
