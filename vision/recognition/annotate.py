"""Pictures for people: the photo with every tile outlined and read, and the table judged.

Sizes scale with the photo (line widths and fonts are set for a 1000 px photo and grow
with it), and every text sits on a filled box, so the picture reads on a phone screen.
With a `TableReading` each set gets one outline, green when valid and red when not with
its reason written beside it, jokers show the tile they stand for, and loose tiles are
marked.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.recognition.detections import TileDetections

# BGR colours.
TILE_COLORS = {
    "K": (40, 40, 40),
    "R": (40, 40, 215),
    "B": (200, 90, 20),
    "O": (0, 140, 245),
    "G": (90, 140, 0),  # bluer and darker than VALID_COLOR, so a green tile stays a tile
    "J": (160, 40, 160),
}
VALID_COLOR = (40, 180, 40)
INVALID_COLOR = (30, 30, 220)
LOOSE_COLOR = (0, 200, 255)
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
FONT = cv2.FONT_HERSHEY_SIMPLEX


def _attr(obj, name, default=None):
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _code_of(tile) -> str:
    """A referee Tile (`.code()`) or a plain code string -> 'R7'."""
    code = getattr(tile, "code", None)
    return str(code() if callable(code) else tile)


class TableAnnotator:
    """Draws tile outlines and readings, and optionally the judged sets, on a photo copy.

    `scale` multiplies every size (1.0 = sizes chosen for the photo's size);
    `show_confidence` adds each reading's confidence to its label.
    """

    def __init__(self, *, scale: float = 1.0, show_confidence: bool = False,
                 max_reason_chars: int = 48) -> None:
        self.scale = float(scale)
        self.show_confidence = show_confidence
        self.max_reason_chars = max_reason_chars

    # -- sizes -----------------------------------------------------------------------------
    def _unit(self, image: np.ndarray) -> float:
        height, width = image.shape[:2]
        return max(0.4, max(height, width) / 1000.0) * self.scale

    # -- drawing helpers -------------------------------------------------------------------
    def _label(self, image, text, anchor, bg, *, unit, size=0.55, fg=WHITE, below=False):
        """Text on a filled box whose bottom-left (or top-left if `below`) is `anchor`,
        kept inside the image. Returns the box (x0, y0, x1, y1)."""
        font_scale = size * unit
        thickness = max(1, round(1.6 * unit))
        (tw, th), base = cv2.getTextSize(text, FONT, font_scale, thickness)
        pad = max(2, round(3 * unit))
        height, width = image.shape[:2]
        box_w, box_h = tw + 2 * pad, th + base + 2 * pad
        x0 = int(round(anchor[0]))
        y0 = int(round(anchor[1])) if below else int(round(anchor[1])) - box_h
        x0 = min(max(0, x0), max(0, width - box_w))
        y0 = min(max(0, y0), max(0, height - box_h))
        cv2.rectangle(image, (x0, y0), (x0 + box_w, y0 + box_h), bg, -1)
        cv2.putText(image, text, (x0 + pad, y0 + pad + th), FONT, font_scale, fg, thickness,
                    cv2.LINE_AA)
        return x0, y0, x0 + box_w, y0 + box_h

    @staticmethod
    def _poly(image, points, color, thickness):
        pts = np.round(np.asarray(points, np.float32)).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(image, [pts], True, color, thickness, cv2.LINE_AA)

    @staticmethod
    def dash_segments(points, dash: float) -> np.ndarray:
        """(M, 2, 2) int32 dashes along the closed outline `points` (K, 2), or along each
        of several outlines (T, K, 2): each side is cut into steps of about `dash` pixels
        and every other step is drawn."""
        outlines = np.asarray(points, np.float32)
        outlines = outlines.reshape(-1, *outlines.shape[-2:])
        a = outlines.reshape(-1, 2)
        side = (np.roll(outlines, -1, axis=1) - outlines).reshape(-1, 2)
        steps = np.maximum(1, (np.hypot(side[:, 0], side[:, 1]) // dash).astype(np.int64))
        count = (steps + 1) // 2  # dashes on each side: steps 0, 2, 4, ...
        which = np.repeat(np.arange(len(a)), count)
        k = 2 * (np.arange(len(which)) - np.repeat(np.cumsum(count) - count, count))
        n = steps[which]
        start = a[which] + side[which] * (k / n)[:, None]
        end = a[which] + side[which] * (np.minimum(k + 1, n) / n)[:, None]
        return np.round(np.stack([start, end], axis=1)).astype(np.int32)

    @classmethod
    def _dashed(cls, image, points, color, thickness, dash: float) -> None:
        """Dashed closed outline(s), (K, 2) or (T, K, 2): one polylines call for every dash
        of every outline (a call per dash cost most of the drawing time)."""
        segments = cls.dash_segments(points, dash)
        if len(segments):
            cv2.polylines(image, list(segments), False, color, thickness, cv2.LINE_AA)

    # -- main ------------------------------------------------------------------------------
    def annotate(self, image: np.ndarray, detections: TileDetections, table=None) -> np.ndarray:
        """A copy of `image` (BGR) with the tiles, and the table's sets when given, drawn."""
        out = image.copy()
        if out.ndim == 2:
            out = cv2.cvtColor(out, cv2.COLOR_GRAY2BGR)
        unit = self._unit(out)
        line = max(1, round(2 * unit))
        if table is not None and _attr(table, "detections") is not None:
            detections = _attr(table, "detections")
        codes = detections.codes
        joker_texts = self._joker_texts(table, codes) if table is not None else {}
        loose = set(int(i) for i in (_attr(table, "loose") or [])) if table is not None else set()

        if table is not None:
            self._draw_sets(out, detections, table, unit, line)
        ids = sorted(i for i in loose if 0 <= i < len(codes))
        if ids:  # a dashed ring round each loose tile, under the outlines and labels
            corners = detections.corners[ids]
            centres = corners.mean(axis=1, keepdims=True)
            self._dashed(out, centres + (corners - centres) * 1.18, LOOSE_COLOR, line,
                         dash=6 * unit)

        for i, code in enumerate(codes):
            corners = detections.corners[i]
            uncertain = bool(detections.uncertain[i])
            color = TILE_COLORS.get(code[0], TILE_COLORS["J"])
            self._poly(out, corners, color, line)
            # the tile's top edge (as its number reads upright) drawn thicker
            top = np.round(corners[:2]).astype(np.int32)
            cv2.line(out, tuple(top[0]), tuple(top[1]), WHITE, line + max(1, line // 2),
                     cv2.LINE_AA)
            text = joker_texts.get(i, code)
            if uncertain:
                text += "?"
            if self.show_confidence:
                text += f" {float(detections.confidence[i]):.2f}"
            top_y = float(corners[:, 1].min())
            left_x = float(corners[:, 0].mean())
            self._label(out, text, (left_x - 10 * unit, top_y - 1), color, unit=unit,
                        size=0.5)

        self._banner(out, detections, table, loose, unit)
        return out

    def _joker_texts(self, table, codes: Sequence[str]) -> dict[int, str]:
        """tile id -> 'J=R7' for jokers whose stand-in the referee worked out."""
        texts: dict[int, str] = {}
        sets = _attr(table, "sets") or []
        verdicts = _attr(table, "verdicts") or []
        for ids, verdict in zip(sets, verdicts, strict=False):
            jokers = _attr(verdict, "jokers")
            if not jokers:
                continue
            joker_ids = [int(t) for t in ids if codes[int(t)] == "J"]
            if isinstance(jokers, dict):
                items = list(jokers.items())
                # keyed by tile id, or by position within the set
                for key, stands in items:
                    key = int(key)
                    tile_id = key if key in joker_ids else (
                        int(ids[key]) if 0 <= key < len(ids) else None)
                    if tile_id is not None:
                        texts[tile_id] = f"J={_code_of(stands)}"
            else:
                for tile_id, stands in zip(joker_ids, jokers, strict=False):
                    texts[tile_id] = f"J={_code_of(stands)}"
        return texts

    def _draw_sets(self, out, detections, table, unit, line) -> None:
        sets = _attr(table, "sets") or []
        verdicts = list(_attr(table, "verdicts") or [])
        pad = 6 * unit
        for number, ids in enumerate(sets):
            ids = [int(t) for t in ids if 0 <= int(t) < len(detections)]
            if not ids:
                continue
            verdict = verdicts[number] if number < len(verdicts) else None
            valid = bool(_attr(verdict, "valid", False)) if verdict is not None else False
            color = VALID_COLOR if valid else INVALID_COLOR
            points = detections.corners[ids].reshape(-1, 2)
            hull = cv2.convexHull(points.astype(np.float32)).reshape(-1, 2)
            centre = hull.mean(axis=0)
            offsets = hull - centre
            lengths = np.maximum(np.linalg.norm(offsets, axis=1, keepdims=True), 1e-6)
            hull = hull + offsets / lengths * pad
            self._poly(out, hull, color, line + max(1, line // 2))
            if valid:
                kind = _attr(verdict, "kind") or "set"
                value = _attr(verdict, "value")
                text = f"{number + 1}: {kind}" + (f" {value}" if value is not None else "")
            else:
                reasons = _attr(verdict, "reasons") or ["not a valid set"]
                if isinstance(reasons, str):
                    reasons = [reasons]
                reason = "; ".join(str(r) for r in reasons)
                if len(reason) > self.max_reason_chars:
                    reason = reason[: self.max_reason_chars - 3] + "..."
                text = f"{number + 1}: {reason}"
            x0 = float(hull[:, 0].min())
            y1 = float(hull[:, 1].max())
            self._label(out, text, (x0, y1 + 2), color, unit=unit, size=0.6, below=True)

    def _banner(self, out, detections, table, loose, unit) -> None:
        n = len(detections)
        n_uncertain = int(np.count_nonzero(detections.uncertain)) if n else 0
        text = f"{n} tiles"
        if n_uncertain:
            text += f", {n_uncertain} uncertain"
        bg = (60, 60, 60)
        if table is not None:
            verdicts = list(_attr(table, "verdicts") or [])
            bad = sum(1 for v in verdicts if not _attr(v, "valid", False))
            valid = _attr(table, "table_valid")
            text += f", {len(_attr(table, 'sets') or [])} sets"
            if loose:
                text += f", {len(loose)} loose"
            if valid:
                text += ": table valid"
                bg = VALID_COLOR
            else:
                text += f": NOT valid ({bad} bad set{'s' if bad != 1 else ''})"
                bg = INVALID_COLOR
        self._label(out, text, (0, 0), bg, unit=unit, size=0.75, below=True)
