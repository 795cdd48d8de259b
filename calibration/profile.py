"""A calibration profile: what one photo of laid-out tiles taught about an edition.

`Profile` is a plain value (JSON file, `version` 1):

- `model_sha256`: the classifier file it was made with. Prototypes live in that network's
  embedding space, so another model cannot use them (`ProfileError`).
- `edition`: a name for the tiles (the player's, or the colour slots, e.g. "K R B G").
- `slots`: the four colour slots in the profile's order, each with the ink colour it prints
  (Lab of a tile whose body is neutral grey), that colour's spread, and its word. A "G"
  slot means the edition prints green where others print orange: readings say G7.
- `body_bgr`: the tile bodies' colour in the calibration photo. Crops are scaled tile by
  tile to it before the network reads them (white balance from the tile bodies).
- `net_colours`: how the network reads each slot's tiles (its colour confusion), so its
  colour counts as much as it deserves for this edition.
- `prototypes`: the network's embedding of each calibration tile, upright and turned
  round (`codes`, `turned`, `vectors`): the nearest-prototype head for number shapes.
- `stats`: how sure the calibration was (shown by `rummikub calibrate`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.recognition.labels import COLOR_WORDS

VERSION = 1


class ProfileError(ValueError):
    """A profile file that is missing, unreadable, corrupt or made for another model."""


@dataclass(frozen=True)
class SlotColor:
    slot: str  # K R B O G
    lab: tuple[float, float, float]  # ink colour on a neutral body
    spread: tuple[float, float, float]  # its standard deviation over the calibration tiles
    tiles: int = 0

    @property
    def word(self) -> str:
        return COLOR_WORDS[self.slot]

    def to_json(self) -> dict:
        return {"slot": self.slot, "word": self.word, "lab": [round(v, 2) for v in self.lab],
                "spread": [round(v, 2) for v in self.spread], "tiles": self.tiles}

    @classmethod
    def from_json(cls, obj: dict) -> SlotColor:
        return cls(str(obj["slot"]), _triple(obj["lab"]), _triple(obj["spread"]),
                   int(obj.get("tiles", 0)))


def _triple(values) -> tuple[float, float, float]:
    out = tuple(float(v) for v in values)
    if len(out) != 3 or not all(math.isfinite(v) for v in out):
        raise ValueError(f"expected three numbers, got {values!r}")
    return out


def _matrix(rows, n: int) -> tuple[tuple[float, ...], ...]:
    out = tuple(tuple(float(v) for v in row) for row in rows)
    if len(out) != n or any(len(row) != 4 for row in out) or not all(
            math.isfinite(v) and 0 <= v <= 1 for row in out for v in row):
        raise ValueError(f"net_colours is not {n} rows of 4 probabilities")
    return out


@dataclass(frozen=True)
class Profile:
    model_sha256: str
    edition: str
    slots: tuple[SlotColor, ...]
    body_bgr: tuple[float, float, float]
    codes: tuple[str, ...]  # one per prototype
    turned: tuple[bool, ...]
    # (M, D) float32 unit rows; compared separately (np.allclose), being an array
    vectors: np.ndarray = field(repr=False, compare=False)
    # How the network reads each slot's tiles: row = true slot, column = the network's
    # colour slot (K R B O), mean probability over the calibration tiles (4, 4).
    net_colours: tuple[tuple[float, ...], ...] = ()
    stats: dict = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        return (f"Profile(edition={self.edition!r}, slots={self.slot_letters!r}, "
                f"model_sha256={self.model_sha256[:12]!r}..., prototypes={len(self.codes)})")

    @property
    def slot_letters(self) -> str:
        return "".join(s.slot for s in self.slots)

    @property
    def labels(self) -> tuple[str, ...]:
        """The 53 readings in the classifier's order, its 4th slot renamed to this edition's."""
        from vision.recognition.labels import TILE_CLASSES

        fourth = self.fourth_slot
        return tuple(c if c == "J" or c[0] != "O" else fourth + c[1:] for c in TILE_CLASSES)

    @property
    def fourth_slot(self) -> str:
        """'O' (orange or yellow) or 'G' (green), whichever this edition prints."""
        return "G" if "G" in self.slot_letters else "O"

    def head(self, classifier, source: str = "profile"):
        """The `calibration.head.ProfileHead` reading `classifier`'s tiles through this
        profile (what `TileReader.with_profile` asks for; ProfileError when made for another
        classifier)."""
        from calibration.head import ProfileHead

        return ProfileHead(self, classifier, source)

    # -- files -----------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "version": VERSION,
            "kind": "rummikub-calibration-profile",
            "model_sha256": self.model_sha256,
            "edition": self.edition,
            "slots": [s.to_json() for s in self.slots],
            "body_bgr": [round(v, 2) for v in self.body_bgr],
            "white_balance_gains": [round(200.0 / v, 4) for v in self.body_bgr],
            "net_colours": [[round(v, 4) for v in row] for row in self.net_colours],
            "stats": self.stats,
            "prototypes": {
                "codes": list(self.codes),
                "turned": [bool(t) for t in self.turned],
                "vectors": [[round(float(v), 4) for v in row] for row in self.vectors],
            },
        }

    @classmethod
    def from_json(cls, obj, source: str = "profile") -> Profile:
        if not isinstance(obj, dict) or obj.get("kind") != "rummikub-calibration-profile":
            raise ProfileError(f"{source}: not a calibration profile (make one with "
                               "`rummikub calibrate`)")
        if obj.get("version") != VERSION:
            raise ProfileError(f"{source}: profile version {obj.get('version')!r}, this program "
                               f"reads version {VERSION}; calibrate again")
        try:
            protos = obj["prototypes"]
            vectors = np.asarray(protos["vectors"], np.float32)
            codes = tuple(str(c) for c in protos["codes"])
            turned = tuple(bool(t) for t in protos["turned"])
            if vectors.ndim != 2 or len(vectors) != len(codes) or len(turned) != len(codes):
                raise ValueError("prototype codes, turns and vectors do not line up")
            if not np.isfinite(vectors).all():
                raise ValueError("prototype vectors hold non-numbers")
            slots = tuple(SlotColor.from_json(s) for s in obj["slots"])
            letters = "".join(s.slot for s in slots)
            if sorted(letters) not in (sorted("KRBO"), sorted("KRBG")):
                raise ValueError(f"colour slots {letters!r} are not K, R, B and O or G")
            profile = cls(
                model_sha256=str(obj["model_sha256"]),
                edition=str(obj.get("edition", "")),
                slots=slots,
                body_bgr=_triple(obj["body_bgr"]),
                net_colours=_matrix(obj["net_colours"], len(slots)),
                codes=codes,
                turned=turned,
                vectors=vectors,
                stats=dict(obj.get("stats", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            detail = f"missing {error}" if isinstance(error, KeyError) else str(error)
            raise ProfileError(f"{source}: corrupt calibration profile ({detail})") from None
        unknown = sorted({c for c in codes} - set(profile.labels))
        if unknown:
            raise ProfileError(f"{source}: corrupt calibration profile (prototype codes "
                               f"{' '.join(unknown)} are not tiles of its edition)")
        return profile

    @classmethod
    def from_file(cls, path: Path | str) -> Profile:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProfileError(f"no calibration profile at {path} (make one with "
                               "`rummikub calibrate PHOTO --out PROFILE`)") from None
        except (OSError, UnicodeDecodeError) as error:
            raise ProfileError(f"cannot read the calibration profile {path}: "
                               f"{getattr(error, 'strerror', None) or error}") from None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as error:
            raise ProfileError(f"{path}: corrupt calibration profile (not JSON: {error.msg}, "
                               f"line {error.lineno})") from None
        return cls.from_json(obj, source=str(path))

    def save(self, path: Path | str) -> None:
        """Write the profile (atomically: a failed write leaves any old file as it was)."""
        import os
        import tempfile

        path = Path(path)
        text = json.dumps(self.to_json(), separators=(",", ":")) + "\n"
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is not what a plain write gives
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def check_model(self, model_sha256: str | None, source: str = "profile") -> None:
        """ProfileError unless this profile was made with the classifier of that hash."""
        if model_sha256 != self.model_sha256:
            raise ProfileError(
                f"{source} was made for another classifier (model {self.model_sha256[:12]}, "
                f"loaded {str(model_sha256)[:12]}); calibrate again with this model")
