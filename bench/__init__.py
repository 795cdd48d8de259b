"""`make eval` and `make bench`: accuracy and speed tables of the shipped code and models."""

from __future__ import annotations

import json
import time
from pathlib import Path


def finish(results: dict, start: float, json_out: Path | None) -> int:
    """The end of an evaluation's run: its time, and its numbers saved as JSON if asked."""
    print(f"  ({time.perf_counter() - start:.0f} s)")
    if json_out:
        json_out.write_text(json.dumps(results, indent=1) + "\n")
    return 0
