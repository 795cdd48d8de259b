"""`rummikub watch`: a webcam or a video file feeds a game on a running server.

A laptop with a webcam is a complete set-up without a browser: frames are read with OpenCV,
sent a few per second as JPEG to the game's frames API (the server keeps only the newest
while it is busy), and what the server makes of them — the stable table, each turn's
verdict — is printed as it changes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

MAX_SIDE = 1280  # frames larger than this are scaled down before sending: the detector
# reads at a long side of 512, and a phone-sized JPEG keeps the upload quick


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
    parser = subparsers.add_parser(
        "watch",
        help="feed a game on a running server from a webcam or a video file",
        description="Read a webcam (--camera N) or a video file (--video FILE) with OpenCV and "
        "send a few frames a second to a game on a running `rummikub serve`; print the table "
        "and every turn's verdict as the server sees them.",
    )
    parser.add_argument("--server", required=True, metavar="URL",
                        help="the server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--game", required=True, metavar="ID",
                        help="the game's id (write --game=ID when it begins with -)")
    parser.add_argument("--token", required=True, metavar="T",
                        help="the game's token (write --token=T when it begins with -)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--camera", type=int, metavar="N", help="webcam number (0 = the first)")
    source.add_argument("--video", metavar="FILE", help="a video file instead of a webcam")
    parser.add_argument("--fps", type=float, default=3.0,
                        help="frames sent per second (default 3)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="stop after this long (default: at the video's end, or Ctrl-C)")
    parser.add_argument("--loop", action="store_true", help="play the video file again at its end")
    parser.set_defaults(func=run_watch)


class _Refused(Exception):
    """The server answered with an error status: its words, for one line."""


class GameLink:
    """The few API calls `watch` makes, with the game's token (standard library HTTP)."""

    def __init__(self, server: str, game: str, token: str, timeout: float = 10.0):
        self.base = server.rstrip("/")
        self.game = urllib.parse.quote(game, safe="")
        self.token = token
        self.timeout = timeout

    def _call(self, method: str, path: str, body: bytes | None = None,
              content_type: str | None = None):
        headers = {"X-Token": self.token}
        if content_type:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(f"{self.base}/api/games/{self.game}{path}", data=body,
                                     method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return json.loads(r.read().decode() or "null")
        except urllib.error.HTTPError as error:
            try:
                detail = json.loads(error.read().decode()).get("detail")
            except (ValueError, AttributeError):
                detail = None
            raise _Refused(f"the server refused ({error.code}): {detail or error.reason}") from None

    def game_view(self) -> dict:
        return self._call("GET", "")

    def send_frame(self, jpeg: bytes) -> dict:
        return self._call("POST", "/frames", jpeg, "image/jpeg")


def _open_source(args):
    import cv2

    from app.cli import CommandError

    # OpenCV's own warnings about backends it tried would bury our one line.
    try:
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    except AttributeError:
        pass

    if args.video is not None:
        capture = cv2.VideoCapture(args.video)
        if not capture.isOpened():
            raise CommandError(f"--video {args.video}: not a video file OpenCV can read")
        return capture
    capture = cv2.VideoCapture(args.camera)
    if not capture.isOpened():
        raise CommandError(f"--camera {args.camera}: no camera with that number can be opened")
    return capture


def _jpeg(frame) -> bytes:
    import cv2

    h, w = frame.shape[:2]
    scale = min(1.0, MAX_SIDE / max(h, w))
    if scale < 1.0:
        frame = cv2.resize(frame, (round(w * scale), round(h * scale)),
                           interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return data.tobytes() if ok else b""


def describe_table(reading: dict) -> str:
    """One line for the table: tiles, sets, and what is wrong with it."""
    sets = reading.get("sets") or []
    bad = [s for s in sets if not s.get("valid")]
    loose = reading.get("loose") or []
    words = f"table: {len(reading.get('tiles') or [])} tiles, {len(sets)} sets"
    if reading.get("table_valid"):
        return words + ", valid"
    parts = []
    if bad:
        parts.append(f"{len(bad)} invalid ({(bad[0].get('reasons') or ['?'])[0]})")
    if loose:
        parts.append(f"{len(loose)} loose")
    return words + ", not valid: " + "; ".join(parts or ["see the page"])


def run_watch(args) -> int:
    from app.cli import CommandError

    if not 0.2 <= args.fps <= 15:
        raise CommandError(f"--fps {args.fps}: between 0.2 and 15 frames a second")
    if not args.server.startswith(("http://", "https://")):
        raise CommandError(f"--server {args.server}: give the address as http://HOST:PORT")
    link = GameLink(args.server, args.game, args.token)
    try:
        game = link.game_view()
    except _Refused as error:
        raise CommandError(f"game {args.game}: {error}") from None
    except (urllib.error.URLError, OSError) as error:
        raise CommandError(f"--server {args.server}: cannot reach it ({error})") from None
    capture = _open_source(args)
    video_fps = capture.get(5) if args.video is not None else 0.0  # CAP_PROP_FPS
    # A video plays at its own pace, one frame sent every 1/fps seconds of its time.
    step = max(1, round(video_fps / args.fps)) if video_fps and video_fps > 0 else 1
    print(f"watching game {args.game} ({', '.join(p['name'] for p in game['players'])}) "
          f"at {args.fps:g} frames/s from "
          f"{'camera ' + str(args.camera) if args.video is None else args.video}", flush=True)

    sent = dropped = refused = 0
    last_table = last_verdict = None
    next_look = 0.0
    started = time.monotonic()
    frame_index = 0
    try:
        while args.seconds is None or time.monotonic() - started < args.seconds:
            t0 = time.monotonic()
            ok, frame = capture.read()
            if not ok:
                if args.video is not None and args.loop:
                    capture.set(1, 0)  # CAP_PROP_POS_FRAMES
                    continue
                break
            frame_index += 1
            if args.video is not None and (frame_index - 1) % step:
                continue
            try:
                answer = link.send_frame(_jpeg(frame))
                sent += 1
                dropped = int((answer or {}).get("dropped", dropped))
            except _Refused as error:
                refused += 1
                print(f"frame {frame_index}: {error}", file=sys.stderr, flush=True)
                if refused >= 5 and sent == 0:
                    raise CommandError(f"game {args.game}: every frame was refused") from None
            except (urllib.error.URLError, OSError) as error:
                raise CommandError(f"--server {args.server}: lost the server ({error})") from None
            if time.monotonic() >= next_look:
                next_look = time.monotonic() + 1.0
                last_table, last_verdict = _report(link, last_table, last_verdict)
            time.sleep(max(0.0, 1.0 / args.fps - (time.monotonic() - t0)))
        # The last frames are still being read: give the server a moment to settle.
        for _ in range(3):
            time.sleep(0.7)
            last_table, last_verdict = _report(link, last_table, last_verdict)
    except KeyboardInterrupt:
        pass
    finally:
        capture.release()
    print(f"sent {sent} frames; the server dropped {dropped} while busy", flush=True)
    return 0


def _report(link: GameLink, last_table, last_verdict):
    try:
        game = link.game_view()
    except (_Refused, urllib.error.URLError, OSError) as error:
        print(f"(no game view: {error})", file=sys.stderr, flush=True)
        return last_table, last_verdict
    table = game.get("table")
    key = table and (table.get("reading_id"), table.get("photo_id"))
    if table and key != last_table:
        print(describe_table(table), flush=True)
        last_table = key
    verdict = game.get("last_verdict")
    vkey = verdict and (verdict.get("round"), verdict.get("turn"))
    if verdict and vkey != last_verdict:
        print(f"turn {verdict.get('turn')}: {verdict.get('message')}", flush=True)
        last_verdict = vkey
    return last_table, last_verdict
