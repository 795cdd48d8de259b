"""The real photos under the light of a real room (`make eval`).

    RUMMIKUB_DATA=... python -m bench.eval_light [--models DIR] [--json OUT]

The held-out real `valid/` photos were taken in even light. Each is re-lit as a table at
home is: a warm bulb or cool daylight over all of it, dim evening light, a lamp on one side
of the table and a window on the other (the colour of the light changes across the table;
"x1.5" is that far stronger), a spotlight that leaves the corners dark, and the shadow of a
player's arm across half the table. Tiles found, read right (colour + number) and extra
finds, as shipped and with the body-colour rule
(`vision.recognition.pipeline.unlike_the_other_finds`: a find whose body colour is unlike the
other finds' is no tile) switched off: that rule must not take tiles for stickers when the light
tints the tiles by place.
"""

from __future__ import annotations

import sys

import numpy as np

from bench import model_eval_arguments, run_models_eval
from bench.eval_plane_view import count_tiles, format_cells

WARM, COOL = np.float32([0.75, 0.95, 1.15]), np.float32([1.15, 1.0, 0.85])  # BGR gains


def _gain(image: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return np.clip(image.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def warm_bulb(image):
    return _gain(image, WARM)


def daylight(image):
    return _gain(image, COOL)


def dim(image):
    return np.clip(255 * (image.astype(np.float32) / 255) ** 1.4 * 0.6, 0, 255).astype(np.uint8)


def lamp_and_window(strength: float):
    """A warm lamp at the left, cool daylight at the right, mixed in between."""

    def relight(image):
        t = np.linspace(0, 1, image.shape[1], dtype=np.float32)[None, :, None]
        left, right = 1 + strength * (WARM - 1), 1 + strength * (COOL - 1)
        return _gain(image, (1 - t) * left + t * right)

    return relight


def spotlight(image):
    h, w = image.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.hypot((x - w / 2) / (w / 2), (y - h / 2) / (h / 2))
    return _gain(image, np.clip(1.15 - 0.55 * r ** 2, 0.35, 1.15)[..., None])


def arm_shadow(image):
    """A soft shadow over the lower half, as an arm reaching across the table casts."""
    h = image.shape[0]
    y = np.arange(h, dtype=np.float32)[:, None, None]
    return _gain(image, 1 - 0.55 / (1 + np.exp(-(y - h / 2) / (0.03 * h))))


LIGHTS = (
    ("even (as taken)", None),
    ("warm bulb", warm_bulb),
    ("cool daylight", daylight),
    ("dim evening light", dim),
    ("lamp one side, window other", lamp_and_window(1.0)),
    ("the same x1.5", lamp_and_window(1.5)),
    ("spotlight, dark corners", spotlight),
    ("an arm's shadow over half", arm_shadow),
)


def evaluate(models_dir=None, log=print) -> dict:
    import vision.recognition.pipeline as pipeline
    from training.real_data import load_split

    reader = pipeline.TileReader.load(models_dir)
    photos = [(p, p.read()) for p in load_split("valid")]
    shipped_rule = pipeline.unlike_the_other_finds
    results = {}
    for name, relight in LIGHTS:
        row = {}
        for mode in ("shipped", "no body rule"):
            pipeline.unlike_the_other_finds = shipped_rule if mode == "shipped" else (
                lambda crops, centres: np.zeros(len(crops), bool))
            tiles = found = right = extra = 0
            try:
                for photo, image in photos:
                    det = reader.read(image if relight is None else relight(image))
                    counts = count_tiles(det, [(t.code, t.polygon) for t in photo.tiles])
                    tiles, found, right, extra = (a + b for a, b in zip(
                        (tiles, found, right, extra), counts, strict=True))
            finally:
                pipeline.unlike_the_other_finds = shipped_rule
            row[mode] = {"tiles": tiles, "found": found, "read_right": right, "extra": extra}
        results[name] = row
        log(format_cells(name, row))
    return results


def main(argv: list[str] | None = None) -> int:
    args = model_eval_arguments("python -m bench.eval_light", __doc__, argv)
    print("real valid/ photos re-lit as a room at home lights them: tiles found / read right "
          "/ extra finds, as shipped and with the body-colour rule off")
    print(f"  {'light':30s} {'tiles':>5s}  {'as shipped':^23s}  {'no body-colour rule':^23s}")
    return run_models_eval("eval_light", lambda: evaluate(args.models), args.json)


if __name__ == "__main__":
    sys.exit(main())
