"""Where the project finds things that do not ship with it.

The labelled photos stay outside the repository (they are CC BY 4.0 and not ours to
commit); every tool reads their location from `RUMMIKUB_DATA`, defaulting to the
`shared/data` folder that sits beside a checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _shipped(folder: str, package: str) -> Path:
    """`folder` of a source checkout, else where an installed wheel put it (the package
    `package`, see setup.py), else the checkout's path (for the error that names it)."""
    here = REPO_ROOT / folder
    if (REPO_ROOT / "pyproject.toml").is_file() and here.is_dir():
        return here
    import importlib.util

    spec = importlib.util.find_spec(package)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(places[0]) if places else here


MODELS_DIR = Path(os.environ.get("RUMMIKUB_MODELS") or _shipped("models", "rummikub_models"))
SAMPLES_DIR = _shipped("sample_images", "rummikub_samples")


def dataset_dir() -> Path:
    """The Roboflow `rummikub-nvypk` export (folders `train/` and `valid/`)."""
    default = REPO_ROOT.parent / "shared" / "data" / "rummikub-nvypk"
    return Path(os.environ.get("RUMMIKUB_DATA", default)).expanduser()
