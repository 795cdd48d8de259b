"""Where the project finds things that do not ship with it.

The labelled photos stay outside the repository (they are CC BY 4.0 and not ours to
commit); every tool reads their location from `RUMMIKUB_DATA`, defaulting to the
`shared/data` folder that sits beside a checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("RUMMIKUB_MODELS", REPO_ROOT / "models"))


def dataset_dir() -> Path:
    """The Roboflow `rummikub-nvypk` export (folders `train/` and `valid/`)."""
    default = REPO_ROOT.parent / "shared" / "data" / "rummikub-nvypk"
    return Path(os.environ.get("RUMMIKUB_DATA", default)).expanduser()
