"""Calibration profiles: one photo of a player's own tiles teaches the camera their edition.

    from calibration import CalibrationError, Layout, Profile, calibrate
    profile = calibrate(photo_bgr, Layout.builtin("rows"), reader)   # CalibrationError
    profile.save("my-tiles.json"); profile = Profile.from_file("my-tiles.json")  # ProfileError
    reading = reader.with_profile(profile).read(photo_bgr)

A profile holds the edition's colour slots (green included), its tile bodies' colour
(white balance) and prototypes of its tiles in the classifier's embedding space; see
`calibration.profile`, `calibration.calibrate` and `calibration.head`.
"""

from pathlib import Path

from calibration.calibrate import CalibrationError, calibrate
from calibration.layouts import BUILTIN, Layout, LayoutError
from calibration.profile import Profile, ProfileError

__all__ = ["BUILTIN", "CalibrationError", "Layout", "LayoutError", "Profile", "ProfileError",
           "calibrate", "load_reader"]


def load_reader(models_dir: Path | str | None = None, profile: Profile | Path | str | None = None,
                **kwargs):
    """`TileReader.load(models_dir, **kwargs)`, reading through `profile` (a Profile or
    its file) when given. Raises ModelsMissing, and ProfileError naming the file."""
    from vision.recognition.pipeline import TileReader

    reader = TileReader.load(models_dir, **kwargs)
    if profile is None:
        return reader
    if isinstance(profile, str | Path):
        return reader.with_profile(Profile.from_file(profile), str(profile))
    return reader.with_profile(profile)
