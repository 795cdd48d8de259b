"""A second opinion on doubtful readings: is this tile a joker whose face no edition of
training prints?

An edition may print any picture on its jokers (a butterfly, a star, a logo). The shipped
classifier learnt the jokers of its editions; a face unlike them reads as the numeral it
looks most like (a butterfly as an 8), often surely enough to pass without a "?". A second
classifier of the same size, fine-tuned with random joker pictures
(`training.joker_faces`, families rosette and mirrored), reads such faces as jokers, but
it is worse at other things (tiles lying flat, views squashed by a low phone) and does not
replace the first (docs/decisions/joker-faces.md, "A second opinion").

So it is asked about one kind of tile only: one the first classifier reads as a numbered
tile with a best probability under BELOW, in a photo that is not read unsurely as a whole
(a rack of a few tiles never is: `MIN_SQUASHED`). Where it says "joker" with at least SURE
(`SURE_FEW` on such a rack), its reading replaces the first. Its file is
optional: without `joker_look.onnx` beside the models the reader reads as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.recognition.squashed_view import UNSURE, squashed_photo

MODEL_STEM = "joker_look"
# Only a reading at most this sure is asked about: the butterflies of `bench.eval_jokers`
# read as an 8 at 0.25-0.92 through the whole reader; the cost stays with unsure tiles.
BELOW = 0.95
# The second classifier's joker probability that replaces the first reading. Over the real
# photos (valid/ as taken, train/'s 24 rack photos in bench.eval_real_racks' 17 variants)
# it read 4,669 numbered readings, the sure ones too: none at 0.9, 3 at 0.5 or more; at
# 0.8 instead of 0.9 those benches read line for line alike, and 2 more butterflies right
# (docs/decisions/joker-faces.md, "A second opinion").
SURE = 0.8
# A photo of a few tiles (a rack near the round's end) with half of them unsure is not read
# unsurely "as a whole": with fewer than MIN_SQUASHED unsure tiles it is asked, but a joker
# then needs SURE_FEW. Butterflies alone / beside one tile read right 7 / 6 of 36 before,
# 35 / 32 after (`bench.eval_jokers`); real photos cut to 1-4 tiles changed 2 readings at
# 0.9, each a tile the cut halves (4 at 0.8; docs/decisions/joker-faces.md, "A rack of few
# tiles").
MIN_SQUASHED = 3
SURE_FEW = 0.9


class JokerLook:
    """The second classifier (a `vision.recognition.classify.TileClassifier`) and the
    rule for when its reading counts."""

    def __init__(self, classifier) -> None:
        self.classifier = classifier
        self.last_asked = 0  # readings asked about in the last call
        self.last_taken = 0  # of them, read as jokers instead

    @classmethod
    def load(cls, models_dir: Path | str) -> JokerLook | None:
        """The joker look beside the models in `models_dir`, or None where its file is not
        there."""
        from vision.recognition.classify import TileClassifier

        if not (Path(models_dir) / f"{MODEL_STEM}.onnx").is_file():
            return None
        return cls(TileClassifier.load(models_dir, stem=MODEL_STEM))

    def relook(self, image_bgr: np.ndarray, upright: np.ndarray, keep: np.ndarray,
               probs: np.ndarray, flip: np.ndarray | None, labels, whole_photo: bool = True):
        """(upright, probs, flip) as `TileReader` reads them (corners (N, 4, 2) in
        `image_bgr`'s pixels, class probabilities (N, C), the share of each class that says
        the tile lies the other way round (N, C) or None), with the kept finds (`keep`) it
        reads as jokers given its own reading, and its own up: an 8 reads the same either
        way up, so the first classifier's up for it is anyone's guess, and the stand's
        rules and gates look at where a tile's foot is. `labels`: the reader's, which must
        be the second classifier's too (a profile's head with other labels is not asked).
        `whole_photo`: the finds are the whole photo's first reading; a later pass's few
        finds (a finer scale, the view from above, the stretched photo) are no rack of a
        few tiles (`MIN_SQUASHED`)."""
        self.last_asked = self.last_taken = 0
        labels = tuple(labels)
        unchanged = upright, probs, flip
        if "J" not in labels or labels != tuple(self.classifier.labels) or not keep.any():
            return unchanged
        best = probs.max(axis=1)
        # A photo read unsurely as a whole (squashed by a low phone) is no place to ask:
        # there numerals drawn out of shape look like pictures to it too.
        sure = SURE
        if squashed_photo(best[keep]):
            if not whole_photo or int((best[keep] < UNSURE).sum()) >= MIN_SQUASHED:
                return unchanged
            sure = SURE_FEW
        joker = labels.index("J")
        asked = np.flatnonzero(keep & (best < BELOW) & (probs.argmax(axis=1) != joker))
        self.last_asked = len(asked)
        if len(asked) == 0:
            return unchanged
        crops = self.classifier.crops(image_bgr, upright[asked])
        second, turned_share = self.classifier.predict_joint(crops)
        take = second[:, joker] >= sure
        self.last_taken = int(take.sum())
        if not take.any():
            return unchanged
        from vision.recognition.rectify import rotate_quad_180

        rows, second, turned_share = asked[take], second[take], turned_share[take]
        turned = turned_share.sum(axis=1) > 0.5
        upright, probs = upright.copy(), probs.copy()
        upright[rows] = np.where(turned[:, None, None], rotate_quad_180(upright[rows]),
                                 upright[rows])
        probs[rows] = second
        if flip is not None:
            flip = flip.copy()
            # as `TileClassifier.classify_both_ways` gives it
            flip[rows] = np.where(turned[:, None], second - turned_share, turned_share)
        return upright, probs, flip
