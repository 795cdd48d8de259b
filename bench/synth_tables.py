"""Synthetic tables whose true sets are known: the geometry of tiles laid as players lay them.

`synth_table(rng)` lays runs and groups (jokers, touching sets, rotated sets, columns,
oblique views, loose tiles, a few upside-down tiles) on a table plane, photographs it
with a perspective camera and adds corner noise like a detector's. It returns the tiles'
codes (drawn from one box: never more copies than a box holds), their upright corners
in photo pixels, and the true sets in reading order.

`render_table(rng, table)` paints such a table into a photo with the training renderer's
tile faces, surfaces and photo effects (needs Pillow, i.e. the `train` extra), so the
whole pipeline can be measured on it with exact truth.

Numpy and OpenCV only (rendering aside): used by tests and by `bench/eval_table.py`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

ASPECT = 0.72  # tile face width / height
MODES = ("rows", "rotated", "any", "columns")


@dataclass
class SynthTable:
    codes: list[str]
    quads: np.ndarray  # (N, 4, 2) float32, clockwise from the upright top-left, photo px
    sets: list[list[int]]  # true sets, tile indices in reading order
    loose: list[int]
    width: int
    height: int
    mode: str = "rows"
    plane_quads: np.ndarray | None = None  # the same tiles on the table plane (no camera)
    homography: np.ndarray | None = None  # table plane -> photo
    flipped: list[int] = field(default_factory=list)

    def true_quads(self) -> np.ndarray:
        """(N, 4, 2) the tiles' exact corners in the photo (no detector-like noise)."""
        return _project(self.plane_quads, self.homography)


def tile_corners(centre, angle: float, w: float, h: float) -> np.ndarray:
    """tl, tr, br, bl of an upright tile rotated `angle` rad (clockwise on screen)."""
    r = np.array([math.cos(angle), math.sin(angle)])
    d = np.array([-math.sin(angle), math.cos(angle)])
    c = np.asarray(centre, np.float64)
    return np.stack([c - r * w / 2 - d * h / 2, c + r * w / 2 - d * h / 2,
                     c + r * w / 2 + d * h / 2, c - r * w / 2 + d * h / 2])


def full_box() -> Counter:
    """The tiles of one standard box: two of each colour and number, two jokers."""
    box = Counter({f"{c}{k}": 2 for c in "KRBO" for k in range(1, 14)})
    box["J"] = 2
    return box


def random_set(rng: np.random.Generator, *, joker_p: float = 0.2, invalid_p: float = 0.1,
               box: Counter | None = None):
    """Tile codes of a run or group as laid (mostly valid; sometimes broken).

    With `box`, the set is drawn from the tiles still in it (and taken out of it), so a
    table never shows more copies of a tile than one box holds; None when no set drawn
    in a few tries fits.
    """
    for _try in range(50):
        codes = _draw_set(rng, joker_p, invalid_p)
        if box is None:
            return codes
        need = Counter(codes)
        if all(box[c] >= k for c, k in need.items()):
            box.subtract(need)
            return codes
    return None


def _draw_set(rng: np.random.Generator, joker_p: float, invalid_p: float) -> list[str]:
    if rng.random() < 0.55:
        color = "KRBO"[rng.integers(4)]
        n = int(rng.integers(3, 8))
        start = int(rng.integers(1, 15 - n))
        codes = [f"{color}{k}" for k in range(start, start + n)]
    else:
        colors = list(rng.permutation(list("KRBO"))[: rng.integers(3, 5)])
        k = int(rng.integers(1, 14))
        codes = [f"{c}{k}" for c in colors]
    if rng.random() < joker_p:
        codes[rng.integers(len(codes))] = "J"
    if rng.random() < invalid_p:
        i = int(rng.integers(len(codes)))
        codes[i] = f"{'KRBO'[rng.integers(4)]}{rng.integers(1, 14)}"
    return codes


def _rect_axes(q: np.ndarray):
    c = q.mean(axis=0)
    r = q[1] - q[0]
    d = q[3] - q[0]
    return c, r / np.linalg.norm(r), d / np.linalg.norm(d), np.linalg.norm(r) / 2, np.linalg.norm(d) / 2


def _overlap(a: np.ndarray, b: np.ndarray, grow_a: tuple[float, float]) -> bool:
    """Separating-axis test of rectangle a grown by (along, across) tile fractions, and b."""
    ca, ra, da, wa, ha = _rect_axes(a)
    wa, ha = wa * (1 + 2 * grow_a[0]), ha * (1 + 2 * grow_a[1])
    cb, rb, db, wb, hb = _rect_axes(b)
    t = cb - ca
    for axis in (ra, da, rb, db):
        pa = wa * abs(ra @ axis) + ha * abs(da @ axis)
        pb = wb * abs(rb @ axis) + hb * abs(db @ axis)
        if abs(t @ axis) > pa + pb:
            return False
    return True


def synth_table(
    rng: np.random.Generator,
    *,
    width: int = 1000,
    height: int = 750,
    n_sets: int | None = None,
    n_loose: int | None = None,
    mode: str | None = None,
    oblique: float | None = None,
    noise: float = 0.02,
    flip_p: float = 0.02,
    pair_p: float = 0.05,
    tile_w: float | None = None,
    set_clearance: float = 0.6,
    row_clearance: float = 0.08,
) -> SynthTable:
    """A random table. `oblique` in [0, 1): how much narrower the far edge looks (0 = top view).

    Sets keep at least `set_clearance` tile widths from other tiles along their line and
    `row_clearance` tile heights across it (sets may lie that close: "touching sets").
    """
    mode = mode or str(rng.choice(MODES))
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    oblique = float(rng.uniform(0, 0.45)) if oblique is None else float(oblique)
    n_sets = int(rng.integers(3, 15)) if n_sets is None else n_sets
    n_loose = int(rng.integers(0, 5)) if n_loose is None else n_loose
    w = float(tile_w or rng.uniform(38, 62) * width / 1000)
    h = w / ASPECT
    base = float(rng.uniform(0, 2 * math.pi))

    def angle_for() -> float:
        jitter = float(rng.normal(0, 0.03))
        if mode == "rows":
            return jitter
        if mode == "rotated":
            return base + jitter
        if mode == "columns":
            return (-math.pi / 2 if rng.random() < 0.5 else math.pi / 2) + jitter
        return float(rng.uniform(0, 2 * math.pi))

    # Camera: the photo sees a trapezoid of the table plane, wider at the far (top) edge, so
    # far tiles look smaller. H maps table-plane points to photo pixels.
    import cv2

    kx = oblique * width / 2
    src = np.float32([[-kx, -oblique * height * 0.35], [width + kx, -oblique * height * 0.35],
                      [width, height], [0, height]])
    dst = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    H = cv2.getPerspectiveTransform(src, dst).astype(np.float64)
    plane: list[np.ndarray] = []
    codes: list[str] = []
    sets: list[list[int]] = []
    loose: list[int] = []
    margin = 0.04 * max(width, height)

    def free(new: list[np.ndarray], grow: tuple[float, float]) -> bool:
        for q in new:
            p = _project(q[None], H)[0]
            if p[:, 0].min() < margin or p[:, 1].min() < margin:
                return False
            if p[:, 0].max() > width - margin or p[:, 1].max() > height - margin:
                return False
            c = q.mean(axis=0)
            reach = (w + h) * (1 + 2 * max(grow))
            for old in plane:
                if np.abs(old[0] - c).max() > reach:
                    continue
                if _overlap(old, q, grow) or _overlap(q, old, grow):
                    return False
        return True

    box = full_box()
    for _ in range(n_sets):
        set_codes = random_set(rng, box=box)
        if set_codes is None:
            break
        if rng.random() < pair_p:
            box.update(set_codes[2:])
            set_codes = set_codes[:2]
        n = len(set_codes)
        for _try in range(40):
            ang = angle_for()
            r = np.array([math.cos(ang), math.sin(ang)])
            gaps = rng.uniform(0.0, 0.06, n) * w
            c0 = np.array([rng.uniform(-kx, width + kx), rng.uniform(-kx * 0.7, height)])
            quads, pos = [], 0.0
            for k in range(n):
                centre = c0 + r * pos + rng.normal(0, 0.01 * w, 2)
                quads.append(tile_corners(centre, ang + rng.normal(0, 0.015), w, h))
                pos += w + gaps[k]
            if free(quads, (set_clearance, row_clearance)):
                first = len(plane)
                plane.extend(quads)
                codes.extend(set_codes)
                sets.append(list(range(first, first + n)))
                break
        else:
            box.update(set_codes)  # no room for it: its tiles stay in the box
    for _ in range(n_loose):
        if not +box:
            break
        for _try in range(40):
            ang = float(rng.uniform(0, 2 * math.pi))
            q = tile_corners((rng.uniform(-kx, width + kx), rng.uniform(-kx * 0.7, height)), ang,
                             w, h)
            if free([q], (set_clearance, set_clearance * ASPECT)):
                loose.append(len(plane))
                plane.append(q)
                code = str(rng.choice(sorted(+box)))
                box[code] -= 1
                codes.append(code)
                break

    plane_q = np.array(plane, np.float64).reshape(-1, 4, 2)
    if len(plane_q):
        photo = _project(plane_q, H)
        sizes = np.linalg.norm(photo[:, 1] - photo[:, 0], axis=1)
        photo = photo + rng.normal(0, 1, photo.shape) * (noise * sizes)[:, None, None]
    else:
        photo = plane_q
    flipped = []
    in_long_set = {i for s in sets if len(s) >= 3 for i in s}
    for i in range(len(photo)):
        # A tile laid upside down in a line of two leaves its reading direction undecided.
        if rng.random() < flip_p and (i in in_long_set or i in loose):  # a tile laid upside down: its upright corners turn 180
            photo[i] = np.roll(photo[i], 2, axis=0)
            plane_q[i] = np.roll(plane_q[i], 2, axis=0)
            flipped.append(i)
    return SynthTable(codes, photo.astype(np.float32), sets, sorted(loose), width, height, mode,
                      plane_q.astype(np.float32), H, flipped)


@dataclass
class SynthTurn:
    """A turn photographed twice: `after` is `before` plus one set laid from the rack, seen
    by a camera that moved a little between the photos."""

    before: SynthTable
    after: SynthTable
    played: list[int]  # ids in `after` of the tiles laid this turn


def synth_turn(rng: np.random.Generator, *, max_move: float = 0.03) -> SynthTurn:
    """A table of 3-10 valid-or-not sets, then the same table with one more set laid.

    Between the photos the camera turns up to 3 degrees, shifts up to `max_move` of the
    photo's size and zooms 0.97-1.0, keeping every tile in the picture.
    """
    from dataclasses import replace

    n_sets = int(rng.integers(3, 11))
    after = synth_table(rng, n_sets=n_sets, n_loose=0, flip_p=0.0, pair_p=0.0)
    last = after.sets[-1]
    keep = [i for i in range(len(after.codes)) if i not in set(last)]
    before = replace(after, codes=[after.codes[i] for i in keep], quads=after.quads[keep],
                     sets=after.sets[:-1], loose=[], plane_quads=after.plane_quads[keep])
    w, h = after.width, after.height
    for _try in range(50):
        a = math.radians(rng.uniform(-3, 3))
        k = rng.uniform(0.97, 1.0)
        t = rng.uniform(-max_move, max_move, 2) * (w, h)
        c = np.array([w / 2, h / 2])
        m = k * np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        move = np.eye(3)
        move[:2, :2] = m
        move[:2, 2] = c + t - m @ c
        H = move @ after.homography
        quads = _project(after.plane_quads, H)
        if quads[..., 0].min() > 2 and quads[..., 1].min() > 2 and \
                quads[..., 0].max() < w - 2 and quads[..., 1].max() < h - 2:
            break
    else:
        H, quads = after.homography, _project(after.plane_quads, after.homography)
    after = replace(after, quads=quads.astype(np.float32), homography=H)
    return SynthTurn(before, after, list(last))


def jpeg_roundtrip(image: np.ndarray, quality: int = 90) -> np.ndarray:
    """`image` as a camera delivers it: JPEG-encoded and decoded again."""
    import cv2

    _ok, jpg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(jpg, cv2.IMREAD_COLOR)


def _project(quads: np.ndarray, H: np.ndarray) -> np.ndarray:
    import cv2

    pts = cv2.perspectiveTransform(np.asarray(quads, np.float64).reshape(-1, 1, 2), H)
    return pts.reshape(-1, 4, 2)


def render_table(rng: np.random.Generator, table: SynthTable) -> np.ndarray:
    """Paint `table` as a photo (BGR uint8) with the training renderer's look (needs Pillow).

    The tiles are drawn on the table plane, the plane is warped by the table's camera
    and the renderer's light, blur, noise and JPEG-like effects are applied, so the true
    quads of `table.quads` (minus their added noise) hold for the picture.
    """
    import cv2

    from training import render as R

    w, h = table.width, table.height
    # The canvas covers every point of the plane the camera sees (the photo's corners
    # mapped back onto the plane) and every tile: were it smaller, the warp would fill
    # the rest by reflection and mirror tiles into the photo that no label knows about.
    seen = _project(np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64),
                    np.linalg.inv(table.homography)).reshape(-1, 2)
    pts = np.concatenate([seen, table.plane_quads.reshape(-1, 2)])
    lo = np.floor(pts.min(axis=0)) - 8
    hi = np.ceil(pts.max(axis=0)) + 8
    cw, ch = (hi - lo).astype(int)
    canvas, _surface_name = R._surface(rng, int(ch), int(cw))
    shift = (-lo).astype(np.float32)
    edition = R.random_edition(rng)
    thick = np.array([rng.normal(0, 0.05), 1.0], np.float32)
    for i in sorted(range(len(table.codes)), key=lambda k: float(table.plane_quads[k][:, 1].mean())):
        q = table.plane_quads[i] + shift
        tw = float(np.linalg.norm(q[1] - q[0]))
        face = R._face_for(table.codes[i], R.random_style(rng, table.codes[i], edition))
        R._draw_tile(canvas, face, q.astype(np.float32), thick * tw * edition["thick"])
    to_canvas = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]], np.float64)
    H = table.homography @ np.linalg.inv(to_canvas)
    photo = cv2.warpPerspective(canvas, H, (w, h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REFLECT)
    photo = R._photo_effects(rng, photo)
    return np.clip(photo, 0, 255).astype(np.uint8)
