"""Where the benches leave their figures: `bench/results/<name>.json`, one file a bench, written
anew by each run, with what is needed to compare two runs (when, which commit, which machine).

docs/benchmarks.md quotes these files; commit them with the change they measure.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _commit() -> str:
    run = subprocess.run(
        ["git", "describe", "--always", "--dirty"],
        cwd=RESULTS.parent,
        capture_output=True,
        text=True,
    )
    return run.stdout.strip() or "unknown"


def write_result(name: str, figures: dict[str, Any], **setup: Any) -> Path:
    """Write `figures` (and the run's `setup`: its options) as bench/results/<name>.json."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    document = {
        "bench": name,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _commit(),
        "machine": {
            "cores": os.cpu_count(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30),
            "python": platform.python_version(),
            "system": platform.platform(),
        },
        "setup": setup,
        "figures": figures,
    }
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n")
    return path
