"""The hall benches' change of a table: one tile moved to a free place, as a player moves it.

A player takes a tile from where it lay and puts it down where the table is free: its old
place then shows the table, and its new place has table all around it. The change made
here (`find_change`) is that, on a real labelled photo:

- the tile's old place is filled with a patch of the same table copied from a free spot
  next to it (`table_fill`), so it shows wood grain or cloth, not a smear of its
  neighbours (an inpainting among tiles paints cream into the place, which no table shows);
- its new place is 1 to 4 tile heights away, inside the picture, with no tile within
  `CLEAR` tile heights, and the table's colour around it is the colour around its old
  place (so it lies on this table, not on the floor beside it);
- and the change is one a detector sees on the still photo: the changed photo is read
  alone (`TileReader`), and the change is used only when the tile is found at its new
  place with its reading, nothing is found at its old place, and the rest of the table
  reads as before (the same tiles, each read alike); else the next place, then the next tile, is tried.

Tiles are tried smallest first (the smallest tile is the hardest change to see).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

CLEAR = 0.25  # tile heights of table kept free around the moved tile's new place
STEPS = (1.0, 4.0)  # tile heights from the old place to the new one, nearest and farthest
FILL_FROM = 5.0  # tile heights: the farthest free spot the old place is filled from
FOUND_WITHIN = 0.35  # tile heights: a detection this near a place is a tile there
TABLE_TOL = 14.0  # Lab distance of the table's colour around the new place from the old
TILES_TRIED = 4  # the smallest tiles tried, each at up to 4 new places (a read each)


@dataclass(frozen=True)
class TableChange:
    """One tile of a photo moved: the changed picture, and where the tile went."""

    key: str  # the photo
    code: str  # the tile moved
    before: tuple[float, float]  # its centre before, photo pixels
    after: tuple[float, float]  # its centre after
    tile_height: float  # px
    image: np.ndarray  # the changed photo (BGR)

    def to_json(self) -> dict:
        return {"photo": self.key, "tile": self.code,
                "from": [round(v) for v in self.before], "to": [round(v) for v in self.after],
                "tile_heights": round(float(np.hypot(self.after[0] - self.before[0],
                                                      self.after[1] - self.before[1]))
                                      / self.tile_height, 2)}


def _mask(shape, polygon: np.ndarray, grow: int = 0) -> np.ndarray:
    m = np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(m, [np.round(polygon).astype(np.int32)], 1)
    if grow > 0:
        m = cv2.dilate(m, cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                                    (2 * grow + 1, 2 * grow + 1)))
    return m.astype(bool)


class _Shape:
    """A mask's pixels, to be tried at other places of the picture."""

    def __init__(self, mask: np.ndarray) -> None:
        self.ys, self.xs = np.nonzero(mask)
        self.h, self.w = mask.shape

    def fits(self, dx: int, dy: int, taken: np.ndarray) -> bool:
        """Whether the shape moved by (dx, dy) lies inside the picture, off `taken`."""
        if (self.xs.min() + dx < 0 or self.ys.min() + dy < 0 or self.xs.max() + dx >= self.w
                or self.ys.max() + dy >= self.h):
            return False
        return not taken[self.ys + dy, self.xs + dx].any()

    def at(self, dx: int, dy: int) -> np.ndarray:
        out = np.zeros((self.h, self.w), bool)
        out[self.ys + dy, self.xs + dx] = True
        return out


def tile_height(polygon: np.ndarray) -> float:
    """The long side of the tile's outline (px)."""
    return float(max(cv2.minAreaRect(polygon.astype(np.float32))[1]))


def _offsets(height: float, near: float, far: float) -> list[tuple[int, int]]:
    """Offsets on a grid of a quarter tile height, from `near` to `far` tile heights
    away, nearest first."""
    step = max(1.0, height / 4)
    k = int(np.ceil(far * height / step))
    grid = [(int(round(i * step)), int(round(j * step)))
            for i in range(-k, k + 1) for j in range(-k, k + 1)]
    grid = [(dx, dy) for dx, dy in grid if near * height <= np.hypot(dx, dy) <= far * height]
    return sorted(grid, key=lambda o: np.hypot(*o))


def table_fill(image: np.ndarray, polygon: np.ndarray, occupied: np.ndarray,
               height: float, table: np.ndarray | None = None,
               others: np.ndarray | None = None) -> np.ndarray | None:
    """The photo with the tile at `polygon` taken away: its place (grown a little, for
    its outline and shadow) filled with the table from the nearest free spot beside it
    (`occupied`: where any tile lies; `table`: the table's Lab colour around the tile, which
    the spot must have; `others`: the other tiles, left as they are). None when no free
    spot lies near enough."""
    grow = max(2, int(round(0.12 * height)))
    place = _mask(image.shape, polygon, grow)
    if others is not None:
        place &= ~others
    shape = _Shape(place)
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    for dx, dy in _offsets(height, 1.0, FILL_FROM):
        if not shape.fits(dx, dy, occupied):
            continue
        if table is not None and float(np.linalg.norm(np.median(
                lab[shape.ys + dy, shape.xs + dx], axis=0) - table)) > TABLE_TOL:
            continue  # not this table there
        source = np.roll(image, (-dy, -dx), axis=(0, 1))  # the free spot onto the place
        # Feathered at the edge: the patch's grain meets the table around it softly.
        alpha = cv2.GaussianBlur(place.astype(np.float32), (0, 0), max(1.0, grow / 2))
        alpha = np.maximum(alpha, _mask(image.shape, polygon).astype(np.float32))
        if others is not None:
            alpha[others] = 0.0
        out = image.astype(np.float32) * (1 - alpha[..., None]) \
            + source.astype(np.float32) * alpha[..., None]
        return np.clip(out, 0, 255).astype(np.uint8)
    return None


def _ring_colour(lab: np.ndarray, place: np.ndarray, occupied: np.ndarray,
                 reach: int) -> np.ndarray | None:
    """The table's median colour within `reach` px around `place`, off every tile."""
    ys, xs = np.nonzero(place)
    y0, x0 = max(0, ys.min() - reach - 1), max(0, xs.min() - reach - 1)
    y1, x1 = ys.max() + reach + 2, xs.max() + reach + 2
    crop = place[y0:y1, x0:x1].astype(np.uint8)
    ring = cv2.dilate(crop, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))).astype(bool)
    ring &= ~crop.astype(bool) & ~occupied[y0:y1, x0:x1]
    return np.median(lab[y0:y1, x0:x1][ring], axis=0) if ring.sum() >= 20 else None


def move_tile(image: np.ndarray, polygons: list[np.ndarray], index: int,
              rng: np.random.Generator, most: int = 4
              ) -> list[tuple[np.ndarray, tuple[float, float]]]:
    """Up to `most` ways to move tile `index` of the photo (`polygons`: every labelled
    tile) to a free place on the table: [(the changed photo, the tile's new centre)], in
    a random order of the free places."""
    polygon = polygons[index]
    height = tile_height(polygon)
    clear = max(2, int(round(CLEAR * height)))
    occupied = np.zeros(image.shape[:2], bool)
    keep_free = np.zeros(image.shape[:2], bool)
    others = np.zeros(image.shape[:2], bool)
    for i, p in enumerate(polygons):
        occupied |= _mask(image.shape, p, max(2, int(round(0.12 * height))))
        keep_free |= _mask(image.shape, p, clear)
        if i != index:
            others |= _mask(image.shape, p)
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    around_old = _ring_colour(lab, _mask(image.shape, polygon), occupied, clear + 2)
    filled = table_fill(image, polygon, occupied, height, around_old, others)
    if filled is None:
        return []
    roomy = _Shape(_mask(image.shape, polygon, clear))  # the new place and the table around
    places = [o for o in _offsets(height, STEPS[0], STEPS[1]) if roomy.fits(*o, keep_free)]
    outline = _Shape(_mask(image.shape, polygon, 1))
    out = []
    for k in rng.permutation(len(places)):
        dx, dy = places[k]
        new = outline.at(dx, dy)
        around_new = _ring_colour(lab, new, occupied, clear + 2)
        if (around_old is not None and (around_new is None or float(
                np.linalg.norm(around_new - around_old)) > TABLE_TOL)):
            continue  # not this table around it (the floor, a rack, a box)
        changed = filled.copy()
        changed[outline.ys + dy, outline.xs + dx] = image[outline.ys, outline.xs]
        centre = polygon.mean(axis=0) + (dx, dy)
        out.append((changed, (float(centre[0]), float(centre[1]))))
        if len(out) >= most:
            break
    return out


def _found(det, centre, height: float) -> int | None:
    """The detection nearest `centre`, when within FOUND_WITHIN tile heights."""
    if not len(det):
        return None
    d = np.linalg.norm(det.centers - np.asarray(centre, np.float32), axis=1) / height
    j = int(np.argmin(d))
    return j if d[j] < FOUND_WITHIN else None


def find_change(labelled, image: np.ndarray, reader, rng: np.random.Generator
                ) -> TableChange | None:
    """A change of the labelled photo (`image`, BGR) a detector sees on the still photo
    (see the module notes), or None when no tile of it can be moved so."""
    from vision.recognition.decode import Photo

    def read(picture: np.ndarray):
        ok, data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, 90])
        return reader.read(Photo.from_bytes(data.tobytes()))

    polygons = [t.polygon for t in labelled.tiles]
    before = read(image)
    order = sorted(range(len(polygons)),
                   key=lambda i: cv2.contourArea(polygons[i].astype(np.float32)))
    for index in order[:TILES_TRIED]:
        polygon, code = polygons[index], labelled.tiles[index].code
        height = tile_height(polygon)
        old = tuple(float(v) for v in polygon.mean(axis=0))
        j = _found(before, old, height)
        if j is None or before.labels[int(before.class_ids[j])] != code:
            continue  # the tracker never held this tile as it is labelled
        for changed, centre in move_tile(image, polygons, index, rng):
            after = read(changed)
            k = _found(after, centre, height)
            if (k is None or after.labels[int(after.class_ids[k])] != code
                    or _found(after, old, height) is not None
                    or sorted(after.codes) != sorted(before.codes)):
                continue
            return TableChange(labelled.key, code, old, centre, height, changed)
    return None
