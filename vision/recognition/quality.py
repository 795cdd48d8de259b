"""Is a photo fit to be read? Too blurred, too dark or overexposed photos are refused.

Measured on the detected tiles' crops at the classifier's canonical size (32x44), so a
measure means the same whether the tiles are big or small in the photo: what the
classifier sees is what is judged. The thresholds were set where the readings of the real
`valid/` photos first go wrong (`bench.eval_quality`, docs/decisions/quality-gate.md).

- blur: the ink's edge width in crop pixels (inside the face, its outline left out), from
  how much of its steepest slopes (p99) along one direction a known extra blur (sigma
  REBLUR) takes away: an edge already blurred by sigma s keeps s / sqrt(s^2 + r^2) of it.
  Free of the ink's contrast and the face's shading. Taken along 4 directions and the
  widest kept, since a shake smears the edges across its own direction only and leaves
  the others sharp. The median over the whole tiles (one the photo's edge cuts is
  cropped partly from repeated edge pixels). A second width, from the ink's contrast
  over its steepest slopes (`crop_spread_width`), catches a long shake, whose plateaus
  the extra blur barely changes; either over its threshold is "too blurred".
- dark: the tiles' body brightness (the median grey of a crop; the face is most of it),
  the median over the tiles; with no tile found, the photo's own median grey.
- overexposed: the faces burnt white (the share of a crop's pixels at the top of the
  range, the median over the tiles) AND something the reader needs lost with them: the
  faintest tiles' ink washed out (the tenth percentile over the tiles of a face's ink
  contrast), or the table or stand just around the tiles burnt white too (a white tile's
  outline gone, so the detector misses tiles). A white face burnt white with its ink and
  outline intact reads right (a white edition, a bright lamp); with no tile found, the
  photo's share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.recognition.decode import PhotoError

# Chosen in docs/decisions/quality-gate.md (bench.eval_quality on the real valid/ photos).
MAX_EDGE_WIDTH = 1.05  # crop pixels; clean valid/ photos 0.68-0.86
MAX_SPREAD_WIDTH = 1.5  # crop pixels; clean valid/ photos 0.81-1.16
MIN_BODY_GREY = 36.0  # 0-255; clean valid/ photos 143-229
MAX_BURNT_SHARE = 0.5  # of a crop's pixels at >= BURNT_GREY; clean valid/ photos 0.00
BURNT_GREY = 250
# With the faces burnt, "overexposed" needs either of these too (docs/decisions/quality-gate.md,
# "A white face burnt white"):
MIN_INK_CONTRAST = 40.0  # grey levels, the faintest tenth of the tiles; clean valid/ 39-123
MAX_RING_BURNT = 0.3  # share of the band just around the tiles at >= BURNT_GREY; clean 0.00
RING = 0.25  # the band: each tile's quad grown by this share of its size about its centre
INSET = 0.12  # of a crop's sides left out of the blur measure: the tile's outline
REBLUR = 1.0  # crop pixels: the known blur the measure adds
MIN_SLOPE = 1.0  # grey levels per crop pixel: a direction with a flatter steepest slope has none
# With no tile found the whole photo is judged (no blur measure: without tiles there is no
# scale to judge it at): darker than this median grey, or more than this share burnt white.
MIN_PHOTO_GREY = 20.0  # clean valid/ photos 89-201
MAX_PHOTO_BURNT = 0.5

ADVICE = {
    "too blurred": "hold the phone still and take it again",
    "too dark": "turn on a light or move to a brighter spot and take it again",
    "overexposed": "move out of the direct light or away from the flash and take it again",
}


@dataclass(frozen=True)
class PhotoQuality:
    """The measures of one photo (None where there were no tiles to measure on)."""

    edge_width: float | None
    spread_width: float | None
    body_grey: float | None
    burnt_share: float | None
    photo_grey: float
    photo_burnt: float
    tiles: int
    ink_contrast: float | None = None
    ring_burnt: float | None = None

    def problems(self) -> list[str]:
        """Every reason the photo cannot be read ("too blurred", "too dark",
        "overexposed"); empty when it is fit."""
        found = []
        if self.edge_width is not None and (self.edge_width > MAX_EDGE_WIDTH
                                            or self.spread_width > MAX_SPREAD_WIDTH):
            found.append("too blurred")
        dark = (self.body_grey < MIN_BODY_GREY if self.body_grey is not None
                else self.photo_grey < MIN_PHOTO_GREY)
        if dark:
            found.append("too dark")
        if self.burnt_share is None:
            burnt = self.photo_burnt > MAX_PHOTO_BURNT
        else:
            burnt = self.burnt_share > MAX_BURNT_SHARE and (
                self.ink_contrast is None or self.ink_contrast < MIN_INK_CONTRAST
                or self.ring_burnt is None or self.ring_burnt > MAX_RING_BURNT)
        if burnt:
            found.append("overexposed")
        return found

    def to_json(self) -> dict:
        def r(v):
            return None if v is None else round(float(v), 3)

        return {"edge_width": r(self.edge_width), "spread_width": r(self.spread_width),
                "body_grey": r(self.body_grey),
                "burnt_share": r(self.burnt_share), "ink_contrast": r(self.ink_contrast),
                "ring_burnt": r(self.ring_burnt), "photo_grey": r(self.photo_grey),
                "photo_burnt": r(self.photo_burnt), "tiles": self.tiles,
                "problems": self.problems()}


class PhotoUnfit(PhotoError):
    """A photo too blurred, dark or overexposed to read: its words say what to do."""

    def __init__(self, problems: list[str], quality: PhotoQuality | None = None) -> None:
        self.problems = list(problems)
        self.quality = quality
        super().__init__(unfit_words(self.problems))


def unfit_words(problems: list[str]) -> str:
    """'too blurred: hold the phone still and take it again' (problems joined by '; ')."""
    return "; ".join(f"{p}: {ADVICE[p]}" for p in problems)


def crop_edge_width(grey: np.ndarray) -> np.ndarray:
    """(N,) edge width in pixels of each (N, H, W) grey crop (its face inside the outline),
    along the direction (of 4, 45 degrees apart) where its edges are widest."""
    return crop_widths(grey)[0]


def crop_spread_width(grey: np.ndarray) -> np.ndarray:
    """(N,) edge width in pixels of each (N, H, W) grey crop from the ink's contrast."""
    return crop_widths(grey)[1]


def crop_widths(grey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edge width, spread width), each (N,), of (N, H, W) grey crops.

    Edge width: blurred once more by a known sigma r, an edge of width s keeps
    s / sqrt(s^2 + r^2) of its steepest slopes (p99 along a direction): the ratio says s
    whatever the ink's contrast (an orange 9 on cream has a fifth of a black one's) and
    whatever shading the face has. Spread width: (p95 - p5 of the face's grey) over
    sqrt(2 pi) times those slopes; a long shake leaves plateaus whose slopes a small extra
    blur barely changes (the edge width then reads them sharp), their contrast spread over
    the shake's length does not. Each the widest of 4 directions."""
    import cv2

    g = _face(grey)
    if len(g) == 0:
        return np.zeros(0, np.float32), np.zeros(0, np.float32)
    n = len(g)
    again = np.stack([cv2.GaussianBlur(c, (0, 0), REBLUR, borderType=cv2.BORDER_REPLICATE)
                      for c in g])
    steep, steep_again = (_steepest(x) for x in (g, again))
    ratio = np.clip(steep_again / np.maximum(steep, 1e-3), 0.0, 0.99)
    width = REBLUR * ratio / np.sqrt(1.0 - ratio ** 2)
    # A direction with no slope at all (ink drawn all one way, a blank face) says nothing:
    # the ratio of noise is that of a sharp edge. A shake's own direction keeps a slope
    # (a fifth of a sharp one at the strongest blur measured), and its ratio is near 1.
    edge = np.where(steep >= MIN_SLOPE, width, 0.0).max(axis=0)
    low, high = np.percentile(g.reshape(n, -1), [5, 95], axis=1)
    # For the spread, directions with under 1/8 of the steepest's slope are left out.
    slowest = np.where(steep >= steep.max(axis=0) / 8, steep, np.inf).min(axis=0)
    spread = (high - low) / (np.sqrt(2 * np.pi) * np.maximum(slowest, 1e-3))
    return edge, spread


def _steepest(g: np.ndarray) -> np.ndarray:
    """(4, N) the steepest slopes (p99) of (N, H, W) crops along 0, 45, 90, 135 degrees."""
    dy, dx = np.gradient(g, axis=(1, 2))
    angles = np.radians([0, 45, 90, 135])
    along = np.abs(np.cos(angles)[:, None, None, None] * dx + np.sin(angles)[:, None, None,
                                                                              None] * dy)
    return np.percentile(along.reshape(4, len(g), -1), 99, axis=2)


def _face(grey: np.ndarray) -> np.ndarray:
    """The crops' face inside the outline: the tile's outline against the table (or a
    rack's black) is no ink, and its contrast would stand for the ink's."""
    g = np.asarray(grey, np.float32)
    if len(g) == 0:
        return g
    h, w = g.shape[1:]
    return g[:, round(h * INSET):h - round(h * INSET), round(w * INSET):w - round(w * INSET)]


def measure(image_bgr: np.ndarray, corners: np.ndarray,
            crop_size: tuple[int, int] | None = None,
            stand: np.ndarray | None = None) -> PhotoQuality:
    """The quality measures of a BGR photo whose tiles lie at `corners` (N, 4, 2). On a
    rack photo, `stand` (N,) marks the tiles standing on the stand (`_ring`)."""
    import cv2

    from vision.recognition.rectify import rectify_tiles

    # every few pixels (about 512 along the long side): a median and a share need no more
    step = max(1, max(image_bgr.shape[:2]) // 512)
    grey_photo = cv2.cvtColor(np.ascontiguousarray(image_bgr[::step, ::step]),
                              cv2.COLOR_BGR2GRAY)
    photo_grey = float(np.median(grey_photo))
    photo_burnt = float(np.mean(grey_photo >= BURNT_GREY))
    corners = np.asarray(corners, np.float32).reshape(-1, 4, 2)
    if len(corners) == 0:
        return PhotoQuality(None, None, None, None, photo_grey, photo_burnt, 0)
    # A tile the photo's edge cuts is cropped partly from repeated edge pixels, a smear
    # that is no blur: judged on the whole tiles when there are any.
    h, w = image_bgr.shape[:2]
    whole = (corners.min(axis=1) > 0).all(axis=1) & (corners.max(axis=1) < (w - 1, h - 1)).all(
        axis=1)
    every = corners
    if whole.any():
        corners = corners[whole]
        stand = None if stand is None else np.asarray(stand, bool)[whole]
    crops = rectify_tiles(image_bgr, corners, crop_size)
    n, ch, cw = crops.shape[:3]
    grey = cv2.cvtColor(crops.reshape(n * ch, cw, 3), cv2.COLOR_BGR2GRAY).reshape(n, ch, cw)
    flat = grey.reshape(n, -1)
    edge, spread = crop_widths(grey)
    face = _face(grey).reshape(n, -1)
    ink = np.percentile(face, 50, axis=1) - np.percentile(face, 3, axis=1)
    return PhotoQuality(
        edge_width=float(np.median(edge)),
        spread_width=float(np.median(spread)),
        body_grey=float(np.median(np.median(flat, axis=1))),
        burnt_share=float(np.median(np.mean(flat >= BURNT_GREY, axis=1))),
        photo_grey=photo_grey, photo_burnt=photo_burnt, tiles=len(corners),
        ink_contrast=float(np.percentile(ink, 10)),
        ring_burnt=_ring(grey_photo, corners / step, every / step, stand))


def _ring(grey: np.ndarray, corners: np.ndarray, every: np.ndarray,
          stand: np.ndarray | None) -> float | None:
    """`ring_burnt` round the tiles at `corners`; on a rack photo (`stand` marks those
    standing on the stand) round those only and without the band above them, every tile's
    face (`every`) left out: what shows of a stand's tiles is outlined by the stand they
    stand in and the gaps between them, while behind the top tier lies the table or the
    wall, burnt or not (a black stand before a white table in strong light, white 770,015;
    docs/decisions/quality-gate.md, "A rack's ring")."""
    if stand is None or not np.any(stand):
        return ring_burnt(grey, corners)
    return ring_burnt(grey, corners[stand], top=False, faces=every)


def ring_burnt(grey: np.ndarray, corners: np.ndarray, top: bool = True,
               faces: np.ndarray | None = None) -> float | None:
    """The share of the band just around the tiles at `corners` (`RING` of each tile's
    size, the tiles' own faces left out, and those at `faces` too) on a `grey` picture at
    >= BURNT_GREY: a white tile on a table burnt white has no outline left to find it by.
    Without `top`, the band beyond each tile's top edge is left out (a stand's tiles: the
    table behind the stand). None where the band is empty. Taken on the photo's own
    every-few-pixels grey (`measure`): a share, not an outline."""
    import cv2

    quads = np.asarray(corners, np.float32).reshape(-1, 4, 2)
    centres = quads.mean(axis=1, keepdims=True)
    grown = centres + (quads - centres) * (1 + RING)
    if not top:  # the top corners moved out along the top edge only
        edge = quads[:, 1] - quads[:, 0]
        grown[:, 0] = quads[:, 0] - edge * RING / 2
        grown[:, 1] = quads[:, 1] + edge * RING / 2
    band = np.zeros(grey.shape, np.uint8)
    cv2.fillPoly(band, list(np.round(grown).astype(np.int32)), 1)
    cv2.fillPoly(band, list(np.round(quads).astype(np.int32)), 0)
    if faces is not None and len(faces):
        cv2.fillPoly(band, list(np.round(np.asarray(faces, np.float32)).astype(np.int32)), 0)
    inside = band.astype(bool)
    if not inside.any():
        return None
    return float(np.mean(grey[inside] >= BURNT_GREY))


def check(image_bgr, detections, crop_size: tuple[int, int] | None = None,
          stand: np.ndarray | None = None) -> PhotoQuality:
    """`measure` for a photo (a BGR array or a `vision.recognition.decode.Photo`) and its
    reading (`TileDetections`); `stand`: a rack photo's tiles standing on the stand."""
    corners = np.asarray(detections.corners, np.float32).reshape(-1, 4, 2)
    if not hasattr(image_bgr, "reduced"):
        return measure(image_bgr, corners, crop_size, stand)
    # A big photo is measured on the decode its tiles were cropped from (whole-photo
    # corners scaled to it), not decoded in full again.
    from vision.recognition.pipeline import crop_reduction
    from vision.recognition.rectify import crop_size as model_crop_size

    factor = crop_reduction(corners, crop_size or model_crop_size())
    image = image_bgr.reduced(factor)
    scale = np.float32([image.shape[1] / image_bgr.width, image.shape[0] / image_bgr.height])
    return measure(image, (corners + 0.5) * scale - 0.5, crop_size, stand)


def refuse_unfit(image_bgr, detections, crop_size: tuple[int, int] | None = None,
                 stand: np.ndarray | None = None) -> PhotoQuality:
    """The photo's quality; raises `PhotoUnfit` (a PhotoError) when it is unfit to read
    (a rack photo's ring judged round its `stand` tiles, `measure`)."""
    quality = check(image_bgr, detections, crop_size, stand)
    problems = quality.problems()
    if problems:
        raise PhotoUnfit(problems, quality)
    return quality
