"""One photo in, every tile out: decode -> detect -> rectify + classify -> TileDetections.

`TileReader` loads both ONNX models once and is then reused for every photo (the CLI, the
app, the benchmarks and the evaluation all go through it). It records how long each stage
of the last call took in `last_timings` (seconds), which `bench/vision_bench.py` reports.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from vision.detections import TileDetections
from vision.labels import TILE_CLASSES
from vision.sessions import ModelsMissing, ModelUnreadable, read_sidecar
from vision.settings import MODELS_DIR

# A reading whose best class probability is below this is flagged `uncertain` (the
# classifier's sidecar may override it with "uncertain_below").
DEFAULT_UNCERTAIN_BELOW = 0.6
MODEL_FILES = ("detector.onnx", "classifier.onnx")
# Written by `training.calibrate`: how the two models' scores combine into "this is a tile".
PIPELINE_SPEC = "pipeline.json"


def _missing_models(models_dir: Path) -> list[str]:
    return [name for name in MODEL_FILES if not (models_dir / name).is_file()]


class TileReader:
    """The whole photo pipeline with both models loaded once."""

    def __init__(self, detector, classifier, *, uncertain_below: float | None = None,
                 reject_below: float = 0.0) -> None:
        self.detector = detector
        self.classifier = classifier
        # A detection whose detector score times best class probability is below this is
        # not a tile (a knot in the wood reads as no tile in particular).
        self.reject_below = float(reject_below)
        self.labels: tuple[str, ...] = tuple(getattr(classifier, "labels", None) or TILE_CLASSES)
        if uncertain_below is None:
            spec = getattr(classifier, "spec", None)
            from_spec = spec.get("uncertain_below") if isinstance(spec, dict) else None
            uncertain_below = float(from_spec) if from_spec is not None else DEFAULT_UNCERTAIN_BELOW
        self.uncertain_below = float(uncertain_below)
        self.last_timings: dict[str, float] = {}
        # A calibration profile's head (`with_profile`) reads the tiles in its place.
        self.profile_head = None

    @classmethod
    def load(cls, models_dir: Path | str | None = None, profile=None, **kwargs) -> TileReader:
        """Load detector and classifier from `models_dir` (default `models/`); with
        `profile` (a `calibration.Profile` or its file) read through it (`with_profile`).

        Raises `ModelsMissing` naming the folder when a model file is not there, and its
        subclass `ModelUnreadable` naming the file when one cannot be loaded.
        """
        models_dir = Path(models_dir) if models_dir is not None else MODELS_DIR
        missing = _missing_models(models_dir)
        if missing:
            raise ModelsMissing(
                f"model files missing in {models_dir}: {', '.join(missing)} "
                "(run `make train`, or set RUMMIKUB_MODELS)"
            )
        from vision.classify import TileClassifier
        from vision.detect import TileDetector

        spec_path = models_dir / PIPELINE_SPEC
        if spec_path.is_file() and "reject_below" not in kwargs:
            try:
                kwargs["reject_below"] = float(read_sidecar(spec_path)["reject_below"])
            except (KeyError, TypeError, ValueError) as error:
                raise ModelUnreadable(f"model settings file {spec_path} cannot be read: "
                                      f"no number 'reject_below' ({error})") from None
        reader = cls(TileDetector.load(models_dir), TileClassifier.load(models_dir), **kwargs)
        if profile is None:
            return reader
        if isinstance(profile, str | Path):
            from calibration import Profile

            return reader.with_profile(Profile.from_file(profile), str(profile))
        return reader.with_profile(profile)

    def with_profile(self, profile, source: str = "profile") -> TileReader:
        """This reader (same loaded models) reading through a `calibration.Profile`:
        white balance, its colour slots (green too) and prototypes. Raises
        `calibration.ProfileError` when the profile was made for another classifier."""
        import copy

        from calibration.head import ProfileHead

        head = ProfileHead(profile, self.classifier, source)
        reader = copy.copy(self)
        reader.profile_head, reader.labels, reader.last_timings = head, head.labels, {}
        return reader

    # -- reading ---------------------------------------------------------------------------
    def read(self, image_bgr) -> TileDetections:
        """Every tile in a BGR photo (an image array, or a `vision.decode.Photo`, which is
        then decoded only as far as needed), corners clockwise from the upright top-left."""
        from vision.decode import Photo

        if isinstance(image_bgr, Photo):
            return self.read_photo(image_bgr)
        timings = {}
        start = time.perf_counter()
        quads, scores = self.detector.detect(image_bgr)
        timings["detect"] = time.perf_counter() - start
        _add_steps(timings, "detect", self.detector)
        return self._classified(image_bgr, quads, scores, timings)

    def read_photo(self, photo) -> TileDetections:
        """`read` for a `vision.decode.Photo`, with corners in the whole photo's pixels.

        A big JPEG is decoded at 1/2, 1/4 or 1/8 for the detector (whose input is only
        `long_side` pixels anyway; `detection_reduction`), and the tiles are cropped from
        that same decode unless a tile is too small in it for the classifier's crop; then
        from the coarsest decode where none is (`crop_reduction`). So a 12 MP photo costs
        little more than a 1000x750 one.
        """
        timings = {}
        start = time.perf_counter()
        factor = detection_reduction(photo, self.detector)
        small = photo.reduced(factor)
        timings["decode"] = time.perf_counter() - start
        start = time.perf_counter()
        quads, scores = self.detector.detect(small)
        timings["detect"] = time.perf_counter() - start
        _add_steps(timings, "detect", self.detector)
        quads = _rescale(quads, small.shape, photo.shape)
        start = time.perf_counter()
        size = getattr(self.classifier, "size", None)
        if size is not None and factor > 1:
            factor = crop_reduction(quads, size, coarsest=factor)
        source = photo.reduced(factor)
        timings["decode"] += time.perf_counter() - start
        return self._classified(source, quads, scores, timings, full_shape=photo.shape)

    def _classified(self, image_bgr: np.ndarray, quads, scores, timings: dict,
                    full_shape=None) -> TileDetections:
        """Read the tiles at `quads` (the whole photo's pixels) by cropping them from
        `image_bgr`, which is the photo shrunk from `full_shape` when that is given."""
        if len(quads) == 0:
            timings["classify"] = 0.0
            self.last_timings = timings
            return TileDetections.empty(self.labels)
        start = time.perf_counter()
        if full_shape is not None:
            quads = _rescale(quads, full_shape, image_bgr.shape)
        if isinstance(getattr(self.classifier, "last_timings", None), dict):
            self.classifier.last_timings = {}  # a profile's head times only what it runs
        both_ways = getattr(self.profile_head or self.classifier, "classify_both_ways", None)
        if both_ways is not None:
            upright, probs, flip = both_ways(image_bgr, quads)
        else:
            (upright, probs), flip = self.classifier.classify(image_bgr, quads), None
        if full_shape is not None:
            upright = _rescale(upright, image_bgr.shape, full_shape)
        timings["classify"] = time.perf_counter() - start
        _add_steps(timings, "classify", self.classifier)
        probs = np.asarray(probs, np.float32)
        scores = np.asarray(scores, np.float32).reshape(-1)
        upright = np.asarray(upright, np.float32).reshape(-1, 4, 2)
        keep = scores * probs.max(axis=1) >= self.reject_below
        probs, scores, upright = probs[keep], scores[keep], upright[keep]
        flip = None if flip is None else np.asarray(flip, np.float32)[keep]
        class_ids = probs.argmax(axis=1).astype(np.int64)
        uncertain = probs.max(axis=1) < self.uncertain_below
        self.last_timings = timings
        return TileDetections(
            corners=upright,
            detector_scores=scores,
            class_probs=probs,
            class_ids=class_ids,
            labels=self.labels,
            uncertain=uncertain,
            flip_probs=flip,
        )

    def read_bytes(self, data: bytes) -> TileDetections:
        """Check an encoded photo (JPEG, PNG, ...; EXIF rotation honoured), then `read` it,
        decoding only as far as needed.

        Raises `vision.decode.PhotoError` for empty, corrupt, non-image or too-large bytes.
        """
        from vision.decode import Photo

        start = time.perf_counter()
        photo = Photo.from_bytes(data)
        check_s = time.perf_counter() - start
        detections = self.read_photo(photo)
        self.last_timings["decode"] += check_s
        return detections

    def decode(self, data: bytes) -> np.ndarray:
        from vision.decode import decode_image

        start = time.perf_counter()
        image = decode_image(data)
        self.last_timings = {"decode": time.perf_counter() - start}
        return image


def _add_steps(timings: dict, stage: str, model) -> None:
    """The model's own step timings of its last call as 'stage.step' (e.g. the detector's
    'detect.prepare': resizing the photo to its input)."""
    for step, seconds in (getattr(model, "last_timings", None) or {}).items():
        timings[f"{stage}.{step}"] = seconds


def _rescale(quads, from_shape, to_shape) -> np.ndarray:
    """Points in an image of `from_shape` -> the same points in the image resized to
    `to_shape` (pixel centres map to pixel centres)."""
    quads = np.asarray(quads, np.float32)
    if tuple(from_shape[:2]) == tuple(to_shape[:2]):
        return quads
    scale = np.float32([to_shape[1] / from_shape[1], to_shape[0] / from_shape[0]])
    return ((quads + 0.5) * scale - 0.5).astype(np.float32)


# The detector shrinks its photo to `long_side` pixels. It was trained and is evaluated on
# photos it shrinks about 2x (1000 px -> 512); a decode only a little larger than its input
# (a 16 MP photo at 1/8: 578 px) read a tile fewer on the enlarged sample photos, one at
# 1.5x or more read them all. So the reduced decode keeps at least this much.
DETECTION_MARGIN = 1.5


def detection_reduction(photo, detector) -> int:
    """The reduction (1, 2, 4, 8) at which to decode `photo` for `detector`."""
    long_side = getattr(detector, "long_side", None)
    return photo.reduction_for(int(DETECTION_MARGIN * long_side)) if long_side else 1


# The classifier reads tiles of real 1000x750 photos from at least their crop's size
# (1607 tiles of valid/ and train/: the smallest 0.99x the crop, 1 % under 1.1x). A tile
# in a reduced decode down to 3/4 of that is read from it; a smaller one asks for a finer
# decode, so a far-off tile in a big photo keeps the detail the photo has.
MIN_CROP_SIDE = 0.75


def crop_reduction(quads, crop_size, coarsest: int = 8) -> int:
    """The largest of 1, 2, 4, 8 (at most `coarsest`) by which the photo can be shrunk
    before cropping the tiles at `quads` (whole-photo pixels) with every tile still at
    least `MIN_CROP_SIDE` of the crop's size. Tiles larger than the crop are shrunk by
    `rectify_tiles` itself (area averaging, then the warp)."""
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if len(quads) == 0:
        return coarsest
    width, height = crop_size
    across = np.linalg.norm(quads[:, 1] - quads[:, 0], axis=1) / width
    along = np.linalg.norm(quads[:, 3] - quads[:, 0], axis=1) / height
    side = float(np.maximum(across, along).min())
    return max([1] + [f for f in (2, 4, 8) if f <= coarsest and side / f >= MIN_CROP_SIDE])
