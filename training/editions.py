"""Rendered tile editions and the scenes the cream photos lack (training and evaluation).

An `Edition` is one printed look of a whole set: body colour, the four colour slots' inks,
number font and position, logo, joker face, tile size. `random_edition(rng)` draws a
training edition; `HELD_OUT` names three editions that training never sees (evaluation
only, `bench/eval_editions.py`):

- `white_teal`: white body, teal blue, DejaVu Sans Mono numbers, no logo, black smileys.
  Training never pairs that font with a white body and a teal ink.
- `white_modern_logo`: white body, orange close in hue to red, Open Sans ExtraBold numbers
  high on the face, a printed logo at the foot, red smileys. Training never pairs that font
  with a white body and that red-like orange.
- `rummy_green`: cream body, green as the fourth colour, Comic Neue numbers, star jokers.
  Training never draws Comic Neue at all, and never green with a cream body and that font.

Colour slots. The classifier reads four colour slots + joker (`vision.recognition.labels`);
RULES §1: "the referee speaks of four colour slots; what they look like is the camera's job". The
"Rummy" edition's green takes the fourth slot ("O"), as yellow does in other editions: a
training edition may print its fourth slot orange, yellow or green, and a green tile is
labelled with the slot ("O5"). What a slot is called for an edition (G for green) is the
calibration profile's business; `Edition.slot_of` maps an edition's own letters to slots.

Scenes (`render_edition_scene`): the classic kinds of `training.render` drawn in an edition,
plus racks seen from the front (one or two tiers, 15-70 degrees of elevation, tiles leaning
back, the back row half hidden, rows of tiles lying behind the rack), tiles held in a hand,
hard negatives (wood knots, rack edges, logos and smileys that are not tiles), strong
perspective, backlight and phone flash. Labels follow `training.render`: the whole face of
each tile (amodal: a face half hidden behind the front row keeps its whole quad), and every
labelled quad is taller than wide in the photo (the detector's convention). Tiles the
photo shows wider than tall (lying flat, seen low) are returned as `ignores`: neither tiles
nor background for the detector.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from training import render as R
from training.joker_faces import FAMILIES, draw_emblem
from vision.recognition.labels import TILE_CLASSES

FONT = {name.split(".")[0]: i for i, name in enumerate(R.FONT_FILES)}
TRAIN_FONTS = tuple(i for name, i in FONT.items() if name != "ComicNeue-Bold")

BODY = {  # BGR, family
    "cream": [(215, 234, 244), (205, 228, 240), (196, 222, 238), (210, 236, 250)],
    "ivory": [(228, 240, 246), (222, 236, 242)],
    "white": [(242, 244, 244), (236, 238, 238), (248, 248, 246), (238, 240, 243)],
}
INKS = {  # slot -> family -> BGR colours
    "K": {"black": [(28, 26, 30), (40, 40, 40), (20, 20, 15), (55, 50, 50)]},
    "R": {"red": [(45, 35, 215), (40, 30, 190), (70, 50, 225), (50, 25, 170), (35, 55, 230)]},
    "B": {"blue": [(190, 95, 25), (170, 80, 15), (200, 120, 40), (150, 60, 20), (210, 140, 60)],
          "teal": [(160, 140, 20), (140, 150, 0), (170, 160, 40), (130, 120, 10)]},
    "O": {"orange": [(30, 135, 245), (20, 115, 235), (40, 160, 250), (15, 95, 230)],
          "yellow": [(25, 185, 240), (20, 200, 230), (40, 210, 245), (10, 170, 220)],
          "green": [(60, 150, 40), (40, 130, 20), (90, 170, 60), (70, 160, 0)]},
}
JOKER_FACES = ("smiley", "smiley_filled", "star")  # "emblem": `with_emblem_jokers`
LOGOS = ("none", "emboss", "print")


@dataclass(frozen=True)
class Edition:
    name: str
    body: tuple  # BGR
    body_family: str
    inks: tuple  # ((slot, BGR), ...) for K R B O
    ink_families: tuple  # ((slot, family), ...)
    font: int
    scale: int  # number height, % of the classic 30 % of the face
    ring: bool  # a moulded ring around the number
    number_y: int  # number centre, % of the face height from the top
    logo: str  # LOGOS
    logo_ink: tuple  # BGR of a printed logo
    joker: str  # JOKER_FACES
    joker_inks: tuple  # (BGR, BGR): the set's two jokers
    thick: float  # side wall, share of the tile's width
    size: float  # tile size relative to the classic tile (travel tin < 1)
    letters: tuple = (("K", "K"), ("R", "R"), ("B", "B"), ("O", "O"))  # own letter -> slot
    # The number's shape beyond the font: its width (x the font's) and its strokes made
    # bolder (+) or thinner (-) by this many pixels of the 64-pixel glyph, so that seven
    # fonts stand for the many more that editions print.
    stretch: float = 1.0
    weight: int = 0

    def __getitem__(self, key):  # training.render's scenes read edition["thick"]
        return getattr(self, key)

    def ink(self, slot: str) -> tuple:
        return dict(self.inks)[slot]

    def slot_of(self, letter: str) -> str:
        """The classifier's colour slot of one of this edition's own colour letters."""
        return dict(self.letters).get(letter, letter)

    def look(self, code: str, rng: np.random.Generator) -> tuple:
        """A hashable face style for `code` (`training.render` draws it)."""
        joker = self.joker
        if code == "J":
            ink = self.joker_inks[int(rng.integers(2))]
            if joker.startswith("emblem") and ":" not in joker:
                # every joker a picture of its own (training.joker_faces)
                joker = f"{joker}:{int(rng.integers(1 << 30))}"
        else:
            ink = self.ink(code[0])
        scale = int(np.clip(self.scale + rng.normal(0, 2), 70, 125))
        return ("look", self.body, ink, self.font, scale, self.ring, self.number_y, self.logo,
                self.logo_ink, joker, self.stretch, self.weight)


def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _draw(rng: np.random.Generator, name: str = "random", **fixed) -> Edition:
    body_family = fixed.pop("body_family", None) or _pick(rng, list(BODY))
    families = {"K": "black", "R": "red", "B": _pick(rng, ["blue", "blue", "teal"]),
                "O": _pick(rng, ["orange", "orange", "yellow", "green"])}
    families.update(fixed.pop("ink_families", {}))
    inks = tuple((slot, _pick(rng, INKS[slot][families[slot]])) for slot in "KRBO")
    joker_family = _pick(rng, [("red", "black"), ("red", "red"), ("black", "black"),
                               ("red", "blue")])
    jink = {"red": INKS["R"]["red"][0], "black": INKS["K"]["black"][0],
            "blue": INKS["B"]["blue"][0]}
    logo = _pick(rng, ["none", "emboss", "emboss", "print"])
    values = dict(
        name=name, body=_pick(rng, BODY[body_family]), body_family=body_family, inks=inks,
        ink_families=tuple(families.items()), font=_pick(rng, TRAIN_FONTS),
        scale=int(rng.integers(85, 118)), ring=bool(rng.random() < 0.5),
        number_y=int(rng.integers(30, 40)) if logo != "none" else int(rng.integers(33, 48)),
        logo=logo, logo_ink=_pick(rng, [(40, 40, 200), (150, 80, 20), (30, 30, 30)]),
        joker=_pick(rng, JOKER_FACES), joker_inks=(jink[joker_family[0]], jink[joker_family[1]]),
        thick=float(rng.uniform(0.10, 0.22)),
        size=float(rng.uniform(0.72, 0.85)) if rng.random() < 0.2 else 1.0,  # travel tin
    )
    if rng.random() < 0.6:
        values["stretch"] = float(np.clip(np.exp(rng.normal(0, 0.12)), 0.78, 1.25))
        values["weight"] = int(rng.choice([-2, -1, 0, 1, 2, 3]))
    values.update(fixed)
    return Edition(**values)


HELD_OUT: dict[str, Edition] = {
    "white_teal": Edition(
        name="white_teal", body=(244, 246, 246), body_family="white",
        inks=(("K", (30, 30, 32)), ("R", (50, 40, 205)), ("B", (150, 145, 5)),
              ("O", (25, 140, 245))),
        ink_families=(("K", "black"), ("R", "red"), ("B", "teal"), ("O", "orange")),
        font=FONT["DejaVuSansMono-Bold"], scale=100, ring=False, number_y=42, logo="none",
        logo_ink=(30, 30, 30), joker="smiley", joker_inks=((30, 30, 32), (30, 30, 32)),
        thick=0.14, size=1.0),
    "white_modern_logo": Edition(
        name="white_modern_logo", body=(240, 242, 243), body_family="white",
        inks=(("K", (25, 25, 25)), ("R", (45, 35, 210)), ("B", (195, 110, 30)),
              ("O", (20, 105, 240))),
        ink_families=(("K", "black"), ("R", "red"), ("B", "blue"), ("O", "orange")),
        font=FONT["OpenSans-ExtraBold"], scale=104, ring=False, number_y=33, logo="print",
        logo_ink=(40, 40, 200), joker="smiley", joker_inks=((45, 35, 210), (45, 35, 210)),
        thick=0.16, size=1.0),
    "rummy_green": Edition(
        name="rummy_green", body=(205, 230, 242), body_family="cream",
        inks=(("K", (35, 30, 30)), ("R", (40, 35, 200)), ("B", (180, 90, 20)),
              ("O", (55, 145, 35))),
        ink_families=(("K", "black"), ("R", "red"), ("B", "blue"), ("O", "green")),
        font=FONT["ComicNeue-Bold"], scale=108, ring=True, number_y=42, logo="none",
        logo_ink=(30, 30, 30), joker="star", joker_inks=((40, 35, 200), (35, 30, 30)),
        thick=0.18, size=1.0, letters=(("K", "K"), ("R", "R"), ("B", "B"), ("G", "O"))),
}


def is_held_out(e: Edition) -> bool:
    """Whether a drawn edition repeats a held-out one's font + body + inks combination."""
    for h in HELD_OUT.values():
        if e.font == h.font and e.body_family == h.body_family and (
                set(e.ink_families) >= set(h.ink_families) - {("K", "black"), ("R", "red")}):
            return True
    return e.font == FONT["ComicNeue-Bold"]


def random_edition(rng: np.random.Generator) -> Edition:
    """A training edition (never one of `HELD_OUT`'s combinations)."""
    while True:
        e = _draw(rng)
        if not is_held_out(e):
            return e


def held_out(name: str) -> Edition:
    if name not in HELD_OUT:
        raise ValueError(f"no held-out edition {name!r}; known: {', '.join(HELD_OUT)}")
    return HELD_OUT[name]


# ----------------------------------------------------------------------------- faces
@lru_cache(maxsize=4096)
def edition_face(code: str, look: tuple) -> np.ndarray:
    """(FACE_H, FACE_W, 4) uint8 BGRA face of `code` in an edition's `look`."""
    _, body_c, ink, font, scale, ring, number_y, logo, logo_ink, joker, stretch, weight = look
    fw, fh = R.FACE_W, R.FACE_H
    body = np.asarray(body_c, np.float32)
    yy = np.linspace(-1, 1, fh, dtype=np.float32)[:, None, None]
    face = np.empty((fh, fw, 3), np.float32)
    face[:] = body
    face += yy * 4.0
    cx, cy = fw / 2, fh * number_y / 100.0
    if ring:
        edge = np.zeros((fh, fw), np.float32)
        cv2.circle(edge, (int(cx), int(cy)), int(fw * 0.40), 1.0, 2, cv2.LINE_AA)
        face -= cv2.GaussianBlur(edge, (0, 0), 0.9)[..., None] * np.float32(18.0)
    inkf = np.asarray(ink, np.float32)
    if code == "J":
        r = fw * 0.31 * scale / 100.0
        if joker == "smiley":
            R._draw_smiley(face, inkf, cx, cy, r)
        elif joker == "smiley_filled":
            _filled_smiley(face, inkf, body, cx, cy, r)
        elif joker.startswith("emblem"):
            kind, seed = joker.split(":")
            families = tuple(kind.split("/")[1].split("+")) if "/" in kind else FAMILIES
            draw_emblem(face, inkf, body, cx, cy, r, int(seed), families)
        else:
            _star_joker(face, inkf, cx, cy, r, font)
    else:
        new_w, target_h = _number_size(code, font, scale, stretch, weight)
        mask = cv2.resize(_glyphs(code[1:], font, weight),
                          (max(2, int(round(new_w))), max(2, int(round(target_h)))),
                          interpolation=cv2.INTER_AREA)
        R._paste(face, mask, inkf, cx, cy)
    if logo == "emboss":
        mask = R._text_mask("Rummikub", 0, 28)
        w = fw * 0.62
        mask = cv2.resize(mask, (int(w), max(2, int(w * mask.shape[0] / mask.shape[1]))),
                          interpolation=cv2.INTER_AREA)
        R._paste(face, mask, body + 18.0, cx + 0.6, fh * 0.86 + 0.6, 0.6)
        R._paste(face, mask, body * 0.82, cx, fh * 0.86, 0.55)
    elif logo == "print":  # a small coloured plate with the name in the body's colour
        ly = int(fh * 0.85)
        pw, ph = int(fw * 0.64), int(fh * 0.11)
        plate = np.zeros((fh, fw), np.float32)
        cv2.rectangle(plate, (int(cx - pw / 2), ly - ph // 2), (int(cx + pw / 2), ly + ph // 2),
                      1.0, -1, cv2.LINE_AA)
        plate = cv2.GaussianBlur(plate, (0, 0), 0.7)[..., None]
        face[:] = face * (1 - plate) + np.asarray(logo_ink, np.float32) * plate
        mask = R._text_mask("Rummikub", 0, 28)
        w = pw * 0.86
        mask = cv2.resize(mask, (int(w), max(2, int(w * mask.shape[0] / mask.shape[1]))),
                          interpolation=cv2.INTER_AREA)
        R._paste(face, mask, body, cx, ly, 0.9)
    out = np.empty((fh, fw, 4), np.uint8)
    out[..., :3] = np.clip(face, 0, 255)
    out[..., 3] = R._rounded_mask()
    return out


def _number_size(code: str, font: int, scale: float, stretch: float, weight: int
                 ) -> tuple[float, float]:
    """(width, height) in face pixels of the number `edition_face` prints for `code`."""
    target_h = R.FACE_H * 0.30 * scale / 100.0
    h, w = _glyphs(code[1:], font, weight).shape
    return min(w * stretch * target_h / h, R.FACE_W * 0.80), target_h


def number_box(code: str, edition: Edition) -> tuple[float, float, float, float]:
    """Where `edition` prints the number (or the joker's face) of `code` on the upright
    face, as shares of the face's width and height: (left, top, right, bottom). A photo
    whose edge crosses this box cuts what tells the tile apart (`bench.eval_editions`)."""
    fw, fh = R.FACE_W, R.FACE_H
    if code == "J":
        w = h = 2 * fw * 0.31 * edition.scale / 100.0
    else:
        w, h = _number_size(code, edition.font, edition.scale, edition.stretch, edition.weight)
    cx, cy = fw / 2, fh * edition.number_y / 100.0
    return ((cx - w / 2) / fw, (cy - h / 2) / fh, (cx + w / 2) / fw, (cy + h / 2) / fh)


@lru_cache(maxsize=1024)
def _glyphs(text: str, font: int, weight: int) -> np.ndarray:
    """The number's coverage mask (`training.render._text_mask` at 64 px), its strokes
    grown (weight > 0) or thinned (< 0) by `weight` pixels."""
    mask = R._text_mask(text, font, 64)
    if weight == 0:
        return mask
    pad = abs(weight) + 1
    padded = cv2.copyMakeBorder(mask, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * abs(weight) + 1,) * 2)
    grown = (cv2.dilate if weight > 0 else cv2.erode)(padded, kernel)
    ys, xs = np.nonzero(grown > 0.02)
    if len(ys) == 0:
        return mask
    return np.ascontiguousarray(grown[ys.min():ys.max() + 1, xs.min():xs.max() + 1])


def _filled_smiley(face, ink, body, cx, cy, r):
    s = 4
    m = np.zeros((R.FACE_H * s, R.FACE_W * s), np.uint8)
    c = (int(cx * s), int(cy * s))
    rr = int(r * s)
    cv2.circle(m, c, rr, 255, -1, cv2.LINE_AA)
    holes = np.zeros_like(m)
    for dx in (-0.35, 0.35):
        cv2.ellipse(holes, (int(c[0] + dx * rr), int(c[1] - 0.25 * rr)),
                    (int(0.12 * rr), int(0.18 * rr)), 0, 0, 360, 255, -1, cv2.LINE_AA)
    cv2.ellipse(holes, (c[0], int(c[1] + 0.05 * rr)), (int(0.55 * rr), int(0.5 * rr)), 0, 20,
                160, 255, max(2, int(0.12 * rr)), cv2.LINE_AA)
    size = (R.FACE_W, R.FACE_H)
    mask = cv2.resize(m, size, interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    hole = cv2.resize(holes, size, interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    face[:] = face * (1 - mask[..., None]) + ink * mask[..., None]
    face[:] = face * (1 - hole[..., None]) + body * hole[..., None]


def _star_joker(face, ink, cx, cy, r, font):
    pts = []
    for k in range(10):
        a = -math.pi / 2 + k * math.pi / 5
        rad = r * (1.0 if k % 2 == 0 else 0.45)
        pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
    s = 4
    m = np.zeros((R.FACE_H * s, R.FACE_W * s), np.uint8)
    cv2.fillPoly(m, [np.round(np.array(pts) * s).astype(np.int32)], 255, cv2.LINE_AA)
    mask = cv2.resize(m, (R.FACE_W, R.FACE_H), interpolation=cv2.INTER_AREA)
    mask = mask.astype(np.float32) / 255
    face[:] = face * (1 - mask[..., None]) + ink * mask[..., None]
    text = R._text_mask("JOKER", font, 28)
    w = R.FACE_W * 0.7
    text = cv2.resize(text, (int(w), max(2, int(w * text.shape[0] / text.shape[1]))),
                      interpolation=cv2.INTER_AREA)
    R._paste(face, text, ink, cx, cy + r * 1.45)


# ----------------------------------------------------------------------------- scenes
SCENES = ("table", "scatter", "closeup", "rack", "rack_front", "hand", "negatives")
SCENE_WEIGHTS = (0.2, 0.14, 0.1, 0.06, 0.32, 0.1, 0.08)


def _light(rng, img: np.ndarray, mode: str) -> np.ndarray:
    """Phone flash (a hot spot and specular glints) or backlight (a bright window, a dark,
    hazy foreground) on a float image."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if mode == "flash":
        cx, cy = w * rng.uniform(0.3, 0.7), h * rng.uniform(0.3, 0.7)
        sig = max(w, h) * rng.uniform(0.25, 0.5)
        spot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * sig**2))
        img = img * (0.55 + rng.uniform(0.5, 0.9) * spot)[..., None]
        for _ in range(int(rng.integers(1, 5))):  # glints on glossy faces
            gx, gy = cx + rng.normal(0, sig * 0.4), cy + rng.normal(0, sig * 0.4)
            g = np.zeros((h, w), np.float32)
            cv2.ellipse(g, (int(gx), int(gy)), (int(rng.uniform(4, 30)), int(rng.uniform(3, 14))),
                        rng.uniform(0, 180), 0, 360, 1.0, -1)
            g = cv2.GaussianBlur(g, (0, 0), rng.uniform(2, 6))
            img = img * (1 - g[..., None]) + 255 * g[..., None]
    else:  # backlight
        img = img * rng.uniform(0.4, 0.75)
        side = rng.integers(4)
        grad = [yy / h, 1 - yy / h, xx / w, 1 - xx / w][side]
        # a bright window at one side; tiles there stay faintly readable, as a phone's
        # exposure keeps them (a label must show a tile)
        window = 0.45 * np.clip((1 - grad - rng.uniform(0.5, 0.8)) * 4, 0, 1) ** 2
        haze = rng.uniform(0.05, 0.25) * (1 - grad)
        img = img * (1 - window[..., None]) + 250 * window[..., None]
        img = img * (1 - haze[..., None]) + 230 * haze[..., None]
    return img


def _knots(rng, img: np.ndarray, scale: float):
    """Wood knots: dark rings with a core, tile-sized (a hard negative)."""
    h, w = img.shape[:2]
    for _ in range(int(rng.integers(1, 5))):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        a, b = scale * rng.uniform(0.3, 0.9), scale * rng.uniform(0.2, 0.5)
        ang = rng.uniform(0, 180)
        m = np.zeros((h, w), np.float32)
        for k in range(int(rng.integers(2, 5))):
            f = 1 - k * 0.22
            cv2.ellipse(m, (int(cx), int(cy)), (max(1, int(a * f)), max(1, int(b * f))), ang, 0,
                        360, 0.5 + 0.15 * k, max(1, int(scale * 0.05)), cv2.LINE_AA)
        cv2.ellipse(m, (int(cx), int(cy)), (max(1, int(a * 0.25)), max(1, int(b * 0.25))), ang,
                    0, 360, 1.0, -1, cv2.LINE_AA)
        m = cv2.GaussianBlur(m, (0, 0), 1.0)[..., None]
        img[:] = img * (1 - 0.55 * m)


def _decoys(rng, img: np.ndarray, scale: float, edition: Edition, tiles=()):
    """Things that look like parts of a tile but are none: a printed logo, a smiley sticker,
    a blank tile-coloured card, a rack's edge (hard negatives, never labelled). Each lies
    beside the `tiles` (quads in `img`'s pixels), not on them: drawn over a labelled tile
    it would hide a tile that still counts as one to find. Where no free spot is found in
    a few tries, that decoy is left out."""
    h, w = img.shape[:2]
    clear = np.zeros((h, w), np.uint8)
    for quad in tiles:
        cv2.fillConvexPoly(clear, np.round(np.asarray(quad, np.float32) * 4).astype(np.int32),
                           1, cv2.LINE_8, shift=2)

    def free(footprint) -> bool:
        area = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(area, np.round(np.asarray(footprint, np.float32) * 4).astype(np.int32),
                           1, cv2.LINE_8, shift=2)
        return not np.any(area & clear)

    def rect(cx, cy, width, height, angle=0.0):
        return cv2.boxPoints(((cx, cy), (width, height), angle))

    for _ in range(int(rng.integers(1, 4))):
        what = _pick(rng, ["logo", "smiley", "card", "bar"])
        cx, cy = rng.uniform(0.05, 0.95) * w, rng.uniform(0.05, 0.95) * h
        if what == "logo":
            mask = R._text_mask("Rummikub", int(rng.integers(len(R.FONT_FILES))), 40)
            tw = scale * rng.uniform(1.5, 4)
            mask = cv2.resize(mask, (int(tw), max(2, int(tw * mask.shape[0] / mask.shape[1]))))
            color = rng.uniform(0, 255, 3)
            box = (mask.shape[1], mask.shape[0], 0.0)
        elif what == "smiley":
            size = int(scale * rng.uniform(0.6, 1.4))
            patch = np.empty((R.FACE_H, R.FACE_W, 3), np.float32)
            patch[:] = rng.uniform(150, 255, 3)
            R._draw_smiley(patch, np.asarray(_pick(rng, edition.joker_inks), np.float32),
                           R.FACE_W / 2, R.FACE_H / 2, R.FACE_W * 0.4)
            patch = cv2.resize(patch[20:-20], (size, size))
            box = (size, size, 0.0)
        elif what == "card":  # square or long: not a tile's proportions
            side = scale * rng.uniform(0.8, 1.6)
            size = (side, side * _pick(rng, [1.0, 0.35, 2.8]))
            box = (*size, rng.uniform(0, 180))
        else:  # a rack's edge: a long dark bar with a highlight
            length, thick = scale * rng.uniform(4, 12), scale * rng.uniform(0.15, 0.5)
            box = (length, thick, rng.uniform(0, 180))
            col = rng.uniform(10, 70) * np.ones(3)
        # Other spots come from a generator of their own, seeded by the first one: the
        # scene's own draws (camera, light, ...) stay those of a scene without tiles there.
        spots = None
        for _try in range(12):
            if free(rect(cx, cy, *box)):
                break
            spots = spots or np.random.default_rng([int(cx * 1000), int(cy * 1000)])
            cx, cy = spots.uniform(0.05, 0.95) * w, spots.uniform(0.05, 0.95) * h
        else:
            continue
        if what == "logo":
            R._paste(img, mask, color, cx, cy)
        elif what == "smiley":
            x0, y0 = int(cx - size / 2), int(cy - size / 2)
            if 0 <= x0 and 0 <= y0 and x0 + size < w and y0 + size < h:
                circ = np.zeros((size, size), np.float32)
                cv2.circle(circ, (size // 2, size // 2), size // 2 - 1, 1.0, -1, cv2.LINE_AA)
                roi = img[y0:y0 + size, x0:x0 + size]
                roi[:] = roi * (1 - circ[..., None]) + patch * circ[..., None]
        elif what == "card":
            cv2.fillConvexPoly(img, np.round(rect(cx, cy, *box) * 4).astype(np.int32),
                               tuple(float(c) for c in np.asarray(edition.body) * 0.97),
                               cv2.LINE_AA, shift=2)
        else:
            pts = rect(cx, cy, *box)
            cv2.fillConvexPoly(img, np.round(pts * 4).astype(np.int32),
                               tuple(float(c) for c in col), cv2.LINE_AA, shift=2)
            cv2.line(img, tuple(np.round(pts[0] * 4).astype(int)),
                     tuple(np.round(pts[1] * 4).astype(int)),
                     tuple(float(c) for c in col + 90), 2, cv2.LINE_AA, shift=2)


def _rack_front(rng, img: np.ndarray, scale: float, edition: Edition, codes_rows=None):
    """A rack seen from the front: (labels, ignores) in canvas pixels, drawn into `img`.

    Elevation 15-70 degrees, tiles leaning back 5-25 degrees: a standing face looks
    cos(elevation - lean) as tall as it is. Kept at or below 38 degrees apart so faces
    stay taller than wide (the detector's convention). Two tiers: the back row stands
    higher and its lower part (25-55 %, never its number) hides behind the front row.
    """
    h, w = img.shape[:2]
    lean = rng.uniform(5, 25)
    elev = min(rng.uniform(15, 70), lean + 38)
    fore = math.cos(math.radians(elev - lean))
    tile_w = scale * edition.size
    face_h = tile_w / R.ASPECT * fore
    tiers = 1 if rng.random() < 0.35 else 2
    n_per_row = int(rng.integers(7, 16)) if codes_rows is None else max(map(len, codes_rows))
    rack_w = tile_w * (n_per_row + rng.uniform(0.6, 2.0))
    angle = rng.normal(0, 0.05)
    r = np.array([math.cos(angle), math.sin(angle)], np.float32)
    down = np.array([-math.sin(angle), math.cos(angle)], np.float32)
    centre = np.array([w * rng.uniform(0.4, 0.6), h * rng.uniform(0.45, 0.7)], np.float32)
    # the back row hides behind the front one up to just below its numbers, as a rack is
    # built for: a player sees both rows' numbers
    number_low = edition.number_y / 100 + 0.15 * edition.scale / 100 + 0.04
    hidden_back = rng.uniform(0.25, max(0.26, min(0.55, 1 - number_low)))
    lip = rng.uniform(0.08, 0.2)
    rack_col = np.asarray(_pick(rng, [(20, 20, 22), (35, 30, 28), (60, 70, 90), (200, 200, 205),
                                      (40, 60, 110)]), np.float32) * rng.uniform(0.8, 1.2)
    labels, ignores = [], []
    box = R.TileBox(rng)  # rows given by the caller are drawn as given

    def pt(x, y):
        return centre + r * x + down * y

    def poly(x0, y0, x1, y1):
        return np.stack([pt(x0, y0), pt(x1, y0), pt(x1, y1), pt(x0, y1)]).astype(np.float32)

    def fill(p, col):
        cv2.fillConvexPoly(img, np.round(p * 4).astype(np.int32),
                           tuple(float(c) for c in np.clip(col, 0, 255)), cv2.LINE_AA, shift=2)

    # rows of tiles lying flat on the table behind the rack (far: higher in the photo)
    if rng.random() < 0.4:
        flat_h = tile_w / R.ASPECT * math.sin(math.radians(elev))
        y_flat = -face_h * (tiers + 1.2)
        x = -rack_w / 2 + rng.uniform(0, tile_w)
        for code in R._random_codes(rng, int(rng.integers(3, 10))):
            code = box.take([code])[0]
            c = pt(x + tile_w / 2, y_flat)
            quad = np.stack([c - r * tile_w / 2 - down * flat_h / 2,
                             c + r * tile_w / 2 - down * flat_h / 2,
                             c + r * tile_w / 2 + down * flat_h / 2,
                             c - r * tile_w / 2 + down * flat_h / 2]).astype(np.float32)
            R._draw_tile(img, R._face_for(code, edition.look(code, rng)), quad,
                         down * tile_w * edition.thick * math.cos(math.radians(elev)))
            (labels if R._portrait(quad) else ignores).append((code, quad))
            x += tile_w * rng.uniform(1.0, 1.1)
    top = -face_h * (tiers + 0.15)
    fill(poly(-rack_w / 2, top, rack_w / 2, face_h * 0.5), rack_col)
    for tier in range(tiers):
        back = tiers == 2 and tier == 0
        y0 = top + 0.1 * face_h + tier * face_h * (1 - hidden_back)
        if codes_rows is not None:
            codes = codes_rows[tier] if tier < len(codes_rows) else []
        else:
            codes = R._random_codes(rng, int(rng.integers(max(1, n_per_row - 5), n_per_row + 1)))
        x = -rack_w / 2 + tile_w * rng.uniform(0.3, 0.8)
        for code in codes:
            if x + tile_w > rack_w / 2:
                break
            if codes_rows is None:
                code = box.take([code])[0]
            quad = poly(x, y0, x + tile_w * 0.985, y0 + face_h)
            quad += rng.normal(0, 0.01 * tile_w, (1, 2)).astype(np.float32)
            R._draw_tile(img, R._face_for(code, edition.look(code, rng)), quad,
                         -down * tile_w * edition.thick * math.sin(math.radians(elev)) * 0.5)
            labels.append((code, quad))
            x += tile_w * rng.uniform(1.0, 1.04)
        if back:  # the ledge between the tiers, hidden under the front row
            continue
        lip_top = y0 + face_h * (1 - lip)
        shade = rack_col * rng.uniform(0.8, 1.5)
        fill(poly(-rack_w / 2, lip_top, rack_w / 2, lip_top + face_h * 0.35), shade)
        cv2.line(img, tuple(np.round(pt(-rack_w / 2, lip_top) * 4).astype(int)),
                 tuple(np.round(pt(rack_w / 2, lip_top) * 4).astype(int)),
                 tuple(float(c) for c in np.minimum(shade + 70, 255)), 1, cv2.LINE_AA, shift=2)
    return labels, ignores


def _hand(rng, img: np.ndarray, scale: float, edition: Edition):
    """3-8 tiles held up in a hand, side by side along a gentle arc: fingers over their
    lower part (at most a quarter of a face), a thumb over one corner."""
    h, w = img.shape[:2]
    n = int(rng.integers(3, 9))
    tile_w = min(scale * edition.size * rng.uniform(1.0, 1.6), w * 0.8 / n)
    tile_h = tile_w / R.ASPECT
    step = tile_w * rng.uniform(0.9, 1.0)
    bend = rng.uniform(0.0, 0.06)
    base = np.array([w * rng.uniform(0.4, 0.6), h * rng.uniform(0.45, 0.65)], np.float32)
    tilt = rng.normal(0, 0.1)
    labels, bottoms = [], []
    for i, code in enumerate(R.TileBox(rng).take(R._random_codes(rng, n))):
        k = i - (n - 1) / 2
        a = tilt + k * bend
        c = base + np.array([k * step, (k * bend) ** 2 * tile_h * 4], np.float32)
        quad = R.tile_quad(c, a, tile_w, tile_h)
        R._draw_tile(img, R._face_for(code, edition.look(code, rng)), quad,
                     np.array([0.0, tile_w * edition.thick * 0.6], np.float32))
        labels.append((code, quad))
        bottoms.append((quad[2] + quad[3]) / 2)
    skin = np.array([120, 150, 200], np.float32) * rng.uniform(0.5, 1.15)
    m = np.zeros((h, w), np.uint8)
    cover = rng.uniform(0.05, 0.25) * tile_h
    for b in bottoms:  # finger tips over each tile's foot
        cv2.ellipse(m, (int(b[0]), int(b[1] + tile_h * 0.15)),
                    (int(tile_w * 0.45), int(tile_h * 0.15 + cover)), 0, 0, 360, 255, -1)
    low = np.max([b[1] for b in bottoms])
    cv2.rectangle(m, (int(min(b[0] for b in bottoms) - tile_w), int(low + cover * 0.5)),
                  (int(max(b[0] for b in bottoms) + tile_w), int(low + tile_h * 1.2)), 255, -1)
    cv2.line(m, (int(base[0]), int(low + tile_h)), (int(base[0] + rng.normal(0, w * 0.2)),
             h + 50), 255, int(tile_w * 2))
    if rng.random() < 0.6:
        corner = labels[int(rng.integers(n))][1][int(rng.choice([2, 3]))]
        cv2.ellipse(m, (int(corner[0]), int(corner[1])), (int(tile_w * 0.3), int(tile_h * 0.2)),
                    rng.uniform(0, 180), 0, 360, 255, -1)
    s = cv2.GaussianBlur(m.astype(np.float32) / 255, (0, 0), 1.5)[..., None]
    shade = 1 + 0.06 * R._smooth_noise(rng, h // 8 + 2, w // 8 + 2, 3)
    shade = cv2.resize(shade, (w, h))[..., None]
    img[:] = img * (1 - s) + skin * shade * s
    return labels


def with_emblem_jokers(edition: Edition, families: tuple | None = None) -> Edition:
    """`edition` whose every joker shows a random picture (`training.joker_faces`), of
    `families` only where given (a joker "emblem/rosette+mirrored:<seed>")."""
    if families is None:
        return replace(edition, joker="emblem")
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown or not families:
        raise ValueError(f"joker families: some of {FAMILIES}, not {unknown or 'none'}")
    return replace(edition, joker="emblem/" + "+".join(families))


def _scene_jokers(rng, cv, scale, edition):
    """Sets with a joker in each, on a table: the "jokers" kind, so that a joker face is
    common enough to learn (a box holds two; each set here comes from a box of its own)."""
    for _ in range(int(rng.integers(2, 6))):
        codes = R._random_set(rng)
        if rng.random() < 0.5:  # a part of a set, or a joker alone
            codes = codes[:int(rng.integers(1, len(codes) + 1))]
        codes[int(rng.integers(len(codes)))] = "J"
        cv.box = R.TileBox(rng)
        R._place_row(rng, cv, codes, edition, scale, rng.uniform(0, 2 * np.pi), flips=0.3,
                     tries=10)


def render_edition_scene(
    rng: np.random.Generator, edition: Edition | None = None, *, kind: str | None = None,
    width: int | None = None, height: int | None = None, light: str | None = None,
):
    """(photo BGR uint8, labels [(code, quad)], ignores [quad]) of one scene in `edition`
    (default: a random training edition). `kind` one of SCENES; `light` None (random),
    "plain", "flash" or "backlight". Deterministic given the generator's state."""
    if edition is None:
        edition = random_edition(rng)
    if width is None or height is None:
        width, height = (1000, 750) if rng.random() < 0.7 else (750, 1000)
    if kind is None:
        kind = str(rng.choice(SCENES, p=SCENE_WEIGHTS))
    if kind not in (*SCENES, "jokers"):
        raise ValueError(f"kind must be one of {SCENES} or 'jokers', not {kind!r}")
    if light is None:
        light = str(rng.choice(["plain", "flash", "backlight"], p=[0.7, 0.15, 0.15]))
    w, h = int(width), int(height)
    side = max(w, h)
    if kind in ("table", "scatter", "closeup", "rack", "jokers"):
        # the classic scenes of training.render, in this edition
        canvas, surface = R._surface(rng, h, w)
        cv = R._Canvas(canvas, rng)
        lo, hi = {"closeup": (0.08, 0.17), "rack": (0.035, 0.07),
                  "jokers": (0.05, 0.14)}.get(kind, (0.035, 0.08))
        scale = side * rng.uniform(lo, hi) * edition.size
        R._clutter(rng, cv.image, cv.occupied, int(rng.integers(0, 5)), scale)
        if surface in ("dark_wood", "light_wood") and rng.random() < 0.5:
            _knots(rng, cv.image, scale)
        scene = _scene_jokers if kind == "jokers" else getattr(R, f"_scene_{kind}")
        scene(rng, cv, scale, edition)
        flat = [t for t in cv.tiles if not t.get("drawn")]
        for t in sorted(flat, key=lambda t: float(t["quad"][:, 1].mean())):
            tw = float(np.linalg.norm(t["quad"][1] - t["quad"][0]))
            R._draw_tile(cv.image, R._face_for(t["code"], t["style"]), t["quad"],
                         np.array([0.0, 1.0], np.float32) * tw * edition.thick)
        canvas_labels = [(t["code"], t["vis"]) for t in cv.tiles]
        canvas_ignores: list = []
        image = cv.image
        strength = 0.12
    else:
        image, surface = R._surface(rng, h, w)
        scale = side * rng.uniform(0.04, 0.09)
        if surface in ("dark_wood", "light_wood") and rng.random() < 0.6:
            _knots(rng, image, scale)
        if kind == "rack_front":
            canvas_labels, ignores = _rack_front(rng, image, scale, edition)
            canvas_ignores = [q for _, q in ignores]
            strength = 0.3
        elif kind == "hand":
            canvas_labels, canvas_ignores = _hand(rng, image, scale, edition), []
            strength = 0.15
        else:  # negatives only
            canvas_labels, canvas_ignores = [], []
            strength = 0.15
    if kind == "negatives" or rng.random() < 0.3:
        _decoys(rng, image, side * rng.uniform(0.04, 0.09), edition,
                [q for _, q in canvas_labels] + list(canvas_ignores))
    for _ in range(6):
        H = R._camera(rng, w, h, strength)
        if all(R._portrait(R._apply_h(H, q)) for _, q in canvas_labels):
            break
        strength *= 0.6
    else:
        H = np.eye(3)
    photo = cv2.warpPerspective(image, H, (w, h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REFLECT)
    if light != "plain":
        photo = _light(rng, photo, light)
    photo = R._photo_effects(rng, photo)
    labels, ignores = [], [R._apply_h(H, q).astype(np.float32) for q in canvas_ignores]
    for code, q in canvas_labels:
        quad = R._apply_h(H, q).astype(np.float32)
        cx, cy = quad.mean(0)
        if 0 <= cx < w and 0 <= cy < h and R._inside_share(quad, w, h) >= 0.4:
            labels.append((code, quad))
        elif R._inside_share(quad, w, h) > 0:
            ignores.append(quad)
    return photo, labels, ignores


# ----------------------------------------------------------------------------- calibration
def calibration_rows(edition: Edition, jokers: int = 2) -> list[list[str]]:
    """The calibration layout in the edition's own letters: one colour per row, 1-13, then
    a row of jokers (the Rummy edition's fourth row is green, "G1".."G13")."""
    rows = [[f"{letter}{n}" for n in range(1, 14)] for letter, _ in edition.letters]
    return rows + [["J"] * jokers]


def render_calibration_layout(edition: Edition | str, rng: np.random.Generator, *,
                              width: int = 1000, height: int = 750, jokers: int = 2):
    """One calibration photo of an edition: its tiles laid one colour per row, 1-13, then
    the jokers, on a table, photographed from above with a mild tilt.

    Returns (image BGR uint8, rows): `rows` are the true tiles row by row, top to bottom,
    left to right, in the edition's own letters (see `calibration_rows`; map them to the
    classifier's slots with `Edition.slot_of`).
    """
    if isinstance(edition, str):
        edition = held_out(edition) if edition in HELD_OUT else _named(edition)
    rows = calibration_rows(edition, jokers)
    canvas, _ = R._surface(rng, height, width, str(rng.choice(["light_wood", "plain", "cloth"])))
    tile_w = width * 0.88 / 13.5
    tile_h = tile_w / R.ASPECT
    top = (height - len(rows) * tile_h * 1.12) / 2 + tile_h / 2
    drawn = []
    for i, row in enumerate(rows):
        y = top + i * tile_h * 1.12
        x0 = (width - len(row) * tile_w * 1.03) / 2 + tile_w / 2
        for j, code in enumerate(row):
            slot_code = code if code == "J" else edition.slot_of(code[0]) + code[1:]
            quad = R.tile_quad((x0 + j * tile_w * 1.03, y), rng.normal(0, 0.01), tile_w, tile_h)
            drawn.append((slot_code, quad))
    for code, quad in drawn:
        R._draw_tile(canvas, R._face_for(code, edition.look(code, rng)), quad,
                     np.array([0.0, tile_w * edition.thick], np.float32))
    H = R._camera(rng, width, height, 0.05)
    photo = cv2.warpPerspective(canvas, H, (width, height), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REFLECT)
    photo = R._photo_effects(rng, photo)
    return photo, rows


def _named(name: str) -> Edition:
    raise ValueError(f"no edition {name!r}; known: {', '.join(HELD_OUT)}")


def slot_codes(edition: Edition, codes) -> list[str]:
    """An edition's own codes (G5) as the classifier's slot codes (O5)."""
    return [c if c == "J" else edition.slot_of(c[0]) + c[1:] for c in codes]


assert all(c in TILE_CLASSES for c in slot_codes(HELD_OUT["rummy_green"], ["G5", "J"]))


def with_size(edition: Edition, size: float) -> Edition:
    return replace(edition, size=size)


if __name__ == "__main__":  # python -m training.editions [n] [out_dir]: preview scenes
    import sys
    import time
    from pathlib import Path

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    out_dir = Path(sys.argv[2] if len(sys.argv) > 2 else "out/editions")
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(n):
        t0 = time.perf_counter()
        kind = SCENES[i % len(SCENES)]
        photo, labels, ignores = render_edition_scene(rng, kind=kind)
        ms = (time.perf_counter() - t0) * 1000
        out = R.draw_labels(photo, labels)
        for q in ignores:
            cv2.polylines(out, [np.round(q).astype(np.int32)], True, (255, 0, 0), 1)
        cv2.imwrite(str(out_dir / f"{i}_{kind}.jpg"), out)
        print(f"{i} {kind:10s} {len(labels):3d} tiles {len(ignores):2d} ignored {ms:6.0f} ms")
    for name in HELD_OUT:
        photo, rows = render_calibration_layout(name, rng)
        cv2.imwrite(str(out_dir / f"calib_{name}.jpg"), photo)
        photo, labels, _ = render_edition_scene(rng, HELD_OUT[name], kind="rack_front")
        cv2.imwrite(str(out_dir / f"rack_{name}.jpg"), R.draw_labels(photo, labels))
