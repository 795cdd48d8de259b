"""Calibration profiles: one photo of a player's own tiles teaches the camera their edition.

    from calibration import CalibrationError, Layout, Profile, calibrate
    profile = calibrate(photo_bgr, Layout.builtin("rows"), reader)   # CalibrationError
    profile.save("my-tiles.json"); profile = Profile.from_file("my-tiles.json")  # ProfileError
    reading = reader.with_profile(profile).read(photo_bgr)

A profile holds the edition's colour slots (green included), its tile bodies' colour
(white balance) and prototypes of its tiles in the classifier's embedding space; see
`calibration.profile`, `calibration.calibrate` and `calibration.head`.
"""

from calibration.calibrate import CalibrationError, calibrate
from calibration.layouts import BUILTIN, Layout, LayoutError
from calibration.profile import Profile, ProfileError

__all__ = ["BUILTIN", "CalibrationError", "Layout", "LayoutError", "Profile", "ProfileError",
           "calibrate"]
