"""The recognition floor: a photo in, its tiles out (decode, detect, rectify, classify, and
the TileReader with its second passes). It imports neither `vision.game` nor `calibration`:
a calibration profile reaches it as a `ProfileHeadLike` object that `calibration` builds."""
