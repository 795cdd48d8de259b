"""The real labelled photos (Roboflow `rummikub-nvypk`, CC BY 4.0), read in place.

Labels are YOLOv8 segmentation lines `class x1 y1 ... xn yn` (normalised). Class indices
follow `data.yaml`'s alphabetical order, so they are mapped to tile codes by name. Known
label mistakes are corrected from `label_overrides.csv` beside this file, never by editing
the dataset.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.recognition.labels import code_from_dataset_name
from vision.recognition.settings import dataset_dir

OVERRIDES_FILE = Path(__file__).with_name("label_overrides.csv")
_KEY = re.compile(r"^(?P<prefix>[A-Za-z]+\d*)-(?P<number>\d+)_jpeg")


@dataclass
class LabelledTile:
    code: str  # tile code, e.g. "R7" or "J"
    polygon: np.ndarray  # (K, 2) float32, photo pixels, the visible top face


@dataclass
class LabelledPhoto:
    path: Path
    split: str  # "train" or "valid"
    key: str  # "rummy4-24": prefix + number, the unit for holding photos out
    width: int
    height: int
    tiles: list[LabelledTile] = field(default_factory=list)

    @property
    def prefix(self) -> str:
        return self.key.rsplit("-", 1)[0]

    def read(self) -> np.ndarray:
        image = cv2.imread(str(self.path), cv2.IMREAD_COLOR)
        if image is None:
            raise OSError(f"cannot read {self.path}")
        return image


def photo_key(filename: str) -> str:
    """`'rummy4-24_jpeg.rf.abc.jpg'` -> `'rummy4-24'`."""
    match = _KEY.match(filename)
    if not match:
        raise ValueError(f"unexpected photo name: {filename!r}")
    return f"{match['prefix']}-{match['number']}"


def class_names(root: Path) -> list[str]:
    """The `names:` list of data.yaml (read without a YAML dependency)."""
    names, inside = [], False
    for line in (root / "data.yaml").read_text().splitlines():
        if line.startswith("names:"):
            inside = True
            continue
        if inside:
            if line.startswith("- "):
                names.append(line[2:].strip().strip("'\""))
            elif line and not line.startswith(" "):
                break
    return names


def load_overrides(path: Path = OVERRIDES_FILE) -> dict[tuple[str, int], str]:
    """(photo key, label line index) -> corrected code, or "" to drop the label."""
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        rows = [r for r in csv.DictReader(line for line in handle if not line.startswith("#"))]
    return {(r["photo"], int(r["line"])): r["code"].strip() for r in rows}


def load_split(split: str, root: Path | None = None) -> list[LabelledPhoto]:
    """Every photo of `split` ("train" or "valid") with its corrected tile labels."""
    root = Path(root) if root else dataset_dir()
    images_dir = root / split / "images"
    if not images_dir.is_dir():
        raise FileNotFoundError(f"no photos at {images_dir} (set RUMMIKUB_DATA)")
    names = class_names(root)
    overrides = load_overrides()
    photos = []
    for image_path in sorted(images_dir.glob("*.jpg")):
        key = photo_key(image_path.name)
        header = cv2.imread(str(image_path), cv2.IMREAD_UNCHANGED)
        height, width = header.shape[:2]
        photo = LabelledPhoto(image_path, split, key, width, height)
        label_path = root / split / "labels" / (image_path.stem + ".txt")
        lines = label_path.read_text().splitlines() if label_path.exists() else []
        for index, line in enumerate(lines):
            parts = line.split()
            if len(parts) < 7:
                continue
            code = code_from_dataset_name(names[int(parts[0])])
            code = overrides.get((key, index), code)
            if code == "":
                continue
            xy = np.asarray(parts[1:], np.float32).reshape(-1, 2) * (width, height)
            photo.tiles.append(LabelledTile(code, xy.astype(np.float32)))
        photos.append(photo)
    return photos


def oriented_quad(polygon: np.ndarray) -> np.ndarray:
    """The minimum-area rectangle around a label polygon, as 4 corners (4, 2)."""
    return cv2.boxPoints(cv2.minAreaRect(polygon.astype(np.float32))).astype(np.float32)
