"""A pinhole phone camera and the painter that draws 3D faces with per-pixel visibility.

World coordinates are centimetres: x to the right, y up, z away from the player. The
painter draws convex planar faces far to near (the caller orders them) into a float BGR
image and an int32 id buffer, so that after the last face each pixel knows which face it
shows: the visible part of a tile is read off that buffer, not guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

NEAR = 1.0  # cm: faces are clipped to the camera's front before they are projected


@dataclass(frozen=True)
class Camera:
    position: np.ndarray  # (3,) world cm
    rotation: np.ndarray  # (3, 3) rows: right, down, forward (world -> camera)
    focal: float  # pixels
    width: int
    height: int

    @staticmethod
    def look_at(target, distance: float, elevation_deg: float, azimuth_deg: float,
                roll_deg: float, hfov_deg: float, width: int, height: int) -> Camera:
        """A camera `distance` cm from `target`, `elevation_deg` above the table's plane,
        `azimuth_deg` round to the right, the photo turned `roll_deg`."""
        el, az = math.radians(elevation_deg), math.radians(azimuth_deg)
        target = np.asarray(target, np.float64)
        pos = target + distance * np.array(
            [math.sin(az) * math.cos(el), math.sin(el), -math.cos(az) * math.cos(el)])
        forward = (target - pos) / np.linalg.norm(target - pos)
        right = np.cross([0.0, 1.0, 0.0], forward)
        right /= np.linalg.norm(right)
        down = np.cross(right, forward)
        roll = math.radians(roll_deg)
        r2 = math.cos(roll) * right + math.sin(roll) * down
        d2 = -math.sin(roll) * right + math.cos(roll) * down
        focal = width / 2 / math.tan(math.radians(hfov_deg) / 2)
        return Camera(pos, np.stack([r2, d2, forward]), focal, int(width), int(height))

    def to_camera(self, points) -> np.ndarray:
        return (np.asarray(points, np.float64) - self.position) @ self.rotation.T

    def project(self, points) -> np.ndarray:
        """(N, 3) world -> (N, 2) float32 pixels (points must lie in front of the camera)."""
        c = self.to_camera(points)
        z = np.maximum(c[:, 2], 1e-6)
        return np.stack([self.focal * c[:, 0] / z + self.width / 2,
                         self.focal * c[:, 1] / z + self.height / 2], 1).astype(np.float32)

    def depth(self, points) -> float:
        return float(self.to_camera(np.atleast_2d(points))[:, 2].mean())

    def faces_camera(self, corners) -> bool:
        """Whether a face (corners counter-clockwise as seen from its front) is turned
        towards the camera."""
        p = np.asarray(corners, np.float64)
        normal = np.cross(p[1] - p[0], p[2] - p[0])
        return float(np.dot(normal, self.position - p.mean(0))) > 0

    def clip(self, corners) -> np.ndarray:
        """The part of a planar polygon in front of the near plane (Sutherland-Hodgman)."""
        p = np.asarray(corners, np.float64)
        z = self.to_camera(p)[:, 2] - NEAR
        out = []
        for i in range(len(p)):
            a, b, za, zb = p[i], p[(i + 1) % len(p)], z[i], z[(i + 1) % len(p)]
            if za >= 0:
                out.append(a)
            if (za >= 0) != (zb >= 0):
                out.append(a + (b - a) * (za / (za - zb)))
        return np.array(out).reshape(-1, 3)


class Painter:
    """Float BGR image + id buffer; faces drawn in the order given (far to near)."""

    def __init__(self, camera: Camera, background: np.ndarray):
        self.camera = camera
        self.image = background.astype(np.float32)
        self.ids = np.zeros(background.shape[:2], np.int32)  # 0 = table/room
        self.h, self.w = background.shape[:2]

    def _roi(self, pts: np.ndarray):
        x0, y0 = np.floor(pts.min(0)).astype(int) - 2
        x1, y1 = np.ceil(pts.max(0)).astype(int) + 2
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, self.w), min(y1, self.h)
        if x1 <= x0 or y1 <= y0:
            return None
        return x0, y0, x1, y1

    def polygon(self, corners3d, color, face_id: int) -> np.ndarray | None:
        """A flat-coloured convex face; returns its pixel polygon (None when unseen)."""
        clipped = self.camera.clip(corners3d)
        if len(clipped) < 3:
            return None
        pts = self.camera.project(clipped)
        roi = self._roi(pts)
        if roi is None:
            return None
        x0, y0, x1, y1 = roi
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, np.round((pts - (x0, y0)) * 16).astype(np.int32), 255,
                           cv2.LINE_AA, shift=4)
        self._blend(roi, mask, np.asarray(color, np.float32), face_id)
        return pts

    def texture(self, corners3d, tex: np.ndarray, face_id: int, alpha: np.ndarray | None = None
                ) -> np.ndarray | None:
        """`tex` (BGR or BGRA) mapped onto a planar quad (tl, tr, br, bl of the texture);
        returns the homography texture -> photo (None when unseen)."""
        corners3d = np.asarray(corners3d, np.float64)
        if len(self.camera.clip(corners3d)) < 4 or self.camera.to_camera(
                corners3d)[:, 2].min() < NEAR:
            return None  # a face crossing the near plane: not drawn (never a labelled tile)
        pts = self.camera.project(corners3d)
        roi = self._roi(pts)
        if roi is None:
            return None
        x0, y0, x1, y1 = roi
        th, tw = tex.shape[:2]
        src = np.float32([[0, 0], [tw, 0], [tw, th], [0, th]])
        H = cv2.getPerspectiveTransform(src, pts)
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
        size = (x1 - x0, y1 - y0)
        if tex.shape[2] == 4:
            color, a = tex[..., :3], tex[..., 3]
        else:
            color, a = tex, np.full((th, tw), 255, np.uint8)
        if alpha is not None:
            a = (a.astype(np.float32) * alpha).astype(np.uint8)
        warped = cv2.warpPerspective(color, shift @ H, size, flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REPLICATE)
        mask = cv2.warpPerspective(a, shift @ H, size, flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        self._blend(roi, mask, warped.astype(np.float32), face_id)
        return H

    def _blend(self, roi, mask: np.ndarray, color, face_id: int):
        x0, y0, x1, y1 = roi
        m = mask.astype(np.float32)[..., None] / 255.0
        region = self.image[y0:y1, x0:x1]
        region[:] = region * (1 - m) + color * m
        self.ids[y0:y1, x0:x1][mask > 127] = face_id

    def darken(self, polygon_px: np.ndarray, strength: float, blur: float):
        """A soft shadow over what is drawn so far inside a pixel polygon."""
        roi = self._roi(np.vstack([polygon_px - 3 * blur, polygon_px + 3 * blur]))
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        mask = np.zeros((y1 - y0, x1 - x0), np.float32)
        cv2.fillConvexPoly(mask, np.round((polygon_px - (x0, y0)) * 16).astype(np.int32), 1.0,
                           cv2.LINE_AA, shift=4)
        if blur > 0.5:
            mask = cv2.GaussianBlur(mask, (0, 0), blur)
        self.image[y0:y1, x0:x1] *= (1 - strength * mask)[..., None]

    def texture_plane(self, corners3d, tex: np.ndarray) -> None:
        """A large textured plane (the table) that may reach behind the camera: its exact
        homography, drawn only inside the part in front of the near plane."""
        corners3d = np.asarray(corners3d, np.float64)
        clipped = self.camera.clip(corners3d)
        if len(clipped) < 3:
            return
        th, tw = tex.shape[:2]
        cam = self.camera
        u = (corners3d[1] - corners3d[0]) / tw
        v = (corners3d[3] - corners3d[0]) / th
        K = np.array([[cam.focal, 0, cam.width / 2], [0, cam.focal, cam.height / 2], [0, 0, 1]])
        H = K @ np.stack([cam.rotation @ u, cam.rotation @ v,
                          cam.rotation @ (corners3d[0] - cam.position)], 1)
        warped = cv2.warpPerspective(tex, H, (self.w, self.h), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REFLECT)
        pts = cam.project(clipped)
        pts = np.clip(pts, -4 * self.w, 5 * self.w)
        mask = np.zeros((self.h, self.w), np.uint8)
        cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
        self._blend((0, 0, self.w, self.h), mask, warped.astype(np.float32), 0)
