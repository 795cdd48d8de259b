"""Per-table calibration: edition colour profiles, white balance and table homography.

Planned stage of the photo flow (see the README's architecture section); nothing in the
pipeline depends on it yet.
"""
