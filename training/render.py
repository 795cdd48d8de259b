"""Synthetic Rummikub photos with exact tile labels (training only: uses Pillow for fonts).

Numbers are drawn only with the fonts in `training/fonts/` (see its README), so a render is
the same on every machine whatever fonts it has installed.

`render_scene(rng)` paints a table surface, clutter and tiles (runs and groups in touching
rows, scatters at any rotation, close-ups, a rack of standing tiles) in a flat "canvas",
then photographs it: a whole-scene perspective warp, light colour and gradient, vignetting,
soft shadows, blur, noise and JPEG artefacts.

Each label is `(code, quad)`: `code` from `vision.recognition.labels.TILE_CLASSES`, `quad` (4, 2)
float32 photo pixels, clockwise from the top-left corner of the tile's top face as its
number reads upright (tl, tr, br, bl). For tiles standing in a rack the quad is the whole
face, whose bottom 10-22 % the rack's lip hides (so every quad keeps a tile's shape). Tiles cut off by the photo's edge keep their whole quad (it may
reach outside the image); a tile whose centre is outside the photo or that is less than
40 % inside it is not labelled.

Editions here: cream, ivory and white bodies; number colours black, red, blue or teal,
orange or yellow; red and black smiley jokers; the two classic DejaVu faces. More editions
(the "Rummy" green as the fourth colour slot, more fonts, logos, joker faces) and the
scenes the cream photos lack (racks seen from the front, hands, hard negatives) are in
`training.editions`, which draws with this module's tools.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from vision.recognition.labels import TILE_CLASSES

KINDS = ("table", "scatter", "closeup", "rack", "empty")
KIND_WEIGHTS = (0.34, 0.26, 0.18, 0.14, 0.08)

FACE_W, FACE_H = 90, 128  # face texture size; real faces are ~0.70 wide/high
ASPECT = FACE_W / FACE_H

# Fonts the project ships (training/fonts/, licences beside them), never the machine's: a
# render must not change when a package installs fonts. The order is fixed because an
# edition stores a font index; the first CLASSIC_FONTS are the classic editions' faces.
FONT_DIR = Path(__file__).resolve().parent / "fonts"
FONT_FILES = (
    "DejaVuSans-Bold.ttf",
    "DejaVuSansCondensed-Bold.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSansMono-Bold.ttf",
    "Roboto-Bold.ttf",
    "RobotoCondensed-Bold.ttf",
    "OpenSans-ExtraBold.ttf",
    "ComicNeue-Bold.otf",
)
CLASSIC_FONTS = 2

# BGR colours of the printed numbers per colour slot: a few editions each.
INK = {
    "K": [(28, 26, 30), (40, 40, 40), (20, 20, 15)],
    "R": [(45, 35, 215), (40, 30, 190), (70, 50, 225)],
    "B": [(190, 95, 25), (170, 80, 15), (160, 140, 20), (200, 120, 40)],  # blue, teal
    "O": [(30, 135, 245), (20, 115, 235), (25, 185, 240), (40, 160, 250)],  # orange, yellow
}
JOKER_INK = {"red": [(45, 35, 215), (50, 40, 200)], "black": [(28, 26, 30), (45, 45, 45)]}
BODIES = [(215, 234, 244), (205, 228, 240), (228, 240, 246), (242, 244, 244), (236, 238, 238)]


# ----------------------------------------------------------------------------- fonts
def font_paths() -> tuple[str, ...]:
    """The shipped TrueType fonts, in `FONT_FILES` order."""
    return tuple(str(FONT_DIR / name) for name in FONT_FILES)


@lru_cache(maxsize=64)
def _font(index: int, size: int):
    return ImageFont.truetype(str(FONT_DIR / FONT_FILES[index % len(FONT_FILES)]), size)


@lru_cache(maxsize=512)
def _text_mask(text: str, font_index: int, size: int) -> np.ndarray:
    """Tight float32 coverage mask (0..1) of `text`."""
    font = _font(font_index, size)
    left, top, right, bottom = font.getbbox(text)
    image = Image.new("L", (right - left + 4, bottom - top + 4), 0)
    ImageDraw.Draw(image).text((2 - left, 2 - top), text, fill=255, font=font)
    mask = np.asarray(image, np.float32) / 255.0
    ys, xs = np.nonzero(mask > 0.02)
    return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _paste(face: np.ndarray, mask: np.ndarray, color, cx: float, cy: float, alpha=1.0):
    """Alpha-blend a solid `color` through `mask` centred at (cx, cy) into `face` (float)."""
    h, w = mask.shape
    x0, y0 = int(round(cx - w / 2)), int(round(cy - h / 2))
    fx0, fy0 = max(x0, 0), max(y0, 0)
    fx1, fy1 = min(x0 + w, face.shape[1]), min(y0 + h, face.shape[0])
    if fx1 <= fx0 or fy1 <= fy0:
        return
    m = mask[fy0 - y0 : fy1 - y0, fx0 - x0 : fx1 - x0, None] * alpha
    region = face[fy0:fy1, fx0:fx1]
    region[:] = region * (1 - m) + np.asarray(color, np.float32) * m


# ----------------------------------------------------------------------------- faces
@lru_cache(maxsize=1)
def _rounded_mask() -> np.ndarray:
    mask = np.zeros((FACE_H * 4, FACE_W * 4), np.uint8)
    r = int(FACE_W * 4 * 0.11)
    cv2.rectangle(mask, (r, 0), (FACE_W * 4 - 1 - r, FACE_H * 4 - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (FACE_W * 4 - 1, FACE_H * 4 - 1 - r), 255, -1)
    for x, y in ((r, r), (FACE_W * 4 - 1 - r, r), (r, FACE_H * 4 - 1 - r),
                 (FACE_W * 4 - 1 - r, FACE_H * 4 - 1 - r)):
        cv2.circle(mask, (x, y), r, 255, -1, cv2.LINE_AA)
    return cv2.resize(mask, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA)


@lru_cache(maxsize=4096)
def tile_face(code: str, style: tuple) -> np.ndarray:
    """The upright face of `code` (FACE_H, FACE_W, 4) uint8 BGRA; alpha = rounded outline.

    `style` = (body index, ink variant, font index, number scale x100, ring on, ring y x100,
    joker colour, logo on).
    """
    body_i, ink_i, font_i, scale, ring, ring_y, joker_color, logo = style
    body = np.asarray(BODIES[body_i % len(BODIES)], np.float32)
    yy = np.linspace(-1, 1, FACE_H, dtype=np.float32)[:, None, None]
    face = np.empty((FACE_H, FACE_W, 3), np.float32)
    face[:] = body
    face += yy * 4.0  # a faint top-to-bottom shading
    cx, cy = FACE_W / 2, FACE_H * ring_y / 100.0
    if ring:
        disc = np.zeros((FACE_H, FACE_W), np.float32)
        rad = int(FACE_W * 0.42)
        cv2.circle(disc, (int(cx), int(cy)), rad, 1.0, -1, cv2.LINE_AA)
        disc = cv2.GaussianBlur(disc, (0, 0), 1.2)
        face += disc[..., None] * np.float32(6.0)
        edge = np.zeros((FACE_H, FACE_W), np.float32)
        cv2.circle(edge, (int(cx), int(cy)), rad, 1.0, 2, cv2.LINE_AA)
        edge = cv2.GaussianBlur(edge, (0, 0), 0.9)
        face -= edge[..., None] * np.float32(22.0)
    if code == "J":
        ink = np.asarray(JOKER_INK[joker_color][ink_i % 2], np.float32)
        _draw_smiley(face, ink, cx, cy, FACE_W * 0.33 * scale / 100.0)
    else:
        ink = INK[code[0]][ink_i % len(INK[code[0]])]
        text = code[1:]
        target_h = FACE_H * 0.30 * scale / 100.0
        mask = _text_mask(text, font_i, 64)
        h, w = mask.shape
        new_h = target_h
        new_w = w * new_h / h
        if new_w > FACE_W * 0.78:  # condense wide numbers, as the real tiles do
            new_w = FACE_W * 0.78
        mask = cv2.resize(mask, (max(2, int(round(new_w))), max(2, int(round(new_h)))),
                          interpolation=cv2.INTER_AREA)
        _paste(face, mask, ink, cx, cy)
    if logo:
        mask = _text_mask("Rummikub", 0, 28)
        w = FACE_W * 0.62
        mask = cv2.resize(mask, (int(w), max(2, int(w * mask.shape[0] / mask.shape[1]))),
                          interpolation=cv2.INTER_AREA)
        ly = FACE_H * 0.86
        _paste(face, mask, body + 18.0, cx + 0.6, ly + 0.6, 0.6)  # highlight
        _paste(face, mask, body * 0.82, cx, ly, 0.55)  # embossed shade
    out = np.empty((FACE_H, FACE_W, 4), np.uint8)
    out[..., :3] = np.clip(face, 0, 255)
    out[..., 3] = _rounded_mask()
    return out


def _draw_smiley(face: np.ndarray, ink: np.ndarray, cx: float, cy: float, r: float):
    s = 4  # supersample
    m = np.zeros((FACE_H * s, FACE_W * s), np.uint8)
    c = (int(cx * s), int(cy * s))
    rr = int(r * s)
    cv2.circle(m, c, rr, 255, max(2, int(0.12 * rr)), cv2.LINE_AA)
    for dx in (-0.35, 0.35):
        cv2.ellipse(m, (int(c[0] + dx * rr), int(c[1] - 0.25 * rr)),
                    (int(0.11 * rr), int(0.17 * rr)), 0, 0, 360, 255, -1, cv2.LINE_AA)
        cv2.circle(m, (int(c[0] + dx * 1.45 * rr), int(c[1] + 0.12 * rr)), int(0.12 * rr),
                   255, max(1, int(0.05 * rr)), cv2.LINE_AA)  # cheeks
    cv2.ellipse(m, (c[0], int(c[1] + 0.05 * rr)), (int(0.55 * rr), int(0.5 * rr)), 0, 20, 160,
                255, max(2, int(0.1 * rr)), cv2.LINE_AA)
    mask = cv2.resize(m, (FACE_W, FACE_H), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    face[:] = face * (1 - mask[..., None]) + ink * mask[..., None]


def random_style(rng: np.random.Generator, code: str, edition: dict | None = None) -> tuple:
    """A tile look; `edition` (from `random_edition`, or a `training.editions.Edition`)
    keeps one set's tiles consistent."""
    if hasattr(edition, "look"):
        return edition.look(code, rng)
    e = edition or random_edition(rng)
    return (
        e["body"],
        e["ink"] if code != "J" else int(rng.integers(2)),
        e["font"],
        int(np.clip(e["scale"] + rng.normal(0, 2), 80, 120)),
        e["ring"],
        e["ring_y"],
        "red" if rng.random() < 0.5 else "black",
        e["logo"],
    )


def random_edition(rng: np.random.Generator) -> dict:
    return {
        "body": int(rng.integers(len(BODIES))),
        "ink": int(rng.integers(4)),
        "font": int(rng.integers(CLASSIC_FONTS)),
        "scale": int(rng.integers(92, 112)),
        "ring": bool(rng.random() < 0.8),
        "ring_y": int(rng.integers(38, 46)),
        "logo": bool(rng.random() < 0.85),
        "thick": float(rng.uniform(0.10, 0.22)),
    }


# ----------------------------------------------------------------------------- surfaces
def _smooth_noise(rng, h, w, cells, octaves=3) -> np.ndarray:
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for o in range(octaves):
        ch = max(2, int(cells * 2**o * h / max(h, w)) + 2)
        cw = max(2, int(cells * 2**o * w / max(h, w)) + 2)
        small = rng.standard_normal((ch, cw)).astype(np.float32)
        out += amp * cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= 0.5
    return out / total


SURFACES = ("dark_wood", "light_wood", "cloth", "marble", "plain", "white")


def _surface(rng: np.random.Generator, h: int, w: int, kind: str | None = None
             ) -> tuple[np.ndarray, str]:
    if kind is None:
        kind = str(rng.choice(["dark_wood", "light_wood", "cloth", "marble", "plain", "white"]))
    # work at half resolution, then upsample (speed)
    sh, sw = h // 2 + 1, w // 2 + 1
    if kind in ("dark_wood", "light_wood"):
        base = (np.array([35, 60, 95]) if kind == "dark_wood" else np.array([120, 170, 210]))
        base = base * rng.uniform(0.75, 1.2) + rng.normal(0, 8, 3)
        angle = rng.uniform(0, np.pi)
        yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
        u = xx * np.cos(angle) + yy * np.sin(angle)
        v = -xx * np.sin(angle) + yy * np.cos(angle)
        warp = _smooth_noise(rng, sh, sw, 3) * rng.uniform(8, 25)
        freq = rng.uniform(0.08, 0.25)
        grain = np.sin((v + warp) * freq + _smooth_noise(rng, sh, sw, 6) * 2.0)
        fine = cv2.resize(rng.standard_normal((sh, max(2, sw // 8))).astype(np.float32),
                          (sw, sh), interpolation=cv2.INTER_LINEAR)
        fine = cv2.GaussianBlur(fine, (0, 0), 0.7)
        del u
        shade = 1.0 + 0.18 * grain + 0.08 * fine + 0.12 * _smooth_noise(rng, sh, sw, 2)
        img = shade[..., None] * base[None, None, :].astype(np.float32)
        if rng.random() < 0.5:  # planks
            pw = rng.uniform(80, 250)
            seams = (np.abs(((v + 5) % pw) - pw / 2) > pw / 2 - 1.2).astype(np.float32)
            img *= (1 - 0.45 * seams)[..., None]
    elif kind == "cloth":
        base = rng.uniform(60, 200) * np.array([1, 1, 1]) + rng.normal(0, 15, 3)
        yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
        p = rng.uniform(1.2, 3.0)
        weave = np.sin(xx * p) * np.sin(yy * p)
        grit = rng.standard_normal((sh, sw)).astype(np.float32)
        shade = 1 + 0.12 * weave + 0.12 * grit + 0.1 * _smooth_noise(rng, sh, sw, 4)
        img = shade[..., None] * base[None, None, :].astype(np.float32)
    elif kind == "marble":
        base = np.array([225, 225, 228]) * rng.uniform(0.85, 1.05) + rng.normal(0, 5, 3)
        field = _smooth_noise(rng, sh, sw, rng.uniform(1.5, 4), 4)
        field /= field.std() + 1e-6
        shade = 1 + 0.03 * _smooth_noise(rng, sh, sw, 8)
        for level in rng.normal(0, 0.8, int(rng.integers(1, 4))):
            sharp = rng.uniform(8, 30)
            shade -= rng.uniform(0.15, 0.45) * np.exp(-np.abs(field - level) * sharp)
        img = shade[..., None] * base[None, None, :].astype(np.float32)
    else:  # white / grey / coloured plain table
        if kind == "white" or rng.random() < 0.4:
            base = rng.uniform(150, 245) * np.ones(3) + rng.normal(0, 6, 3)
        else:
            base = rng.uniform(30, 200, 3)
        shade = 1 + 0.05 * _smooth_noise(rng, sh, sw, 3) + 0.015 * rng.standard_normal(
            (sh, sw)).astype(np.float32)
        img = shade[..., None] * base[None, None, :].astype(np.float32)
    img = cv2.resize(img.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    return img, str(kind)


def _clutter(rng, canvas: np.ndarray, occupied: np.ndarray, n: int, scale: float):
    """Boxes, paper, pens, coins and hands under/around the tiles; marks them occupied."""
    h, w = canvas.shape[:2]
    for _ in range(n):
        what = rng.choice(["box", "paper", "pen", "coin", "hand", "blob"])
        cx, cy = rng.uniform(-0.1, 1.1) * w, rng.uniform(-0.1, 1.1) * h
        ang = rng.uniform(0, 180)
        color = tuple(float(c) for c in rng.uniform(20, 240, 3))
        mask = np.zeros((h, w), np.uint8)
        if what == "box":
            size = (rng.uniform(3, 8) * scale, rng.uniform(2, 6) * scale)
            pts = cv2.boxPoints(((cx, cy), size, ang)).astype(np.int32)
            cv2.fillConvexPoly(mask, pts, 255, cv2.LINE_AA)
        elif what == "paper":
            color = tuple(float(c) for c in rng.uniform(200, 250) * np.ones(3) - rng.uniform(0, 15, 3))
            size = (rng.uniform(3, 6) * scale, rng.uniform(4, 8) * scale)
            pts = cv2.boxPoints(((cx, cy), size, ang)).astype(np.int32)
            cv2.fillConvexPoly(mask, pts, 255, cv2.LINE_AA)
        elif what == "pen":
            size = (rng.uniform(3, 6) * scale, rng.uniform(0.12, 0.25) * scale)
            pts = cv2.boxPoints(((cx, cy), size, ang)).astype(np.int32)
            cv2.fillConvexPoly(mask, pts, 255, cv2.LINE_AA)
        elif what == "coin":
            r = int(rng.uniform(0.2, 0.4) * scale)
            cv2.circle(mask, (int(cx), int(cy)), r, 255, -1, cv2.LINE_AA)
            color = tuple(float(c) for c in rng.choice([[60, 140, 190], [150, 150, 150]]))
        elif what == "hand":
            color = tuple(float(c) for c in (np.array([120, 150, 200]) * rng.uniform(0.5, 1.15)))
            r = rng.uniform(1.0, 1.6) * scale
            cv2.ellipse(mask, (int(cx), int(cy)), (int(r), int(r * 0.8)), ang, 0, 360, 255, -1)
            for k in range(4):
                a = math.radians(ang + 60 + k * 18)
                fx, fy = cx + math.cos(a) * r * 1.5, cy + math.sin(a) * r * 1.5
                cv2.ellipse(mask, (int(fx), int(fy)), (int(r * 0.6), int(r * 0.17)),
                            math.degrees(a), 0, 360, 255, -1)
            if rng.random() < 0.6:  # arm to the edge
                ex, ey = cx + (cx - w / 2) * 3, cy + (cy - h / 2) * 3
                cv2.line(mask, (int(cx), int(cy)), (int(ex), int(ey)), 255, int(r * 1.3))
        else:
            r = rng.uniform(0.5, 2.5) * scale
            cv2.ellipse(mask, (int(cx), int(cy)), (int(r), int(r * rng.uniform(0.3, 1))), ang,
                        0, 360, 255, -1, cv2.LINE_AA)
        x, y, bw, bh = cv2.boundingRect(mask)
        if bw == 0 or bh == 0:
            continue
        m = mask[y : y + bh, x : x + bw].astype(np.float32)[..., None] / 255.0
        shade = 1 + 0.08 * _smooth_noise(rng, bh // 8 + 2, bw // 8 + 2, 3)
        shade = cv2.resize(shade, (bw, bh))[..., None]
        roi = canvas[y : y + bh, x : x + bw]
        roi[:] = roi * (1 - m) + (np.asarray(color, np.float32) * shade) * m
        small = cv2.resize(mask, (occupied.shape[1], occupied.shape[0]),
                           interpolation=cv2.INTER_NEAREST)
        occupied |= small > 0


# ----------------------------------------------------------------------------- tiles
def tile_quad(center, angle: float, width: float, height: float) -> np.ndarray:
    """tl, tr, br, bl of a tile centred at `center`, rotated `angle` rad clockwise on screen."""
    r = np.array([math.cos(angle), math.sin(angle)], np.float32)
    up = np.array([math.sin(angle), -math.cos(angle)], np.float32)
    c = np.asarray(center, np.float32)
    hw, hh = width / 2, height / 2
    return np.stack([c - r * hw + up * hh, c + r * hw + up * hh,
                     c + r * hw - up * hh, c - r * hw - up * hh]).astype(np.float32)


class TileBox:
    """The tiles of one box a scene has not used yet: a photo never shows more copies of
    a tile than a box holds (two of each, two jokers), or the rules' copy check would
    "correct" right readings of an impossible photo.

    `take(codes)` keeps the codes as drawn when the box holds them. Otherwise it draws a
    set of the same shape that the box does hold (a run stays a run of that length, a group
    a group, jokers where they were), or else swaps each tile the box lacks for one it holds.
    Those draws come from the box's own generator, seeded from the scene's without drawing
    from it, so every other draw of the scene stays as it was. A scene that uses up the
    box opens a second one."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.left = self.full()
        self._rng = np.random.default_rng(zlib.crc32(repr(rng.bit_generator.state).encode()))

    @staticmethod
    def full() -> Counter:
        from bench.synth_tables import full_box

        return full_box()

    def holds(self, codes: list[str]) -> bool:
        return all(self.left[c] >= k for c, k in Counter(codes).items())

    def take(self, codes) -> list[str]:
        codes = [str(c) for c in codes]
        if not self.holds(codes):
            codes = self._like(codes)
        self.left.subtract(codes)
        return codes

    def _like(self, codes: list[str]) -> list[str]:
        shape = _set_shape(codes)
        jokers = [c == "J" for c in codes]
        for _ in range(200 if shape else 0):
            trial = self._draw(shape, len(codes))
            trial = ["J" if j else c for c, j in zip(trial, jokers, strict=True)]
            if self.holds(trial):
                return trial
        out = []
        for code in codes:
            if self.left[code] - out.count(code) <= 0:
                spare = sorted(c for c, k in self.left.items()
                               if k - out.count(c) > 0 and (c == "J") == (code == "J"))
                if not spare:
                    spare = sorted(c for c, k in self.left.items() if k - out.count(c) > 0)
                if not spare:  # the box is used up: a second box
                    self.left.update(self.full())
                    spare = [code]
                code = spare[int(self._rng.integers(len(spare)))]
            out.append(code)
        return out

    def _draw(self, shape: str, n: int) -> list[str]:
        rng = self._rng
        if shape == "run":
            color = "KRBO"[int(rng.integers(4))]
            start = int(rng.integers(1, 15 - n))
            return [f"{color}{k}" for k in range(start, start + n)]
        k = int(rng.integers(1, 14))
        return [f"{c}{k}" for c in rng.permutation(list("KRBO"))[:n]]


def _set_shape(codes: list[str]) -> str | None:
    """"run" or "group" for codes that lie as a valid one (the referee's judgement), else
    None."""
    from referee import check_set

    verdict = check_set(" ".join(codes))
    return verdict.kind if verdict.valid else None


class _Canvas:
    def __init__(self, image: np.ndarray, rng: np.random.Generator, occ_scale: float = 0.25):
        self.image = image
        self.box = TileBox(rng)
        h, w = image.shape[:2]
        self.occ_scale = occ_scale
        self.occupied = np.zeros((int(h * occ_scale) + 1, int(w * occ_scale) + 1), bool)
        self.shadow = np.zeros((int(h * occ_scale) + 1, int(w * occ_scale) + 1), np.float32)
        self.tiles: list[dict] = []  # code, quad, style, thick, visible quad

    def free(self, quads: list[np.ndarray], margin: float) -> bool:
        m = np.zeros_like(self.occupied, np.uint8)
        for quad in quads:
            c = quad.mean(0)
            grown = c + (quad - c) * (1 + margin)
            cv2.fillConvexPoly(m, np.round(grown * self.occ_scale).astype(np.int32), 1)
        return not (self.occupied & (m > 0)).any()

    def occupy(self, quads: list[np.ndarray]):
        m = np.zeros_like(self.occupied, np.uint8)
        for quad in quads:
            cv2.fillConvexPoly(m, np.round(quad * self.occ_scale).astype(np.int32), 1)
        self.occupied |= m > 0


def _draw_tile(img: np.ndarray, face: np.ndarray, quad: np.ndarray, thick_vec: np.ndarray):
    """Side wall (extruded along `thick_vec`) then the face warped onto `quad`."""
    h, w = img.shape[:2]
    pts = np.concatenate([quad, quad + thick_vec])
    x0, y0 = np.floor(pts.min(0)).astype(int) - 2
    x1, y1 = np.ceil(pts.max(0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    roi = img[y0:y1, x0:x1]
    off = np.array([x0, y0], np.float32)
    body = face[FACE_H // 2, 4, :3].astype(np.float32)
    if np.linalg.norm(thick_vec) > 0.5:
        hull = cv2.convexHull((pts - off).astype(np.float32)).reshape(-1, 2)
        side = np.zeros(roi.shape[:2], np.uint8)
        cv2.fillConvexPoly(side, np.round(hull * 4).astype(np.int32), 255, cv2.LINE_AA, shift=2)
        s = side.astype(np.float32)[..., None] / 255
        roi[:] = roi * (1 - s) + (body * 0.72) * s
        # a darker line where the wall meets the table
        low = (quad + thick_vec - off)
        cv2.polylines(roi, [np.round(low * 4).astype(np.int32)], True,
                      tuple(float(c) for c in body * 0.55), 1, cv2.LINE_AA, shift=2)
    src = np.float32([[0, 0], [FACE_W, 0], [FACE_W, FACE_H], [0, FACE_H]])
    M = cv2.getPerspectiveTransform(src, (quad - off).astype(np.float32))
    warped = cv2.warpPerspective(face, M, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    a = warped[..., 3:4].astype(np.float32) / 255
    roi[:] = roi * (1 - a) + warped[..., :3].astype(np.float32) * a


def _place_row(rng, cv: _Canvas, codes, edition, tile_w, angle, flips=0.0, gap=(0.0, 2.5),
               tries=25) -> bool:
    h, w = cv.image.shape[:2]
    tile_h = tile_w / ASPECT
    n = len(codes)
    r = np.array([math.cos(angle), math.sin(angle)], np.float32)
    gaps = rng.uniform(*gap, n)
    length = n * tile_w + gaps[:-1].sum()
    for _ in range(tries):
        c = np.array([rng.uniform(-0.05, 1.05) * w, rng.uniform(-0.05, 1.05) * h], np.float32)
        start = c - r * (length / 2 - tile_w / 2)
        quads, pos = [], 0.0
        for i in range(n):
            center = start + r * pos
            jitter = rng.normal(0, 0.012)
            quads.append(tile_quad(center + rng.normal(0, 0.01 * tile_w, 2), angle + jitter,
                                   tile_w, tile_h))
            pos += tile_w + gaps[i]
        if cv.free(quads, 0.12):
            cv.occupy(quads)
            codes = cv.box.take(codes)
            for code, quad in zip(codes, quads, strict=True):
                if rng.random() < flips:
                    quad = np.roll(quad, 2, axis=0)
                cv.tiles.append({"code": code, "quad": quad, "vis": quad,
                                 "style": random_style(rng, code, edition)})
            return True
    return False


def _random_set(rng) -> list[str]:
    if rng.random() < 0.55:  # run
        color = "KRBO"[rng.integers(4)]
        n = int(rng.integers(3, 8))
        start = int(rng.integers(1, 15 - min(n, 13)))
        codes = [f"{color}{k}" for k in range(start, min(start + n, 14))]
    else:  # group
        colors = list(rng.permutation(list("KRBO"))[: rng.integers(3, 5)])
        k = int(rng.integers(1, 14))
        codes = [f"{c}{k}" for c in colors]
    if rng.random() < 0.15:
        codes[rng.integers(len(codes))] = "J"
    return codes


def _random_codes(rng, n: int) -> list[str]:
    return [TILE_CLASSES[i] for i in rng.integers(len(TILE_CLASSES), size=n)]


def _scene_table(rng, cv, scale, edition):
    any_angle = rng.random() < 0.3
    base = rng.uniform(0, 2 * np.pi) if rng.random() < 0.3 else rng.normal(0, 0.15)
    for _ in range(int(rng.integers(3, 14))):
        ang = rng.uniform(0, 2 * np.pi) if any_angle else base + rng.normal(0, 0.06)
        _place_row(rng, cv, _random_set(rng), edition, scale * rng.uniform(0.95, 1.05), ang,
                   flips=0.04)
    for _ in range(int(rng.integers(0, 8))):  # a few loose tiles
        _place_row(rng, cv, _random_codes(rng, 1), edition, scale, rng.uniform(0, 2 * np.pi))


def _scene_scatter(rng, cv, scale, edition):
    for _ in range(int(rng.integers(8, 60))):
        if rng.random() < 0.2:  # a few touching pairs/triples at random angles
            codes = _random_codes(rng, int(rng.integers(2, 4)))
        else:
            codes = _random_codes(rng, 1)
        _place_row(rng, cv, codes, edition, scale * rng.uniform(0.95, 1.05),
                   rng.uniform(0, 2 * np.pi), flips=0.5, tries=8)


def _scene_closeup(rng, cv, scale, edition):
    for _ in range(int(rng.integers(3, 14))):
        n = 1 if rng.random() < 0.6 else int(rng.integers(2, 5))
        _place_row(rng, cv, _random_codes(rng, n) if rng.random() < 0.5 else _random_set(rng)[:n],
                   edition, scale, rng.uniform(0, 2 * np.pi), flips=0.3, tries=10)


def _scene_rack(rng, cv: _Canvas, scale, edition):
    """A dark rack with two rows of standing tiles; the lip hides the bottom of each face."""
    h, w = cv.image.shape[:2]
    tile_w = scale
    tile_h = tile_w / ASPECT * rng.uniform(0.85, 1.0)  # standing tiles lean back
    n_per_row = int(rng.integers(6, 16))
    rack_w = tile_w * (n_per_row + rng.uniform(1, 3))
    row_h = tile_h * rng.uniform(1.0, 1.12)
    lip = rng.uniform(0.1, 0.22)  # share of a face hidden
    rack_h = row_h * 2 + tile_h * 0.3
    angle = rng.normal(0, 0.12)
    center = np.array([w * rng.uniform(0.35, 0.65), h * rng.uniform(0.35, 0.65)], np.float32)
    r = np.array([math.cos(angle), math.sin(angle)], np.float32)
    down = np.array([-math.sin(angle), math.cos(angle)], np.float32)
    img = cv.image
    col = np.asarray(rng.uniform(15, 60) * np.ones(3) + rng.normal(0, 5, 3), np.float32)

    def rect(cx, cy, ww, hh):  # rotated rect corners in canvas
        c = center + r * cx + down * cy
        return np.stack([c - r * ww / 2 - down * hh / 2, c + r * ww / 2 - down * hh / 2,
                         c + r * ww / 2 + down * hh / 2, c - r * ww / 2 + down * hh / 2])

    body = rect(0, 0, rack_w, rack_h)
    cv2.fillConvexPoly(img, np.round(body * 4).astype(np.int32),
                       tuple(float(c) for c in col), cv2.LINE_AA, shift=2)
    cv.occupy([body])
    for row in range(2):
        top = -rack_h / 2 + tile_h * 0.1 + row * row_h
        nt = int(rng.integers(max(1, n_per_row - 5), n_per_row + 1))
        x = -rack_w / 2 + tile_w * rng.uniform(0.4, 1.0)
        codes = _random_codes(rng, nt)
        for code in codes:
            if x + tile_w > rack_w / 2:
                break
            code = cv.box.take([code])[0]
            c = center + r * (x + tile_w / 2) + down * (top + tile_h / 2)
            quad = tile_quad(c, angle + rng.normal(0, 0.01), tile_w * 0.985, tile_h)
            if rng.random() < 0.05:
                quad = np.roll(quad, 2, axis=0)
            style = random_style(rng, code, edition)
            _draw_tile(img, _face_for(code, style), quad, np.zeros(2, np.float32))
            # the label is the whole face, its bottom hidden by the lip: a face's outline
            # keeps the tile's proportions (a quad cut at the lip could be wider than tall)
            cv.tiles.append({"code": code, "quad": quad, "vis": quad, "style": style,
                             "drawn": True})
            x += tile_w
        # the lip over the bottom of the row
        lip_top = top + tile_h * (1 - lip)
        lip_poly = rect(0, lip_top + tile_h * 0.2 - rack_h / 2 + rack_h / 2, rack_w,
                        tile_h * 0.4)
        shade = col * rng.uniform(0.8, 1.4)
        cv2.fillConvexPoly(img, np.round(lip_poly * 4).astype(np.int32),
                           tuple(float(c) for c in shade), cv2.LINE_AA, shift=2)
        cv2.line(img, tuple(np.round(lip_poly[0] * 4).astype(int)),
                 tuple(np.round(lip_poly[1] * 4).astype(int)),
                 tuple(float(c) for c in np.minimum(shade + 60, 255)), 1, cv2.LINE_AA, shift=2)


def _face_for(code: str, style: tuple) -> np.ndarray:
    if len(style) and style[0] == "look":  # an edition's look (training.editions)
        from training.editions import edition_face

        return edition_face(code, style)
    return tile_face(code, style)


# ----------------------------------------------------------------------------- camera
def _camera(rng, w, h, strength):
    """Homography canvas -> photo: the photo sees a (perspective) quad inside the canvas."""
    s = strength
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    jit = rng.uniform(0, s, (4, 2)) * np.float32([w, h])
    if rng.random() < 0.6:  # mostly a tilt: the far edge narrower
        k = rng.uniform(0, s) * w
        jit[0, 0] += k
        jit[1, 0] += k
    inward = np.float32([[1, 1], [-1, 1], [-1, -1], [1, -1]])
    src_q = src + inward * jit
    # random rotation of the view by 0/90/180/270 is NOT used: tiles already take any angle
    return cv2.getPerspectiveTransform(src_q.astype(np.float32), src)


def _apply_h(H, pts):
    p = cv2.perspectiveTransform(pts.reshape(-1, 1, 2).astype(np.float32), H)
    return p.reshape(-1, 2)


def _photo_effects(rng, img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    # light: colour temperature, gradient, vignette, soft shadow blobs
    temp = rng.uniform(-1, 1)
    gain = np.float32([1 - 0.15 * temp, 1.0, 1 + 0.15 * temp]) * rng.uniform(0.7, 1.15)
    light = 1 + 0.25 * _smooth_noise(rng, h // 8 + 1, w // 8 + 1, 2, 2)
    if rng.random() < 0.5:
        light -= rng.uniform(0.1, 0.45) * np.clip(
            _smooth_noise(rng, h // 8 + 1, w // 8 + 1, 3, 2) * 2, 0, 1)
    yy, xx = np.mgrid[0 : h // 8 + 1, 0 : w // 8 + 1].astype(np.float32)
    d = ((xx / (w / 8) - 0.5) ** 2 + (yy / (h / 8) - 0.5) ** 2) * 2
    light *= 1 - rng.uniform(0, 0.45) * d
    light = cv2.resize(light, (w, h), interpolation=cv2.INTER_LINEAR)
    img = img * light[..., None] * gain
    if rng.random() < 0.7:
        k = rng.uniform(0.3, 1.6)
        img = cv2.GaussianBlur(img, (0, 0), k)
    if rng.random() < 0.1:  # motion blur
        n = int(rng.integers(3, 8))
        kern = np.zeros((n, n), np.float32)
        kern[n // 2] = 1 / n
        M = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), rng.uniform(0, 180), 1)
        kern = cv2.warpAffine(kern, M, (n, n))
        img = cv2.filter2D(img, -1, kern / max(kern.sum(), 1e-6))
    sigma = rng.uniform(0, 7)
    if sigma > 0.5:
        noise = np.empty(img.shape, np.float32)
        cv2.setRNGSeed(int(rng.integers(2**31)))
        cv2.randn(noise, 0.0, sigma * 0.6)
        coarse = rng.normal(0, sigma * 0.5, (h // 2 + 1, w // 2 + 1)).astype(np.float32)
        noise += cv2.resize(coarse, (w, h), interpolation=cv2.INTER_NEAREST)[..., None]
        img = img + noise
    out = np.clip(img, 0, 255).astype(np.uint8)
    q = int(rng.integers(35, 96))
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


# ----------------------------------------------------------------------------- scene
def render_scene(
    rng: np.random.Generator, *, width: int | None = None, height: int | None = None,
    kind: str | None = None, surface: str | None = None,
) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """A synthetic photo (BGR uint8) and its tiles [(code, quad (4,2) float32)].

    `kind` is one of KINDS, `surface` one of SURFACES (None = random). Default size:
    1000x750 or 750x1000.
    Deterministic given the generator's state.
    """
    if width is None or height is None:
        width, height = (1000, 750) if rng.random() < 0.7 else (750, 1000)
    if kind is None:
        kind = str(rng.choice(KINDS, p=KIND_WEIGHTS))
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    w, h = int(width), int(height)
    if surface is not None and surface not in SURFACES:
        raise ValueError(f"surface must be one of {SURFACES}, not {surface!r}")
    canvas_img, surface = _surface(rng, h, w, surface)
    cv = _Canvas(canvas_img, rng)
    side = max(w, h)
    if kind == "closeup":
        scale = side * rng.uniform(0.08, 0.17)
    elif kind == "rack":
        scale = side * rng.uniform(0.035, 0.07)
    else:
        scale = side * rng.uniform(0.035, 0.08)
    _clutter(rng, cv.image, cv.occupied, int(rng.integers(0, 5 if kind != "empty" else 9)),
             scale)
    edition = random_edition(rng)
    if kind == "table":
        _scene_table(rng, cv, scale, edition)
    elif kind == "scatter":
        _scene_scatter(rng, cv, scale, edition)
    elif kind == "closeup":
        _scene_closeup(rng, cv, scale, edition)
    elif kind == "rack":
        _scene_rack(rng, cv, scale, edition)
        if rng.random() < 0.5:
            _scene_scatter(rng, cv, scale * 1.1, edition)

    # shadows, then side walls + faces, far (small y) first
    light_dir = np.array([rng.uniform(-0.25, 0.25), rng.uniform(0.05, 0.3)], np.float32)
    thick_dir = np.array([rng.normal(0, 0.05), 1.0], np.float32)
    flat = [t for t in cv.tiles if not t.get("drawn")]
    if flat:
        sh = np.zeros_like(cv.shadow)
        for t in flat:
            tw = float(np.linalg.norm(t["quad"][1] - t["quad"][0]))
            q = (t["quad"] + light_dir * tw) * cv.occ_scale
            cv2.fillConvexPoly(sh, np.round(q * 4).astype(np.int32), 1.0, cv2.LINE_AA, shift=2)
        sh = cv2.GaussianBlur(sh, (0, 0), max(1.0, scale * cv.occ_scale * 0.15))
        sh = cv2.resize(sh, (w, h), interpolation=cv2.INTER_LINEAR)
        cv.image *= (1 - rng.uniform(0.2, 0.5) * np.clip(sh, 0, 1))[..., None]
        for t in sorted(flat, key=lambda t: float(t["quad"][:, 1].mean())):
            tw = float(np.linalg.norm(t["quad"][1] - t["quad"][0]))
            _draw_tile(cv.image, _face_for(t["code"], t["style"]), t["quad"],
                       thick_dir * tw * edition["thick"])

    # the camera may tilt, but every tile must stay taller than wide in the photo (the
    # detector's quads take the long side as the tile's up-down axis)
    strength = 0.2 if kind == "rack" else 0.12
    for _ in range(6):
        H = _camera(rng, w, h, strength)
        if all(_portrait(_apply_h(H, t["vis"])) for t in cv.tiles):
            break
        strength *= 0.6
    else:
        H = np.eye(3)
    photo = cv2.warpPerspective(cv.image, H, (w, h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REFLECT)
    photo = _photo_effects(rng, photo)
    labels: list[tuple[str, np.ndarray]] = []
    for t in cv.tiles:
        quad = _apply_h(H, t["vis"]).astype(np.float32)
        cx, cy = quad.mean(0)
        if 0 <= cx < w and 0 <= cy < h and _inside_share(quad, w, h) >= 0.4:
            labels.append((t["code"], quad))
    return photo, labels


def _portrait(quad: np.ndarray, margin: float = 1.1) -> bool:
    sides = np.linalg.norm(quad[3] - quad[0]) + np.linalg.norm(quad[2] - quad[1])
    ends = np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])
    return bool(sides >= margin * ends)


def _inside_share(quad: np.ndarray, w: int, h: int) -> float:
    area = abs(cv2.contourArea(quad))
    if area < 1:
        return 0.0
    clip = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    inter, _ = cv2.intersectConvexConvex(quad.astype(np.float32), clip)
    return float(inter) / area


def draw_labels(image: np.ndarray, labels) -> np.ndarray:
    """A copy of `image` with each quad drawn (green, top edge red) and its code."""
    out = image.copy()
    for code, quad in labels:
        p = np.round(quad).astype(np.int32)
        cv2.polylines(out, [p], True, (0, 255, 0), 1, cv2.LINE_AA)
        cv2.line(out, tuple(p[0]), tuple(p[1]), (0, 0, 255), 2, cv2.LINE_AA)
        cv2.putText(out, code, tuple(p.mean(0).astype(int)), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (255, 0, 255), 1, cv2.LINE_AA)
    return out


if __name__ == "__main__":  # python -m training.render [n] [out_dir]: preview scenes
    import sys
    import time

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    out_dir = Path(sys.argv[2] if len(sys.argv) > 2 else "out/render")
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(n):
        t0 = time.perf_counter()
        photo, labels = render_scene(rng, kind=KINDS[i % len(KINDS)])
        ms = (time.perf_counter() - t0) * 1000
        cv2.imwrite(str(out_dir / f"scene{i}.png"), draw_labels(photo, labels))
        print(f"scene{i} {KINDS[i % len(KINDS)]:8s} {photo.shape[1]}x{photo.shape[0]} "
              f"{len(labels):3d} tiles {ms:6.1f} ms")
