"""Photos of tile stands and tables with depth, and the labels of what each shows.

    python -m training.render3d.scene [n] [out_dir]   # preview scenes with their labels

`render_depth_scene(rng)` builds a world in centimetres: a table (wood, cloth, marble...)
and the room behind it; a black (or coloured) stand of 1-3 tiers, each higher tier behind
and above the one in front, its tiles leaning back on the ledge, the front beam with an
embossed "Rummikub" logo; tiles lying on the table beside and behind the stand; hard
negatives (a game box with its logo, smiley stickers). A phone camera looks at it from
30-60 cm and 20-45 degrees above ("rack"), from close by so that tiles fill a quarter of
the frame ("closeup"), or propped low on the table (8-20 degrees, "low"). The painter
(`training.render3d.camera`) draws every face far to near and keeps an id per pixel, so
each tile's label is what the photo really shows of it (`training.render3d.tiles`).

A tile is *labelled* when its whole number (or joker face) shows and it stands (or lies)
taller than wide in the photo: `DepthScene.labels`. Tiles whose face shows only in part
without their number, or lie flat and seen wider than tall, are `ignores`: neither a tile
to find nor background. Deterministic given the generator's state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from training import editions as E
from training import render as R
from training.render3d.camera import Camera, Painter
from training.render3d.tiles import (  # noqa: F401 - draw_block: the tests build scenes too
    UNFAMILIAR_JOKERS,
    Block,
    TileLabel,
    draw_block,
    unfamiliar_joker,
    visible_label,
)

KINDS = ("rack", "closeup", "low")
KIND_WEIGHTS = (0.6, 0.2, 0.2)
TILE_W = 2.7  # cm, a classic tile's face; the face is R.ASPECT as wide as high
DECOY_ID = 100  # ids 100..999: hard negatives; 1000+: tile faces; 5000+: tile bodies


@dataclass
class DepthScene:
    image: np.ndarray  # BGR uint8
    tiles: list[TileLabel]  # every tile whose face the photo shows at all
    decoys: np.ndarray  # bool (H, W): pixels of hard negatives (logos, stickers, box)
    kind: str
    edition: E.Edition
    camera: Camera = field(repr=False)

    @property
    def labels(self) -> list[tuple[str, np.ndarray]]:
        """(code, visible quad) of each tile to find and read."""
        return [(t.code, t.visible) for t in self.tiles if _labelled(t)]

    @property
    def ignores(self) -> list[np.ndarray]:
        return [t.visible for t in self.tiles if not _labelled(t)]


def _labelled(t: TileLabel) -> bool:
    return t.number_visible and R._portrait(t.quad, 1.0)


# ----------------------------------------------------------------------------- editions
def original_edition(rng: np.random.Generator) -> E.Edition:
    """Today's white "Original" look for training: bold numbers high on the face, the
    logo at its foot, red and orange rows, red and black smiley jokers, thick tiles. Its
    fonts are training's, so it never repeats a held-out edition (`E.is_held_out`)."""
    fonts = [E.FONT[n] for n in ("DejaVuSans-Bold", "Roboto-Bold", "RobotoCondensed-Bold",
                                 "DejaVuSansCondensed-Bold", "OpenSans-ExtraBold")]
    while True:
        e = E._draw(rng, name="original", body_family="white",
                    ink_families={"B": "blue", "O": "orange"},
                    font=fonts[int(rng.integers(len(fonts)))],
                    scale=int(rng.integers(104, 120)), number_y=int(rng.integers(28, 35)),
                    ring=False, logo=str(rng.choice(["print", "emboss"])), joker="smiley",
                    joker_inks=(E.INKS["R"]["red"][0], E.INKS["K"]["black"][0]),
                    thick=float(rng.uniform(0.2, 0.28)), size=1.0)
        if not E.is_held_out(e):
            return e


def training_edition(rng: np.random.Generator) -> E.Edition:
    return original_edition(rng) if rng.random() < 0.45 else E.random_edition(rng)


def _texture(code: str, edition: E.Edition, rng) -> np.ndarray:
    look = edition.look(code, rng)
    if code == "J" and rng.random() < 0.15:
        return unfamiliar_joker(look, UNFAMILIAR_JOKERS[int(rng.integers(3))])
    return R._face_for(code, look)


# ----------------------------------------------------------------------------- world
class _World:
    def __init__(self, rng, edition: E.Edition, camera: Camera, light: np.ndarray):
        self.rng, self.edition, self.camera, self.light = rng, edition, camera, light
        self.box = R.TileBox(rng)
        self.blocks: list[Block] = []
        self.tile_w = TILE_W * edition.size
        self.tile_h = self.tile_w / R.ASPECT
        self.thick = self.tile_w * max(edition.thick, 0.16) * 1.3

    def block(self, code: str, face: np.ndarray, back: np.ndarray, standing: bool) -> Block:
        b = Block(code, face, back, _texture(code, self.edition, self.rng),
                  E.number_box(code, self.edition), standing)
        b.face_id = 1000 + len(self.blocks)
        self.blocks.append(b)
        return b

    def standing(self, code, x, y, z, lean, yaw=0.0) -> Block:
        w, h = self.tile_w, self.tile_h
        up = np.array([0, math.cos(lean), math.sin(lean)])
        right = np.array([math.cos(yaw), 0, -math.sin(yaw)])
        bl = np.array([x, y, z])
        face = np.stack([bl + up * h, bl + right * w + up * h, bl + right * w, bl])
        back = np.cross(right, up) * -self.thick  # into the stand, away from the camera
        if back[2] < 0:
            back = -back
        return self.block(code, face, back, True)

    def flat(self, code, cx, cz, angle) -> Block:
        w, h = self.tile_w, self.tile_h
        right = np.array([math.cos(angle), 0, -math.sin(angle)])
        up = np.array([math.sin(angle), 0, math.cos(angle)])
        c = np.array([cx, self.thick, cz])
        face = np.stack([c - right * w / 2 + up * h / 2, c + right * w / 2 + up * h / 2,
                         c + right * w / 2 - up * h / 2, c - right * w / 2 - up * h / 2])
        return self.block(code, face, np.array([0, -self.thick, 0]), False)


def _codes(rng, box: R.TileBox, n: int) -> list[str]:
    out = []
    while len(out) < n:
        chunk = R._random_set(rng) if rng.random() < 0.5 else R._random_codes(rng, 3)
        out += box.take(chunk[: n - len(out)])
    return out


def _beam_texture(rng, color: np.ndarray, length_cm: float, height_cm: float, logo: bool
                  ) -> tuple[np.ndarray, np.ndarray | None]:
    """A stand's front beam (moulded plastic), with an embossed logo; (texture, logo mask)."""
    px = 24  # texture pixels per cm
    tw, th = max(8, int(length_cm * px)), max(4, int(height_cm * px))
    tex = np.empty((th, tw, 3), np.float32)
    tex[:] = color
    tex *= (1 + 0.04 * R._smooth_noise(rng, th, tw, 6))[..., None]
    yy = np.linspace(0, 1, th, dtype=np.float32)[:, None, None]
    tex *= 1.12 - 0.2 * yy  # the top edge catches the light
    if not logo:
        return np.clip(tex, 0, 255).astype(np.uint8), None
    text = R._text_mask("Rummikub", int(rng.integers(2)), 48)
    lh = int(th * rng.uniform(0.45, 0.7))
    lw = int(lh * text.shape[1] / text.shape[0])
    lw = min(lw, tw - 4)
    text = cv2.resize(text, (lw, max(2, int(lw * text.shape[0] / text.shape[1]))))
    cx, cy = tw * rng.uniform(0.3, 0.7), th * 0.5
    emboss = rng.uniform(25, 60)
    canvas = tex.copy()
    R._paste(canvas, text, np.clip(color + emboss, 0, 255), cx - 1, cy - 1, 0.9)
    R._paste(canvas, text, np.clip(color + emboss * 0.5, 0, 255), cx, cy, 0.9)
    mask = np.zeros((th, tw), np.float32)
    R._paste(mask[..., None], text, (1.0,), cx, cy, 1.0)
    return np.clip(canvas, 0, 255).astype(np.uint8), mask > 0.3


def _room_and_table(rng, camera: Camera, w: int, h: int) -> Painter:
    """The room's wall, then the table's top (a textured plane out to its edges)."""
    wall = np.empty((h, w, 3), np.float32)
    wall[:] = rng.uniform(60, 220, 3)
    wall *= (1 + 0.1 * R._smooth_noise(rng, h, w, 2))[..., None]
    painter = Painter(camera, wall)
    surface = str(rng.choice(R.SURFACES, p=[0.3, 0.25, 0.15, 0.1, 0.1, 0.1]))
    size = (160.0, 120.0)  # cm
    tex, _ = R._surface(rng, 720, 960, surface)
    x0 = -size[0] / 2 + rng.uniform(-20, 20)
    z0 = -45.0 + rng.uniform(-15, 5)
    corners = np.array([[x0, 0, z0 + size[1]], [x0 + size[0], 0, z0 + size[1]],
                        [x0 + size[0], 0, z0], [x0, 0, z0]])
    painter.texture_plane(corners, np.clip(tex, 0, 255).astype(np.uint8))
    return painter


def _shadow(world: _World, painter: Painter, block: Block, floor_y: float, strength: float):
    """A block's shadow along the light onto the plane y = floor_y, over what is drawn."""
    pts = np.vstack([block.face, block.face + block.back])
    down = -world.light / max(1e-3, world.light[1])
    drop = (pts[:, 1] - floor_y)[:, None]
    cast = pts + down * drop
    cast[:, 1] = floor_y
    if world.camera.to_camera(cast)[:, 2].min() < 2:
        return
    px = world.camera.project(np.vstack([cast, pts[pts[:, 1] <= floor_y + 0.3]]))
    hull = cv2.convexHull(px).reshape(-1, 2)
    painter.darken(hull, strength, max(1.0, 0.06 * np.ptp(px[:, 0])))


def _draw(world: _World, painter: Painter, blocks, floor_y: float, shadow: float):
    for b in blocks:
        _shadow(world, painter, b, floor_y, shadow)
    for b in sorted(blocks, key=lambda b: -world.camera.depth(b.face)):
        draw_block(painter, b, world.light, world.rng, world.gloss, 5000 + b.face_id)


def _stand(world: _World, painter: Painter, tiers: int, n_per_row: int, decoys: list):
    """A stand of `tiers` steps at the origin, its tiles drawn tier by tier, top first."""
    rng, ww, th = world.rng, world.tile_w, world.tile_h
    length = ww * (n_per_row + rng.uniform(0.8, 2.5))
    color = np.asarray(E._pick(rng, [(22, 22, 24), (30, 28, 28), (18, 18, 20), (40, 40, 44),
                                     (22, 22, 24), (60, 70, 90), (200, 200, 205)]), np.float64)
    color = color * rng.uniform(0.85, 1.2)
    lean = math.radians(rng.uniform(6, 18))
    base = rng.uniform(0.8, 1.6)  # the lowest ledge's height above the table
    rise = th * rng.uniform(0.35, 0.6)
    step = th * math.sin(lean) + world.thick + rng.uniform(0.3, 0.8)
    lip = th * rng.uniform(0.08, 0.16)
    beam_t = rng.uniform(0.5, 0.9)
    x0, x1 = -length / 2, length / 2
    light = world.light
    for k in reversed(range(tiers)):
        y, z = base + k * rise, k * step
        z_back = z + step + (1.5 if k == tiers - 1 else 0)
        # the ledge the tiles stand on (the next riser hides its back)
        painter.polygon([[x0, y, z_back], [x1, y, z_back], [x1, y, z - beam_t], [x0, y, z - beam_t]],
                        color * 0.9, 10 + k)
        if k == tiers - 1 and rng.random() < 0.5:  # a back plate behind the top tier
            top = y + th * rng.uniform(0.4, 0.8)
            painter.polygon([[x0, top, z_back], [x1, top, z_back], [x1, y, z_back],
                             [x0, y, z_back]], color * 0.8, 20)
        x = x0 + ww * rng.uniform(0.3, 1.0)
        row = []
        for code in _codes(rng, world.box, int(rng.integers(max(1, n_per_row - 5), n_per_row + 1))):
            if x + ww > x1 - 0.2:
                break
            row.append(world.standing(code, x, y, z + 0.05,
                                      lean + math.radians(rng.normal(0, 1.5)),
                                      math.radians(rng.normal(0, 1.5))))
            x += ww + rng.uniform(0.02, 0.25)
        _draw(world, painter, row, y, rng.uniform(0.25, 0.5))
        # the beam in front of the tier: its top, then its face (down to the ledge below)
        y_low = base + (k - 1) * rise if k else 0.0
        top = y + lip
        painter.polygon([[x0, top, z], [x1, top, z], [x1, top, z - beam_t], [x0, top, z - beam_t]],
                        np.minimum(color * 1.6 + 20, 255), 30 + k)
        logo = k == 0 and rng.random() < 0.85
        tex, logo_mask = _beam_texture(rng, color * (0.9 + 0.5 * max(0, -light[2])),
                                       length, top - y_low, logo)
        front = np.array([[x0, top, z - beam_t], [x1, top, z - beam_t], [x1, y_low, z - beam_t],
                          [x0, y_low, z - beam_t]])
        H = painter.texture(front, tex, DECOY_ID if logo else 40 + k)
        if logo and H is not None:
            decoys.append((H, logo_mask))


def _table_tiles(world: _World, painter: Painter, zone: tuple, n: int, in_rows: bool):
    """Tiles lying on the table inside zone (x0, x1, z0, z1); rows of sets or loose."""
    rng = world.rng
    x0, x1, z0, z1 = zone
    blocks, taken = [], []
    for _ in range(n):
        for _try in range(12):
            if in_rows:
                codes = _codes(rng, world.box, int(rng.integers(3, 7)))
                angle = rng.normal(0, 0.08)
            else:
                codes = _codes(rng, world.box, 1)
                angle = rng.uniform(0, 2 * math.pi) if rng.random() < 0.4 else rng.normal(0, 0.3)
            span = len(codes) * world.tile_w * 1.03
            cx, cz = rng.uniform(x0, max(x0, x1 - span)), rng.uniform(z0, z1)
            box = (cx - 0.5, cz - world.tile_h, cx + span + 0.5, cz + world.tile_h)
            if any(not (box[2] < b[0] or b[2] < box[0] or box[3] < b[1] or b[3] < box[1])
                   for b in taken):
                continue
            taken.append(box)
            for i, code in enumerate(codes):
                d = i * world.tile_w * 1.03
                blocks.append(world.flat(code, cx + d * math.cos(angle) + world.tile_w / 2,
                                         cz - d * math.sin(angle), angle))
            break
    return blocks, taken


def _decoy_box(world: _World, painter: Painter, zone, taken, decoys: list):
    """A game box's lid on the table: coloured, its logo and a smiley printed on top.
    Returns (its depth, a function that draws it), or None when there is no room: the
    caller draws it between the tiles behind it and those in front."""
    rng = world.rng
    bw, bd, bh = rng.uniform(12, 22), rng.uniform(8, 14), rng.uniform(1.5, 4)
    for _ in range(10):
        cx, cz = rng.uniform(zone[0], zone[1]), rng.uniform(zone[2], zone[3])
        box = (cx - bw / 2, cz - bd / 2, cx + bw / 2, cz + bd / 2)
        if not any(not (box[2] < b[0] or b[2] < box[0] or box[3] < b[1] or b[3] < box[1])
                   for b in taken):
            break
    else:
        return None
    taken.append(box)
    color = np.asarray(E._pick(rng, [(150, 60, 20), (40, 40, 180), (230, 230, 230),
                                     (30, 30, 30), (30, 140, 220)]), np.float32)
    tw, th = 320, int(320 * bd / bw)
    tex = np.empty((th, tw, 3), np.float32)
    tex[:] = color
    mask = np.zeros((th, tw, 1), np.float32)
    text = R._text_mask("Rummikub", int(rng.integers(len(R.FONT_FILES) - 1)), 64)
    lw = int(tw * rng.uniform(0.4, 0.7))
    text = cv2.resize(text, (lw, max(2, int(lw * text.shape[0] / text.shape[1]))))
    ink = np.clip(255 - color + rng.normal(0, 20, 3), 0, 255)
    R._paste(tex, text, ink, tw * 0.5, th * 0.3)
    R._paste(mask, text, (1.0,), tw * 0.5, th * 0.3)
    if rng.random() < 0.6:  # a smiley beside the name, as on the box's lid
        sm = _smiley(int(th * 0.4), ink, color)
        y0, x0 = int(th * 0.5), int(tw * rng.uniform(0.1, 0.5))
        tex[y0:y0 + sm.shape[0], x0:x0 + sm.shape[1]] = sm[..., :3]
        mask[y0:y0 + sm.shape[0], x0:x0 + sm.shape[1], 0] = sm[..., 3] > 0
    top = np.array([[box[0], bh, box[3]], [box[2], bh, box[3]], [box[2], bh, box[1]],
                    [box[0], bh, box[1]]])
    x0, z0, x1, z1 = box
    walls = [[[x0, bh, z0], [x1, bh, z0], [x1, 0, z0], [x0, 0, z0]]]  # the front
    cam_x = float(world.camera.position[0])
    if cam_x < x0 or cam_x > x1:  # the side the camera sees
        x = x0 if cam_x < x0 else x1
        walls.append([[x, bh, z1], [x, bh, z0], [x, 0, z0], [x, 0, z1]])

    def draw():
        for wall, shade in zip(walls, (0.7, 0.55), strict=False):
            painter.polygon(wall, color * shade, DECOY_ID + 1)
        H = painter.texture(top, np.clip(tex, 0, 255).astype(np.uint8), DECOY_ID + 2)
        if H is not None:
            decoys.append((H, mask[..., 0] > 0.3))

    return world.camera.depth(np.array([[(x0 + x1) / 2, bh / 2, z0]])), draw


def _stickers(world: _World, painter: Painter, zone, taken, decoys: list, n: int):
    """Round smiley stickers on the table (a joker's face that is no tile)."""
    rng = world.rng
    for _ in range(n):
        r = rng.uniform(0.8, 1.6)
        cx, cz = rng.uniform(zone[0], zone[1]), rng.uniform(zone[2], zone[3])
        box = (cx - r, cz - r, cx + r, cz + r)
        if any(not (box[2] < b[0] or b[2] < box[0] or box[3] < b[1] or b[3] < box[1])
               for b in taken):
            continue
        taken.append(box)
        paper = np.float32(E._pick(rng, [(60, 220, 250), (245, 245, 245), (200, 230, 250)]))
        ink = np.float32(E._pick(rng, [(45, 35, 215), (28, 26, 30)]))
        sm = _smiley(96, ink, paper)
        tex = np.zeros((96, 96, 4), np.uint8)
        cv2.circle(tex, (48, 48), 47, 255, -1, cv2.LINE_AA)
        alpha = tex[..., 0].copy()
        tex[..., :3] = sm[..., :3]
        tex[..., 3] = alpha
        corners = np.array([[cx - r, 0.02, cz + r], [cx + r, 0.02, cz + r], [cx + r, 0.02, cz - r],
                            [cx - r, 0.02, cz - r]])
        H = painter.texture(corners, tex, DECOY_ID + 3)
        if H is not None:
            decoys.append((H, tex[..., 3] > 127))


def _decoy_mask(painter: Painter, decoys) -> np.ndarray:
    """Pixels where a hard negative's print shows in the finished photo."""
    out = np.zeros(painter.ids.shape, bool)
    h, w = out.shape
    for H, mask in decoys:
        warped = cv2.warpPerspective(mask.astype(np.uint8) * 255, H, (w, h),
                                     flags=cv2.INTER_NEAREST, borderValue=0) > 127
        out |= warped & (painter.ids >= DECOY_ID) & (painter.ids < 1000)
    return out


def _smiley(size: int, ink, paper) -> np.ndarray:
    """A (size, size) BGRA smiley on `paper` (alpha: where the ink is)."""
    face = np.zeros((R.FACE_H, R.FACE_W, 3), np.float32)
    face[:] = paper
    R._draw_smiley(face, np.asarray(ink, np.float32), R.FACE_W / 2, R.FACE_H / 2,
                   R.FACE_W * 0.32)
    top = (R.FACE_H - R.FACE_W) // 2
    sq = cv2.resize(face[top:top + R.FACE_W], (size, size))
    out = np.empty((size, size, 4), np.uint8)
    out[..., :3] = np.clip(sq, 0, 255)
    out[..., 3] = (np.abs(sq - np.asarray(paper, np.float32)).max(2) > 30) * 255
    return out


# ----------------------------------------------------------------------------- scene
def _camera(rng, kind: str, world: _World, tiers: int, rise: float, length: float,
            w: int, h: int) -> Camera:
    th = world.tile_h
    target = np.array([rng.uniform(-0.2, 0.2) * length, 1.0 + th * (0.4 + 0.35 * tiers),
                       tiers * th * 0.25])
    hfov = rng.uniform(60, 72) * (w / max(w, h))
    focal = w / 2 / math.tan(math.radians(hfov) / 2)

    # Tiles this share of a landscape photo's height. A phone held upright frames the same
    # stand across its short side, so its tiles are as many pixels as the landscape
    # photo's scaled to that width (w / h): the share is of w * w / h.
    side = h if w >= h else w * w / h

    def distance(lo: float, hi: float) -> float:
        return float(np.clip(th * focal / (rng.uniform(lo, hi) * side), 12, 75))

    if kind == "closeup":
        target[0] = rng.uniform(-0.4, 0.4) * length
        return Camera.look_at(target, distance(0.22, 0.32), rng.uniform(20, 45),
                              rng.normal(0, 10), rng.normal(0, 3), hfov, w, h)
    if kind == "low":
        target[1] *= 0.6
        return Camera.look_at(target, distance(0.07, 0.16), rng.uniform(8, 20),
                              rng.normal(0, 12), rng.normal(0, 2), hfov, w, h)
    return Camera.look_at(target, distance(0.08, 0.25), rng.uniform(20, 45), rng.normal(0, 12),
                          rng.normal(0, 4), hfov, w, h)


def render_depth_scene(rng: np.random.Generator, edition: E.Edition | None = None, *,
                       kind: str | None = None, width: int | None = None,
                       height: int | None = None, tiers: int | None = None,
                       effects: bool = True) -> DepthScene:
    """One photo of a stand (and table) in `edition` (default: a training edition, often
    the white Original look). `kind` one of KINDS, `tiers` 1-3 (None: random). Default
    size 1280x720 or 1000x750. `effects`: light, blur, noise and JPEG as a phone's."""
    if edition is None:
        edition = training_edition(rng)
    if kind is None:
        kind = str(rng.choice(KINDS, p=KIND_WEIGHTS))
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if width is None or height is None:
        width, height = (1280, 720) if rng.random() < 0.7 else (1000, 750)
    w, h = int(width), int(height)
    light = np.array([rng.uniform(-0.6, 0.6), rng.uniform(0.7, 1.3), rng.uniform(-0.8, 0.3)])
    light /= np.linalg.norm(light)
    drawn_tiers = int(rng.choice([1, 2, 3], p=[0.25, 0.45, 0.3]))
    tiers = drawn_tiers if tiers is None else int(tiers)
    if tiers not in (1, 2, 3):
        raise ValueError(f"tiers must be 1, 2 or 3, not {tiers!r}")
    n_per_row = int(rng.integers(6, 15))
    world = _World(rng, edition, None, light)  # type: ignore[arg-type]
    world.gloss = float(rng.uniform(0, 90))
    length = world.tile_w * (n_per_row + 1.6)
    camera = _camera(rng, kind, world, tiers, world.tile_h * 0.55, length, w, h)
    world.camera = camera
    painter = _room_and_table(rng, camera, w, h)
    decoys: list = []
    depth = tiers * (world.tile_h * 0.3 + world.thick + 0.6) + 1.5
    half = length / 2 + 1.0
    # behind the stand: rows of sets and a game box, far first
    behind = (-35.0, 35.0, depth + 2.0, depth + 30.0)
    blocks, taken = _table_tiles(world, painter, behind, int(rng.integers(0, 5)),
                                 rng.random() < 0.6)
    box = _decoy_box(world, painter, behind, taken, decoys) if rng.random() < 0.5 else None
    if rng.random() < 0.4:
        _stickers(world, painter, behind, taken, decoys, int(rng.integers(1, 3)))
    shadow = rng.uniform(0.2, 0.45)
    if box is None:
        _draw(world, painter, blocks, 0.0, shadow)
    else:  # the tiles behind the box, the box, the tiles in front of it
        far = [camera.depth(b.face) > box[0] for b in blocks]
        _draw(world, painter, [b for b, f in zip(blocks, far, strict=True) if f], 0.0, shadow)
        box[1]()
        _draw(world, painter, [b for b, f in zip(blocks, far, strict=True) if not f], 0.0,
              shadow)
    _stand(world, painter, tiers, n_per_row, decoys)
    # beside and in front of the stand: loose tiles, stickers
    near: list = []
    for zone in ((-40.0, -half - 3.0, -8.0, depth), (half, 40.0, -8.0, depth),
                 (-30.0, 30.0, -25.0, -5.0)):
        if rng.random() < 0.45:
            got, used = _table_tiles(world, painter, zone, int(rng.integers(1, 5)),
                                     rng.random() < 0.3)
            near += got
            if rng.random() < 0.3:
                _stickers(world, painter, zone, used, decoys, 1)
    _draw(world, painter, near, 0.0, rng.uniform(0.2, 0.45))
    decoy_mask = _decoy_mask(painter, decoys)
    tiles = [t for t in (visible_label(painter, b) for b in world.blocks) if t is not None]
    image = np.clip(painter.image, 0, 255).astype(np.uint8)
    if effects:
        image = R._photo_effects(rng, image.astype(np.float32))
    return DepthScene(image, tiles, decoy_mask, kind, edition, camera)


def draw_depth_labels(scene: DepthScene) -> np.ndarray:
    """The photo with each labelled tile's visible quad (green; number hidden: orange,
    lying wider than tall: grey) and the hard negatives tinted magenta."""
    out = scene.image.copy()
    out[scene.decoys] = (out[scene.decoys] * 0.5 + np.array([255, 0, 255]) * 0.5).astype(np.uint8)
    for t in scene.tiles:
        color = (0, 220, 0) if _labelled(t) else (0, 140, 255) if t.standing else (160, 160, 160)
        cv2.polylines(out, [np.round(t.visible).astype(np.int32)], True, color, 2, cv2.LINE_AA)
        if _labelled(t):
            p = np.round(t.visible.mean(0)).astype(int)
            cv2.putText(out, t.code, tuple(p), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 0, 255), 1,
                        cv2.LINE_AA)
    return out


if __name__ == "__main__":
    import sys
    import time
    from pathlib import Path

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    out_dir = Path(sys.argv[2] if len(sys.argv) > 2 else "out/render3d")
    out_dir.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        t0 = time.perf_counter()
        scene = render_depth_scene(np.random.default_rng(i), kind=KINDS[i % len(KINDS)])
        ms = (time.perf_counter() - t0) * 1000
        cv2.imwrite(str(out_dir / f"depth{i}.jpg"), scene.image)
        cv2.imwrite(str(out_dir / f"depth{i}_labels.jpg"), draw_depth_labels(scene))
        print(f"depth{i} {scene.kind:8s} {scene.edition.name:10s} {len(scene.labels):3d} "
              f"labelled, {len(scene.ignores):3d} ignored {ms:6.0f} ms")
