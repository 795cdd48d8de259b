"""`rummikub calibrate` on a photo whose image data turns out corrupt: one line, status 2."""

from __future__ import annotations

import cv2
import numpy as np

from app.cli import main


def _png_with_corrupt_image_data() -> bytes:
    """A PNG whose header (size, format) reads fine but whose pixel data cannot be inflated."""
    image = np.random.default_rng(3).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    data = bytearray(cv2.imencode(".png", image)[1].tobytes())
    at = data.index(b"IDAT") + 4
    data[at:at + 64] = bytes(64)
    return bytes(data)


def test_a_photo_whose_image_data_is_corrupt_is_one_line_and_status_2(tmp_path, capsys):
    photo, out = tmp_path / "table.png", tmp_path / "profile.json"
    photo.write_bytes(_png_with_corrupt_image_data())
    assert main(["calibrate", str(photo), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(photo) in err[0] and "corrupt photo" in err[0]
    assert not out.exists()
