"""One photo in, every tile out: decode -> detect -> rectify + classify -> TileDetections.

`TileReader` loads both ONNX models once and is then reused for every photo (the CLI, the
app, the benchmarks and the evaluation all go through it). It records how long each stage
of the last call took in `last_timings` (seconds), which `bench/vision_bench.py` reports.

Second look: a crop the classifier is not sure of is read again in its box turned a quarter
round (a nearly square tile's box can lie across it, so the crop shows the number on its
side), and that reading is kept where the network is clearly surer of it. Which finds count
as tiles is decided on the first look alone. A calibration profile's head has its own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from vision.recognition.body_colour import dark_small_finds, face_brightness, unlike_the_other_finds
from vision.recognition.detections import TileDetections
from vision.recognition.geometry import tile_frames
from vision.recognition.labels import TILE_CLASSES
from vision.recognition.plane_view import merge_readings
from vision.recognition.sessions import ModelsMissing, ModelUnreadable, read_sidecar
from vision.recognition.settings import MODELS_DIR
from vision.recognition.squashed_view import (
    WEAK_SCORE,
    dropped_finds,
    read_squashed,
)

# A reading whose best class probability is below this is flagged `uncertain` (the
# classifier's sidecar may override it with "uncertain_below").
DEFAULT_UNCERTAIN_BELOW = 0.6
MODEL_FILES = ("detector.onnx", "classifier.onnx")
# Written by `training.calibrate`: how the two models' scores combine into "this is a tile".
PIPELINE_SPEC = "pipeline.json"

# The second look: a kept find whose best class probability is below SECOND_LOOK_BELOW is
# read again in its box turned a quarter round, and the turned reading wins where it names
# another tile and its doubt (1 - best probability) is at most SECOND_LOOK_DOUBT times the
# first look's. Chosen on training data only (classifier 8cb461c0e9d1): real train/ (179
# photos) and rendered scenes with renderer seeds 570,000+ (the held-out editions, 40 tables
# and 40 racks at an angle each) and 580,000+ (training editions, 80), never
# bench.eval_editions' seeds (170,000+) nor valid/. There, of 7,306 tiles found, 6,755 ->
# 6,994 read right (racks of the held-out editions 1,223 -> 1,370 of 1,526), 6 right
# readings were lost and 11 tiles whose box was right got the turned one; the real train/
# tiles read right before and after, 16 of its 1,804 kept finds read again (below 0.95:
# 158). Doubt share 0.7 mended a little more (+256) but turned 21 right boxes (any surer
# reading: +254, 39), which moves those tiles in the layout; 0.3 mended less (+216). A
# turned reading of the same tile keeps the first box: on rendered tables of the layout's
# tuning seeds (20,000-20,199) jokers, which read as jokers in any box, re-read surer in
# turned boxes and broke 4 tables' grouping.
SECOND_LOOK_BELOW = 0.9
SECOND_LOOK_DOUBT = 0.5

class ProfileHeadLike(Protocol):
    """What the reader needs of a calibration profile's head (`calibration.head`
    builds one): the readings' labels, and the classifier's reading calls."""

    labels: Sequence[str]
    last_crops: np.ndarray

    def classify(self, image_bgr: np.ndarray, quads: np.ndarray): ...

    def classify_both_ways(self, image_bgr: np.ndarray, quads: np.ndarray): ...


def _missing_models(models_dir: Path) -> list[str]:
    return [name for name in MODEL_FILES if not (models_dir / name).is_file()]


class TileReader:
    """The whole photo pipeline with both models loaded once."""

    def __init__(self, detector, classifier, *, uncertain_below: float | None = None,
                 reject_below: float = 0.0,
                 second_look_below: float = SECOND_LOOK_BELOW, plane_view: bool = True,
                 fine_scale: bool = True, squashed_view: bool = True) -> None:
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
        # 0 turns the second look off (the tests compare with and without it).
        self.second_look_below = float(second_look_below)
        # (finds read again, turned readings kept) of the last photo
        self.last_second_looks = (0, 0)
        # A calibration profile's head (`with_profile`) reads the tiles in its place.
        self.profile_head = None
        # A strongly tilted photo is detected again as seen from above
        # (`vision.recognition.plane_view`); False turns that off (the evaluation compares
        # with and without it).
        self.plane_view = bool(plane_view)
        self.last_plane_tilt: float | None = None  # the last photo's, when it was viewed so
        # A photo whose tiles are small in the detector's input is detected again at a finer
        # scale (`vision.recognition.fine_scale`); False turns that off.
        self.fine_scale = bool(fine_scale)
        self.last_finer_side: int | None = None  # the last photo's finer input side, if any
        # Tiles lying flat seen by a low phone: the photo stretched upright is detected
        # again where the first pass saw weak peaks on no tile
        # (`vision.recognition.squashed_view`); False turns that off.
        self.squashed_view = bool(squashed_view)
        self.last_stretched = False  # whether the last photo was read stretched
        # the last classified finds: which were kept as tiles, and their crops as the
        # classifier cut them (`dropped_finds`)
        self.last_find_kept, self.last_find_crops = None, None
        self.last_stretched_regions = None  # [(x0, y0, x1, y1)] per stretch, image pixels
        # A second classifier asked whether a doubtful numbered reading is a joker of a
        # face no training edition prints (`vision.recognition.joker_look`); None: not asked.
        self.joker_look = None

    @classmethod
    def load(cls, models_dir: Path | str | None = None, profile=None, **kwargs) -> TileReader:
        """Load detector and classifier from `models_dir` (default `models/`); with
        `profile` (a `calibration.Profile`; `calibration.load_reader` takes its file) read
        through it (`with_profile`).

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
        from vision.recognition.classify import TileClassifier
        from vision.recognition.detect import TileDetector

        spec_path = models_dir / PIPELINE_SPEC
        if spec_path.is_file() and "reject_below" not in kwargs:
            try:
                kwargs["reject_below"] = float(read_sidecar(spec_path)["reject_below"])
            except (KeyError, TypeError, ValueError) as error:
                raise ModelUnreadable(f"model settings file {spec_path} cannot be read: "
                                      f"no number 'reject_below' ({error})") from None
        reader = cls(TileDetector.load(models_dir), TileClassifier.load(models_dir), **kwargs)
        from vision.recognition.joker_look import JokerLook

        reader.joker_look = JokerLook.load(models_dir)  # optional; unreadable: ModelUnreadable
        if profile is None:
            return reader
        if isinstance(profile, str | Path):
            raise TypeError("TileReader.load takes a profile object; read a profile file "
                            "with calibration.load_reader")
        return reader.with_profile(profile)

    def with_profile(self, profile, source: str = "profile") -> TileReader:
        """This reader (same loaded models) reading through a profile: anything with a
        `head(classifier, source)` that builds its `ProfileHeadLike` (a
        `calibration.Profile` does; it raises `calibration.ProfileError` when the profile
        was made for another classifier)."""
        return self.with_head(profile.head(self.classifier, source))

    def with_head(self, head: ProfileHeadLike) -> TileReader:
        """This reader (same loaded models) with `head` reading the tiles in the
        classifier's place (white balance, colour slots, prototypes)."""
        import copy

        reader = copy.copy(self)
        reader.profile_head, reader.labels, reader.last_timings = head, tuple(head.labels), {}
        return reader

    # -- reading ---------------------------------------------------------------------------
    def read(self, image_bgr) -> TileDetections:
        """Every tile in a BGR photo (an image array, or a `vision.recognition.decode.Photo`,
        which is then decoded only as far as needed), corners clockwise from the upright
        top-left."""
        from vision.recognition.decode import Photo

        if isinstance(image_bgr, Photo):
            return self.read_photo(image_bgr)
        timings = {}
        start = time.perf_counter()
        quads, scores, weak = self._detect_first(image_bgr)
        timings["detect"] = time.perf_counter() - start
        _add_steps(timings, "detect", self.detector)
        detections = self._classified(image_bgr, quads, scores, timings)
        dropped = dropped_finds(quads, self.last_find_kept, self.last_find_crops)

        def read_finds(quads, scores):
            return self._classified(image_bgr, quads, scores, timings, whole_photo=False)

        detections = self._finer(
            image_bgr.shape, detections, timings,
            lambda long_side: self.detector.detect(image_bgr, long_side=long_side), read_finds)
        detections = self._on_plane(image_bgr, detections, detections.corners, timings,
                                    read_finds)
        detections = read_squashed(self, image_bgr, detections, weak, timings, read_finds,
                                   dropped=dropped)
        return _without_dark_small(detections, image_bgr, detections.corners)

    def read_photo(self, photo) -> TileDetections:
        """`read` for a `vision.recognition.decode.Photo`, with corners in the whole photo's pixels.

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
        found, scores, weak = self._detect_first(small)
        timings["detect"] = time.perf_counter() - start
        _add_steps(timings, "detect", self.detector)
        detections = self._read_from(photo, factor, _rescale(found, small.shape, photo.shape),
                                     scores, timings)
        dropped = dropped_finds(found, self.last_find_kept, self.last_find_crops)

        def detect_finer(long_side):
            finer = photo.reduced(photo.reduction_for(int(DETECTION_MARGIN * long_side)))
            quads, scores = self.detector.detect(finer, long_side=long_side)
            return _rescale(quads, finer.shape, photo.shape), scores

        detections = self._finer(photo.shape, detections, timings, detect_finer,
                                 lambda q, s: self._read_from(photo, factor, q, s, timings,
                                                              whole_photo=False))
        # The view from above and the stretched photo are made from the detector's decode,
        # in its pixels.
        def read_small(quads, scores):
            return self._read_from(photo, factor, _rescale(quads, small.shape, photo.shape),
                                   scores, timings, whole_photo=False)

        detections = self._on_plane(small, detections,
                                    _rescale(detections.corners, photo.shape, small.shape),
                                    timings, read_small)
        detections = read_squashed(self, small, detections, weak, timings, read_small,
                                   lambda corners: _rescale(corners, photo.shape, small.shape),
                                   dropped=dropped)
        return _without_dark_small(detections, small,
                                   _rescale(detections.corners, photo.shape, small.shape))

    def _detect_first(self, image_bgr: np.ndarray):
        """The first pass's (quads, scores, weak peaks' centres) (`TileDetector.
        detect_with_weak`); None for the peaks from a detector without it (a test's boxes
        given in advance), which gets no squashed view."""
        with_weak = getattr(self.detector, "detect_with_weak", None)
        if with_weak is None or not self.squashed_view:
            return (*self.detector.detect(image_bgr), None)
        return with_weak(image_bgr, weak_score=WEAK_SCORE)

    def _read_from(self, photo, coarsest: int, quads, scores, timings: dict,
                   whole_photo: bool = True) -> TileDetections:
        """Classify the finds at `quads` (the whole photo's pixels), cropped from the
        coarsest decode (at most 1/`coarsest`) where every one is still sharp enough
        (`whole_photo` as `_classified`'s)."""
        start = time.perf_counter()
        size = getattr(self.classifier, "size", None)
        factor = coarsest
        if size is not None and factor > 1:
            factor = crop_reduction(quads, size, coarsest=factor)
        source = photo.reduced(factor)
        timings["decode"] += time.perf_counter() - start
        return self._classified(source, quads, scores, timings, full_shape=photo.shape,
                                whole_photo=whole_photo)

    def _finer(self, shape, detections: TileDetections, timings: dict, detect_at,
               read_finds) -> TileDetections:
        """`detections`, or where their tiles are small in the detector's input and the
        photo (of `shape`) has the pixels, merged with a second pass at a finer scale
        (`vision.recognition.fine_scale`): `detect_at(long_side)` detects at that input side and
        `read_finds(quads, scores)` reads its finds, in the coordinates of `detections`."""
        self.last_finer_side = None
        long_side = getattr(self.detector, "long_side", None)
        if not self.fine_scale or not long_side or len(detections) == 0:
            return detections
        from vision.recognition.fine_scale import finer_long_side

        finer = finer_long_side(long_side, getattr(self.detector, "multiple", 32),
                                detections.corners, max(shape[:2]))
        if finer is None:
            return detections
        self.last_finer_side = finer
        return self._second_pass(detections, timings, "detect.finer", time.perf_counter(),
                                 lambda: detect_at(finer), read_finds)

    def _on_plane(self, image_bgr: np.ndarray, detections: TileDetections, tiles,
                  timings: dict, read_finds) -> TileDetections:
        """`detections`, or where the tiles read (`tiles`: their corners in `image_bgr`'s
        pixels) say the photo is strongly tilted, merged with a second pass on it seen from
        above (`vision.recognition.plane_view`): `read_finds(quads, scores)` reads that pass's finds
        (quads in `image_bgr`'s pixels) as `detections` were read."""
        self.last_plane_tilt = None
        if not self.plane_view or len(detections) == 0:
            return detections
        from vision.recognition.plane_view import plane_view

        start = time.perf_counter()
        view = plane_view(image_bgr, tiles)
        if view is None:
            return detections
        self.last_plane_tilt = view.tilt

        def detect():
            long_side = getattr(self.detector, "long_side", None)
            side = view.detector_side(long_side, getattr(self.detector, "multiple", 32)) \
                if long_side else None
            found, scores = self.detector.detect(view.image, long_side=side)
            return view.quads_in_photo(np.asarray(found, np.float32)), scores

        return self._second_pass(detections, timings, "detect.plane_view", start, detect,
                                 read_finds)

    def _second_pass(self, detections: TileDetections, timings: dict, step: str,
                     start: float, detect, read_finds, merge=merge_readings) -> TileDetections:
        """`detections` merged tile by tile (`merge`) with a second pass (`detect()` ->
        quads and scores, read by `read_finds`), its detection timed as `step` from
        `start`."""
        found, scores = detect()
        took = time.perf_counter() - start
        timings[step] = timings.get(step, 0.0) + took  # a step may run on several parts
        timings["detect"] += took
        timings["classify.first_pass"] = timings.get("classify", 0.0)  # the second adds to it
        return merge(detections, read_finds(found, scores))

    def _classified(self, image_bgr: np.ndarray, quads, scores, timings: dict,
                    full_shape=None, whole_photo: bool = True) -> TileDetections:
        """Read the tiles at `quads` (the whole photo's pixels) by cropping them from
        `image_bgr`, which is the photo shrunk from `full_shape` when that is given.
        `whole_photo`: the first pass's finds, not a later pass's (`JokerLook.relook`)."""
        self.last_find_kept, self.last_find_crops = np.zeros(len(quads), bool), None
        if len(quads) == 0:
            timings["classify"] = timings.pop("classify.first_pass", 0.0)
            self.last_timings = timings
            return TileDetections.empty(self.labels)
        start = time.perf_counter()
        if full_shape is not None:
            quads = _rescale(quads, full_shape, image_bgr.shape)
        if isinstance(getattr(self.classifier, "last_timings", None), dict):
            self.classifier.last_timings = {}  # a profile's head times only what it runs
        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        upright, probs, flip = self._read_quads(image_bgr, quads)
        _add_steps(timings, "classify", self.classifier)
        scores = np.asarray(scores, np.float32).reshape(-1)
        # Whether a find is a tile is settled here, on the first look: the second look
        # changes what a tile reads as, never lifts a find the threshold drops.
        keep = scores * probs.max(axis=1) >= self.reject_below
        crops = getattr(self.profile_head or self.classifier, "last_crops", None)
        if crops is not None and len(crops) == len(quads):
            self.last_find_crops = crops
            kept = np.flatnonzero(keep)
            centres = quads[kept].mean(axis=1)
            keep[kept[unlike_the_other_finds(crops[kept], centres)]] = False
        self.last_find_kept = keep.copy()
        self.last_second_looks = (0, 0)
        if self.profile_head is None:  # a profile's head looks twice its own way
            second = time.perf_counter()
            upright, probs, flip = self._second_look(image_bgr, quads, keep, upright, probs, flip)
            if self.last_second_looks[0]:
                timings["classify.second_look"] = time.perf_counter() - second
        if self.joker_look is not None:
            look = time.perf_counter()
            upright, probs, flip = self.joker_look.relook(image_bgr, upright, keep, probs,
                                                          flip, self.labels, whole_photo)
            if self.joker_look.last_asked:
                timings["classify.joker_look"] = timings.get(
                    "classify.joker_look", 0.0) + time.perf_counter() - look
        if full_shape is not None:
            upright = _rescale(upright, image_bgr.shape, full_shape)
        timings["classify"] = timings.pop("classify.first_pass", 0.0) + time.perf_counter() - start
        probs, scores, upright = probs[keep], scores[keep], upright[keep]
        flip = None if flip is None else flip[keep]
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

    def classify_at(self, image_bgr, quads):
        """(upright quads (N, 4, 2), class probabilities (N, C), flip (N, C) or None) of
        the tiles at `quads` (whole-photo pixels) of a photo already read: a BGR array or a
        `vision.recognition.decode.Photo`, cropped from the coarsest decode where each
        tile is still sharp enough, as the first reading was. No find is dropped (a rack
        reader re-crops tiles it has already taken)."""
        from vision.recognition.decode import Photo

        quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if not isinstance(image_bgr, Photo):
            return self._read_quads(image_bgr, quads)
        size = getattr(self.classifier, "size", None)
        factor = detection_reduction(image_bgr, self.detector)  # as `read_photo` caps it
        if size is not None and factor > 1:
            factor = crop_reduction(quads, size, coarsest=factor)
        source = image_bgr.reduced(factor)
        upright, probs, flip = self._read_quads(
            source, _rescale(quads, image_bgr.shape, source.shape))
        return _rescale(upright, source.shape, image_bgr.shape), probs, flip

    def _read_quads(self, image_bgr: np.ndarray, quads: np.ndarray):
        """(upright quads (N, 4, 2), class probabilities (N, C), flip (N, C) or None) of the
        tiles at `quads`, read by the profile's head or the classifier, as float32 arrays
        of the reader's own (the second look writes into them)."""
        both_ways = getattr(self.profile_head or self.classifier, "classify_both_ways", None)
        if both_ways is not None:
            upright, probs, flip = both_ways(image_bgr, quads)
        else:
            (upright, probs), flip = self.classifier.classify(image_bgr, quads), None
        upright = np.array(upright, np.float32).reshape(-1, 4, 2)
        return upright, np.array(probs, np.float32), None if flip is None else np.array(
            flip, np.float32)

    def _second_look(self, image_bgr, quads, keep, upright, probs, flip):
        """Read again, in the box turned a quarter round, each kept find the classifier is
        not sure of (best probability below `second_look_below`); keep the turned reading,
        and its upright corners, where the network is clearly surer of it (its doubt at most
        SECOND_LOOK_DOUBT of the first look's) and it names another tile.

        A box whose long side runs along a nearly square tile's width gives a crop with
        the number on its side, which the network reads as something, unsurely. Only kept
        finds are looked at again, and a turned reading only ever raises a find's best
        probability, so the not-a-tile threshold keeps exactly the finds it kept."""
        sure = probs.max(axis=1)
        again = np.flatnonzero(keep & (sure < self.second_look_below))
        if len(again) == 0:
            return upright, probs, flip
        from vision.recognition.classify import quarter_turned

        turned = quarter_turned(quads[again])
        # The first look's step timings (crop, tensor, network) stay those of the photo's
        # batch; this one is timed as a whole by the caller.
        steps = dict(getattr(self.classifier, "last_timings", None) or {})
        upright2, probs2, flip2 = self._read_quads(image_bgr, turned)
        if isinstance(getattr(self.classifier, "last_timings", None), dict):
            self.classifier.last_timings = steps
        better = 1 - probs2.max(axis=1) <= SECOND_LOOK_DOUBT * (1 - sure[again])
        # Only a new reading is worth a new box: a joker's face reads as a joker in any box,
        # often a little surer in the turned one, whose corners would then lie across it.
        better &= probs2.argmax(axis=1) != probs[again].argmax(axis=1)
        take = again[better]
        upright[take], probs[take] = upright2[better], probs2[better]
        if flip is not None and flip2 is not None:
            flip[take] = flip2[better]
        self.last_second_looks = (len(again), len(take))
        return upright, probs, flip

    def read_bytes(self, data: bytes) -> TileDetections:
        """Check an encoded photo (JPEG, PNG, ...; EXIF rotation honoured), then `read` it,
        decoding only as far as needed.

        Raises `vision.recognition.decode.PhotoError` for empty, corrupt, non-image or
        too-large bytes.
        """
        from vision.recognition.decode import Photo

        start = time.perf_counter()
        photo = Photo.from_bytes(data)
        check_s = time.perf_counter() - start
        detections = self.read_photo(photo)
        self.last_timings["decode"] += check_s
        return detections

    def decode(self, data: bytes) -> np.ndarray:
        from vision.recognition.decode import decode_image

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


def _without_dark_small(detections: TileDetections, image_bgr: np.ndarray,
                        corners: np.ndarray) -> TileDetections:
    """`detections` less the finds far darker and smaller than the surest of them
    (`body_colour.dark_small_finds`: a stand's embossed logo seen close), judged on
    `image_bgr`, where the tiles lie at `corners`. Taken off the finished reading, so the
    passes before it read exactly as without it."""
    if len(detections) < 2:
        return detections
    sure = detections.detector_scores * detections.class_probs.max(axis=1)
    dark = dark_small_finds(face_brightness(image_bgr, corners), tile_frames(corners)[4], sure)
    return detections[~dark] if dark.any() else detections
