"""The game flow: what happens to a game when a player acts. It calls the referee and the
vision pipeline and keeps the result through `storage`; it holds no SQL and no HTTP.

A game lives in the database as its config (players in seating order, the edition's
settings, the timer) and its state (round, running turn, timer events, the accepted table,
the latest stable table reading, corrections). Every change is made under the game's lock
and committed in one transaction before the caller answers.

The turn timer is rebuilt from its stored events (start, pause, resume, extend: wall-clock
times) into the referee's `TurnTimer`, so every phone, a reloaded page and a restarted
server see the same countdown.
"""

from __future__ import annotations

import io
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from app.server.messages import Message, photo_message, say, unfit_message
from app.server.storage import GameRow, Storage
from referee import (
    EDITIONS,
    Rules,
    ScoreSheet,
    Tile,
    TileCodeError,
    TurnTimer,
    edition,
    parse_tiles,
    rack_penalty,
    score_round,
)
from referee.editions import SETTINGS
from referee.reasons import reason_refs
from referee.timer import timeout_penalty
from vision.game.cover import PhotoCovered, read_lone_photo
from vision.recognition.decode import Photo, PhotoError
from vision.recognition.detections import TileDetections
from vision.recognition.quality import PhotoUnfit

log = logging.getLogger("rummikub.server")

RACK_START = 14  # tiles each player draws at the start of a round (RULES.md section 3)
EXTENSION_SECONDS = 30.0  # what one "more time" adds to a turn
CORRECTION_REACH = 0.6  # a correction holds for tiles within this many tile heights
# A correction made in one view (a camera, a photo) is carried to another only when the
# tiles around it are found there again: CARRY_NEIGHBOURS of those within CARRY_NEAR tile
# heights of it must move like the rest (inliers of the alignment, CARRY_INLIER heights).
CARRY_NEAR = 3.0
CARRY_NEIGHBOURS = 2
CARRY_INLIER = 0.4
CORRECTIONS_DROPPED = ("corrections made in another view of the table (the other phone's "
                       "camera, or a photo from elsewhere) no longer apply: correct again "
                       "if needed")


class GameError(Exception):
    """A request the game cannot follow; `status` is the HTTP status a route answers."""

    status = 400

    def __init__(self, message: str | Message, status: int | None = None, *,
                 detail: str | None = None):
        # `detail`: fuller English words for the API than the message's own
        super().__init__(detail or str(message))
        # The page words an id in its player's language; the API keeps the English.
        self.message_id = message.json() if isinstance(message, Message) else None
        if status is not None:
            self.status = status


class NotFound(GameError):
    status = 404


class Conflict(GameError):
    """Right request, wrong moment (ending a turn before a round started)."""

    status = 409


class BadInput(GameError):
    status = 422


class Busy(Conflict):
    """Another server process holds the game's row (only asked of with `wait=False`)."""


ELSEWHERE = "elsewhere"  # what a change made by another server process is called
# ... and a reading stored by another process: "read-elsewhere:<reading id>"
READ_ELSEWHERE = "read-elsewhere:"


def _in_round(rnd: dict, number: int) -> int:
    """A turn's number counted within its round (the game numbers them across rounds)."""
    return number - int(rnd.get("first_turn") or 1) + 1


def rack_warnings(rack) -> list[Message]:
    """The rack reading's warnings as messages: its doubts and edge tiles by count, any
    other note in the reader's words."""
    out = []
    low = int(rack.detections.uncertain.sum())
    if low:
        out.append(say("rack.low_confidence", count=low))
    if rack.edge:
        out.append(say("rack.edge", count=len(rack.edge)))
    if getattr(rack, "off_rack", None):
        codes = rack.detections.codes
        out.append(say("rack.off_rack", count=len(rack.off_rack),
                       tiles=" ".join(codes[i] for i in rack.off_rack)))
    known = ("tile(s) read with low confidence", "tile(s) at the photo's edge",
             "off the rack: not counted")
    out += [say("rack.note", text=w) for w in rack.warnings if not any(k in w for k in known)]
    return out


TURN_ID = re.compile(r"r(?P<round>\d{1,6})t(?P<turn>\d{1,9})")


def turn_id(state: dict) -> str:
    """The running turn's id ("r2t5": round 2, the game's 5th turn): every call that
    changes a turn names it, so a call meant for an ended turn changes nothing. Turns
    stored before ids were kept get the same id from their numbers."""
    turn = state["round"]["turn"]
    return turn.get("id") or f"r{state['round']['number']}t{turn['number']}"


# ----------------------------------------------------------------------------- converters
def rules_to_json(rules: Rules) -> dict:
    out = {"name": rules.name}
    for name in SETTINGS:
        value = getattr(rules, name)
        out[name] = [c.value for c in value] if name == "colors" else value
    return out


def rules_from_json(data: dict) -> Rules:
    return Rules(**{**data, "colors": tuple(data["colors"])})


def rules_with(edition_name: str, settings: dict | None) -> Rules:
    """The edition preset with single settings overridden; BadInput naming a bad one."""
    try:
        rules = edition(edition_name)
    except ValueError as error:
        raise BadInput(say("edition.refused", error=str(error))) from None
    for key, value in (settings or {}).items():
        try:
            if isinstance(value, str):
                rules = rules.with_setting(key, value)
            elif isinstance(value, list):
                rules = rules.with_setting(key, " ".join(str(v) for v in value))
            elif value is None and key.replace("-", "_") == "turn_seconds":
                rules = rules.replace(turn_seconds=None)
            elif key.replace("-", "_") == "turn_seconds" and isinstance(value, int | float) \
                    and not isinstance(value, bool):
                rules = rules.replace(turn_seconds=float(value))
            else:
                rules = rules.replace(**{key.replace("-", "_"): value})
        except (ValueError, TypeError) as error:
            raise BadInput(say("settings.invalid", key=key, error=str(error))) from None
    return rules


def detections_to_bytes(d: TileDetections) -> bytes:
    out = io.BytesIO()
    arrays = {"corners": d.corners, "detector_scores": d.detector_scores,
              "class_probs": d.class_probs, "class_ids": d.class_ids,
              "uncertain": d.uncertain, "labels": np.array(d.labels)}
    if d.flip_probs is not None:
        arrays["flip_probs"] = d.flip_probs
    np.savez(out, **arrays)
    return out.getvalue()


def detections_from_bytes(data: bytes) -> TileDetections:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return TileDetections(
            corners=z["corners"].astype(np.float32), detector_scores=z["detector_scores"],
            class_probs=z["class_probs"], class_ids=z["class_ids"].astype(np.int64),
            labels=tuple(str(x) for x in z["labels"]), uncertain=z["uncertain"].astype(bool),
            flip_probs=z["flip_probs"] if "flip_probs" in z.files else None)


def tile_height(d: TileDetections) -> float:
    if not len(d):
        return 1.0
    return float(np.median(np.linalg.norm(d.corners[:, 3] - d.corners[:, 0], axis=1)))


def _align_views(around: list, d: TileDetections) -> tuple[np.ndarray, np.ndarray] | None:
    """The similarity transform from the view a correction was made in to `d`'s view, from
    the tiles read alike in both (RANSAC, as the tracker and `vision.game.turn` align frames),
    with the inlier mask over `around`; None when the tiles do not give one."""
    import cv2

    if len(around) < 3 or len(d) < 3:
        return None
    src, dst, which = [], [], []
    codes = d.codes
    for k, (x, y, code) in enumerate(around):
        for j, other in enumerate(codes):
            if other == code:  # every copy of the tile may be the one: RANSAC picks
                src.append((x, y))
                dst.append(d.centers[j])
                which.append(k)
    if len(src) < 3:
        return None
    m, inliers = cv2.estimateAffinePartial2D(
        np.array(src, np.float32), np.array(dst, np.float32), method=cv2.RANSAC,
        ransacReprojThreshold=CARRY_INLIER * tile_height(d))
    if m is None or inliers is None:
        return None
    scale = float(np.sqrt(abs(np.linalg.det(m[:, :2]))))
    if not 0.5 < scale < 2.0:
        return None
    matched = np.zeros(len(around), bool)
    matched[np.array(which)[inliers.ravel() > 0]] = True
    if int(matched.sum()) < 3:
        return None
    return m.astype(np.float64), matched


def carry_correction(c: dict, d: TileDetections, view: str | None) -> dict | None:
    """The correction `c` in `d`'s view: as it is when made in that view, moved there when
    the tiles around it are found again (at least `CARRY_NEIGHBOURS` of those within
    `CARRY_NEAR` tile heights, plus 3 in all, moving alike), None when it cannot be carried
    over reliably. A place in one camera's pixels is not that place in another camera's
    (or another hand-held photo's), so a correction is never applied by pixel across views."""
    if c.get("view") == view:
        return c
    around = c.get("around") or []
    found = _align_views(around, d)
    if found is None:
        return None
    m, matched = found
    size = float(c.get("size") or 1.0)
    near = [i for i, (x, y, _) in enumerate(around)
            if np.hypot(x - c["x"], y - c["y"]) <= CARRY_NEAR * size]
    if not near or sum(bool(matched[i]) for i in near) < min(CARRY_NEIGHBOURS, len(near)):
        return None  # no tile around it was found again: where it lies now is a guess
    x, y = (float(v) for v in m[:, :2] @ np.array([c["x"], c["y"]]) + m[:, 2])
    return {**c, "x": x, "y": y, "view": view, "size": tile_height(d),
            "around": _around(d, (x, y))}


def _around(d: TileDetections, point: tuple[float, float]) -> list:
    """The tiles of a reading but the one at `point`: what carries a correction made on it
    over to another view of the table."""
    reach = CORRECTION_REACH * tile_height(d)
    return [[round(float(x), 1), round(float(y), 1), code]
            for (x, y), code in zip(d.centers, d.codes, strict=True)
            if np.hypot(x - point[0], y - point[1]) > reach]


def apply_corrections(d: TileDetections, corrections: list[dict], view: str | None = None
                      ) -> tuple[TileDetections, list[dict], int]:
    """Tiles lying where a player corrected a reading take the corrected code, surely.

    `view` names the view `d` was read in (one camera, or one photo). Returns the readings,
    the corrections as they stand in this view (carried over from another view where the
    tiles around them say where they lie now), and how many could not be carried over
    (dropped: the player corrects again if needed)."""
    if not corrections:
        return d, corrections, 0
    kept = []
    for c in corrections:
        carried = carry_correction(c, d, view) if len(d) else c
        if carried is not None:
            kept.append(carried)
    dropped = len(corrections) - len(kept)
    if not len(d):
        return d, kept, dropped
    labels = tuple(d.labels)
    probs, ids, uncertain = d.class_probs.copy(), d.class_ids.copy(), d.uncertain.copy()
    centres, reach = d.centers, CORRECTION_REACH * tile_height(d)
    changed = False
    for c in kept:
        if c["code"] not in labels:
            continue
        dist = np.linalg.norm(centres - np.array([c["x"], c["y"]], np.float32), axis=1)
        i = int(np.argmin(dist))
        if dist[i] <= reach:
            k = labels.index(c["code"])
            probs[i] = 0.0
            probs[i, k] = 1.0
            ids[i] = k
            uncertain[i] = False
            changed = True
    if not changed:
        return d, kept, dropped
    return (TileDetections(d.corners, d.detector_scores, probs, ids, labels, uncertain,
                           None if d.flip_probs is None else d.flip_probs.copy()),
            kept, dropped)


def reading_json(d: TileDetections, rules: Rules, width: int, height: int,
                 photo_id: str | None) -> dict:
    """The `rummikub scan --json` object of one photo (plus `photo_id`)."""
    from vision.game.table import judge_table

    table = judge_table(d, rules, frame=(int(width), int(height)))
    result = {"photo": photo_id, "photo_id": photo_id, "width": int(width),
              "height": int(height), "tiles": table.detections.to_json()}
    result.update(table.to_json())
    # Each set's reasons as message ids too: the page words them in its player's language.
    for out, verdict in zip(result["sets"], table.verdicts, strict=True):
        out["reason_ids"] = reason_refs(verdict.reasons)
    result["warnings"] = ([] if len(d) else ["no tiles found"]) + list(table.warnings)
    return result


def _codes(tiles) -> list[str]:
    return [t.code() for t in tiles]


def _verdict_out(verdict: dict | None) -> dict | None:
    """A stored verdict as the API gives it. Verdicts stored before the referee named the
    sets already invalid before a turn (`TurnVerdict.invalid_before`) listed them as
    {tiles, reasons}: they are said in words like the new ones."""
    if not verdict or all(isinstance(x, str) for x in verdict.get("preexisting_invalid", [])):
        return verdict
    words = [x if isinstance(x, str) else
             f"set ({' '.join(x.get('tiles', []))}) was already invalid before this turn: "
             f"{'; '.join(x.get('reasons', []))}" for x in verdict["preexisting_invalid"]]
    return {**verdict, "preexisting_invalid": words}


def _tiles_of(reading) -> list[list[Tile]]:
    """A judged table as the referee's sets; loose tiles (not faint ones) as sets of one."""
    codes = reading.detections.codes
    sets = [[Tile.from_code(codes[i]) for i in s] for s in reading.sets]
    sets += [[Tile.from_code(codes[i])] for i in reading.loose if i not in reading.faint]
    return sets


# ----------------------------------------------------------------------------- the service
@dataclass
class PhotoIn:
    """An uploaded photo whose header and pixel data passed the checks: its bytes (kept)
    and the `vision.recognition.decode.Photo` the pipeline reads, decoded only as far as it needs
    (a big JPEG at 1/2 to 1/8 of each side; each decode is kept for the next use)."""

    data: bytes
    content_type: str
    photo: Photo

    @property
    def width(self) -> int:
        return self.photo.width

    @property
    def height(self) -> int:
        return self.photo.height


class GameService:
    """Every action on a game; `reader` is the vision TileReader loaded once."""

    def __init__(self, storage: Storage, reader, clock=time.time):
        self.storage = storage
        self.reader = reader
        self.clock = clock
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()
        # Called with (game_id, what) after a change: the frame hub resets or commits its
        # tracker and live sockets push the game.
        self.listeners: list = []
        # Asked before a round starts (the game's row): words why it may not (a decided
        # finals table of the tournament hall), or None.
        self.round_guard = None
        # (game_id, photo_id, reading_id) -> the reading's tiles the live camera does not
        # see now (under a hand): the frame hub answers; without a camera, none.
        self.hidden_of = lambda _game, _photo, _reading: []

    @contextmanager
    def lock(self, game_id: str, *, wait: bool = True) -> Iterator[None]:
        """One change of a game: this process's lock for it and, on a database other
        processes share (PostgreSQL), its row locked in a transaction that every read and
        write inside joins, so the state read inside is the latest and another process's
        change of the game waits for this one. `wait=False`: Busy at once when another
        process holds the game (a timed-out turn is judged by whoever got it first)."""
        with self._locks_guard:
            local = self._locks.setdefault(game_id, threading.RLock())
        with local:
            if not self.storage.shared:
                yield  # SQLite: one process, and a write transaction holds the whole file
                return
            with self.storage.transaction() as db:
                if self.storage.lock_game(db, game_id, wait=wait) is None and not wait \
                        and self.storage.game(game_id) is not None:
                    raise Busy("another server process is changing this game; nothing was "
                               "changed here")
                yield

    def heard(self, game_id: str, about: str | None = None) -> None:
        """Another server process changed the game (`Storage.listen`); `about` =
        "reading:<id>" when it stored a reading: told first, as such."""
        if about and about.startswith("reading:"):
            self._notify(game_id, READ_ELSEWHERE + about.removeprefix("reading:"))
        self._notify(game_id, ELSEWHERE)

    def _notify(self, game_id: str, what: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(game_id, what)
            except Exception:  # a listener's failure never undoes a stored turn
                pass

    # -- loading ---------------------------------------------------------------------------
    def row(self, game_id: str) -> GameRow:
        row = self.storage.game(game_id) if isinstance(game_id, str) and game_id else None
        if row is None:
            raise NotFound(say("game.not_found", game=repr(game_id)))
        return row

    @staticmethod
    def rules(row: GameRow) -> Rules:
        return rules_from_json(row.config["settings"])

    # -- creating --------------------------------------------------------------------------
    def create(self, players: list[str], edition_name: str = "original",
               settings: dict | None = None, timer: dict | None = None,
               hall: dict | None = None, db=None) -> GameRow:
        """`hall`: {"tournament", "round", "table"} for a tournament's table, made inside
        the tournament's transaction `db`."""
        names = [p.strip() for p in players]
        if not 2 <= len(names) <= 6 or any(not n for n in names):
            raise BadInput(say("players.count"))
        if len(set(names)) != len(names):
            raise BadInput(say("players.same_name"))
        rules = rules_with(edition_name, settings)
        timer = dict(timer or {})
        enabled = bool(timer.get("enabled", rules.turn_seconds is not None))
        seconds = timer.get("seconds") or rules.turn_seconds or 120.0
        extensions = int(timer.get("extensions", 0) or 0)
        extension_seconds = float(timer.get("extension_seconds") or EXTENSION_SECONDS)
        try:
            rules = rules.replace(turn_seconds=float(seconds) if enabled else None)
        except ValueError as error:
            raise BadInput(say("timer.seconds", error=str(error))) from None
        if extensions < 0 or extension_seconds <= 0:
            raise BadInput(say("timer.extensions"))
        config = {
            "players": names,
            "edition": rules.name,
            "settings": rules_to_json(rules),
            "timer": {"enabled": enabled, "seconds": float(seconds), "extensions": extensions,
                      "extension_seconds": extension_seconds},
        }
        if hall:
            config["hall"] = dict(hall)
        state = {"phase": "setup", "round": None, "turn_count": 0, "melded": [],
                 "latest_reading": None, "corrections": [], "start_draw": None,
                 "last_verdict": None}
        return self.storage.create_game(config, state, db=db)

    # -- the view every phone polls --------------------------------------------------------
    def view(self, game_id: str, *, with_tokens: bool = False) -> dict:
        self.check_timeout(game_id)
        row = self.row(game_id)
        state, config = row.state, row.config
        rounds = self.storage.rounds(game_id)
        sheet = self._sheet(config["players"], rounds)
        totals = sheet.totals
        players = [{"name": n, "seat": i, "melded": n in state["melded"],
                    "score_total": totals[n]} for i, n in enumerate(config["players"])]
        rnd = None
        if state["round"] is not None:
            r = state["round"]
            rnd = {"number": r["number"], "starter": r["starter"], "pool": r["pool"],
                   "turn": self._turn_view(row) if r.get("turn") else None,
                   "counting": bool(r.get("counting"))}
        latest = self.storage.reading(game_id, state["latest_reading"])
        out = {
            "id": row.id,
            "players": players,
            "edition": config["edition"],
            "settings": config["settings"],
            "timer": config["timer"],
            "state": state["phase"],
            "round": rnd,
            "table": self._reading_out(latest),
            "last_verdict": _verdict_out(state.get("last_verdict")),
            "sheet": self._sheet_json(sheet, rounds),
            "server_time": self.clock(),
            "hall": config.get("hall"),
        }
        if with_tokens:
            out["token"] = row.token
            out["watch_token"] = row.watch_token
        return out

    def _turn_view(self, row: GameRow) -> dict:
        turn = row.state["round"]["turn"]
        timer = self._timer(row)
        now = self.clock()
        remaining = timer.remaining()
        return {
            "id": turn_id(row.state),
            "number": turn["number"],
            "in_round": _in_round(row.state["round"], turn["number"]),
            "player": turn["player"],
            "first_meld": turn["player"] not in row.state["melded"],
            "started_at": turn["events"][0][1],
            "deadline": (now + remaining) if remaining is not None and timer.running else None,
            "remaining_s": None if remaining is None else round(remaining, 3),
            "elapsed_s": round(timer.elapsed(), 3),
            "paused": not timer.running,
            "extensions_used": sum(1 for e in turn["events"] if e[0] == "extend"),
            "extensions_left": self._extensions_left(row),
        }

    def _timer(self, row: GameRow) -> TurnTimer:
        """The referee's timer, replayed from the stored events onto the wall clock."""
        rules = self.rules(row)
        now = [0.0]
        timer = TurnTimer(rules, clock=lambda: now[0], warnings_at=())
        for kind, at, arg in row.state["round"]["turn"]["events"]:
            now[0] = at
            if kind == "start":
                timer.start()
            elif kind == "pause":
                timer.pause()
            elif kind == "resume":
                timer.resume()
            elif kind == "extend" and timer.seconds is not None:
                timer.seconds += arg
        timer.clock = self.clock
        return timer

    def _extensions_left(self, row: GameRow) -> int:
        used = sum(1 for e in row.state["round"]["turn"]["events"] if e[0] == "extend")
        return max(0, int(row.config["timer"]["extensions"]) - used)

    @staticmethod
    def _sheet(players: list[str], rounds: list[dict]) -> ScoreSheet:
        sheet = ScoreSheet(players)
        for r in rounds:
            sheet.add_round(r["scores"])
        return sheet

    @staticmethod
    def _sheet_json(sheet: ScoreSheet, rounds: list[dict]) -> dict:
        return {"players": sheet.players,
                "rounds": [{"number": r["number"], "winner": r["winner"], "scores": r["scores"],
                            "rack_totals": r.get("rack_totals", {}),
                            "pool_empty": r.get("pool_empty", False)} for r in rounds],
                "totals": sheet.totals, "leader": sheet.leader}

    @staticmethod
    def _reading_out(row) -> dict | None:
        if row is None:
            return None
        return {**row.reading, "reading_id": row.id, "stable_since": row.created_at}

    # -- rounds ----------------------------------------------------------------------------
    def start_round(self, game_id: str, starter: str | None = None) -> None:
        with self.lock(game_id):
            row = self.row(game_id)
            state, players = row.state, row.config["players"]
            if state["phase"] == "playing":
                raise Conflict(say("round.playing"))
            if state["phase"] == "finished":
                raise Conflict(say("round.finished"))
            refusal = self.round_guard(row) if self.round_guard is not None else None
            if refusal:
                raise Conflict(refusal)
            if starter is None:
                starter = state.get("start_draw")
            if starter is None:
                previous = state["round"]["starter"] if state["round"] else None
                # The deal moves on: the player after last round's starter begins.
                starter = (players[(players.index(previous) + 1) % len(players)]
                           if previous in players else players[0])
            if starter not in players:
                raise BadInput(say("round.starter_unknown", starter=repr(starter),
                                   players=", ".join(players)))
            rules = self.rules(row)
            number = (state["round"]["number"] + 1) if state["round"] else 1
            pool = max(0, rules.tile_count - RACK_START * len(players))
            state["phase"] = "playing"
            state["melded"] = []
            state["corrections"] = []
            state["start_draw"] = None
            state["latest_reading"] = None
            state["last_verdict"] = None
            state["round"] = {"number": number, "starter": starter, "pool": pool,
                              "table_reading": None, "turn": None,
                              "first_turn": state["turn_count"] + 1}
            self._new_turn(state, starter)
            self.storage.save_state(game_id, state)
        self._notify(game_id, "round")

    def _new_turn(self, state: dict, player: str) -> None:
        # Numbered by judged turns: a turn cut short by the round's end leaves no gap (so
        # the id names the round too).
        number = state["turn_count"] + 1
        state["round"]["turn"] = {"id": f"r{state['round']['number']}t{number}",
                                  "number": number, "player": player,
                                  "events": [["start", self.clock(), None]],
                                  "before_reading": state["round"]["table_reading"]}

    def end_round(self, game_id: str, winner: str | None, racks: dict[str, str | list],
                  pool_empty: bool = False) -> dict:
        with self.lock(game_id):
            row = self.row(game_id)
            state, players = row.state, row.config["players"]
            if state["phase"] != "playing":
                raise Conflict(say("round.none"))
            rules = self.rules(row)
            unknown = sorted(set(racks) - set(players))
            if unknown:
                raise BadInput(say("score.rack_unknown", player=repr(unknown[0])))
            if winner is not None and winner not in players:
                raise BadInput(say("score.winner_unknown", winner=repr(winner)))
            if winner is None and not pool_empty:
                raise BadInput(say("score.no_winner"))
            parsed = {}
            for name in players:
                text = racks.get(name, [] if name == winner else None)
                if text is None:
                    raise BadInput(say("score.rack_missing", player=name))
                try:
                    parsed[name] = parse_tiles(text)
                except TileCodeError as error:
                    raise BadInput(say("score.rack_invalid", player=name, error=str(error))) from None
            try:
                result = score_round(parsed, None if pool_empty else winner, rules)
            except ValueError as error:
                raise BadInput(say("score.refused", error=str(error))) from None
            number = state["round"]["number"]
            stored = {"number": number, "winner": result.winner, "scores": result.scores,
                      "rack_totals": result.rack_totals, "pool_empty": result.pool_empty,
                      "racks": {n: _codes(t) for n, t in parsed.items()}}
            state["phase"] = "round-over"
            state["round"]["turn"] = None
            with self.storage.transaction() as db:
                self.storage.add_round(db, game_id, number, stored)
                self.storage.save_state(game_id, state, db)
        self._notify(game_id, "round-end")
        return stored

    def going_out(self, game_id: str, out: bool = True) -> None:
        """Someone went out (`out`): the running turn stops while the racks are counted, so
        no turn can time out in a round that has ended. `out=False` is "back to the table"
        (a slip): the turn's clock runs on from where it stopped."""
        self.check_timeout(game_id)  # time that ran out before anyone went out still counts
        with self.lock(game_id):
            row = self.row(game_id)
            turn = self._running_turn(row)
            rnd = row.state["round"]
            counting = rnd.get("counting")
            if out == bool(counting):
                raise Conflict(say("round.already_counting") if out else say("round.not_counting"))
            timer = self._timer(row)
            if out:
                # Remember whether it was this call that stopped the clock.
                rnd["counting"] = {"at": self.clock(), "stopped": timer.running}
                if timer.running:
                    turn["events"].append(["pause", self.clock(), None])
            else:
                rnd["counting"] = None
                if counting.get("stopped") and not timer.running:
                    turn["events"].append(["resume", self.clock(), None])
            self.storage.save_state(game_id, row.state)
        self._notify(game_id, "round-out" if out else "round-back")

    def finish(self, game_id: str) -> None:
        with self.lock(game_id):
            row = self.row(game_id)
            if row.state["phase"] == "playing":
                raise Conflict(say("round.playing"))
            row.state["phase"] = "finished"
            self.storage.save_state(game_id, row.state)
        self._notify(game_id, "finished")

    # -- the timer -------------------------------------------------------------------------
    def _running_turn(self, row: GameRow, meant: str | None = None) -> dict:
        """The running turn; Conflict when none runs, or when `meant` (the turn id the
        caller saw) names another one: a second tap, or a tap after the timeout ended it,
        must not act on the next player's turn."""
        running = row.state["phase"] == "playing" and bool(row.state["round"].get("turn"))
        if meant is not None and not (running and turn_id(row.state) == meant):
            words, message = self._not_running_words(row, meant)
            raise Conflict(message, detail=words)
        if not running:
            raise Conflict(say("turn.none"))
        return row.state["round"]["turn"]

    def _not_running_words(self, row: GameRow, meant: str) -> tuple[str, Message]:
        """Why a call for turn `meant` changes nothing: English words for the API, and the
        message the page words in its player's language."""
        found = TURN_ID.fullmatch(meant)
        ended = None
        if found:
            number, rnd = int(found["turn"]), int(found["round"])
            ended = next((v for v in self.storage.turns(row.id)
                          if v.get("turn") == number and v.get("round") == rnd), None)
        if ended is not None:
            why = " (time ran out)" if ended.get("timed_out") else ""
            words = f"{ended['player']}'s turn has already ended{why}: {ended['message']}"
            message = say("turn.ended", player=ended["player"])
        elif found and row.state["round"] and int(found["round"]) < row.state["round"]["number"]:
            words = f"turn {meant} has already ended: its round is over"
            message = say("turn.round_over")
        elif found and row.state["phase"] == "round-over":
            words = f"turn {meant} has already ended: the round is over"
            message = say("turn.round_over")
        elif row.state["phase"] != "playing":
            words = "no turn is running: start a round first"
            message = say("turn.none")
        else:
            words = f"turn {meant!r} is not this game's running turn"
            message = say("turn.not_running")
        if row.state["phase"] == "playing" and row.state["round"].get("turn"):
            turn = row.state["round"]["turn"]
            words += f"; now it is {turn['player']}'s turn ({turn_id(row.state)})"
        return words + ". Nothing was changed.", message

    def timer_event(self, game_id: str, kind: str, meant: str | None = None) -> None:
        self.check_timeout(game_id)
        with self.lock(game_id):
            row = self.row(game_id)
            turn = self._running_turn(row, meant)
            if row.state["round"].get("counting"):
                raise Conflict(say("turn.counting"))
            timer = self._timer(row)
            if kind == "pause":
                if not timer.running:
                    raise Conflict(say("turn.already_paused"))
            elif kind == "resume":
                if timer.running:
                    raise Conflict(say("turn.already_running"))
            elif kind == "extend":
                if not timer.limited:
                    raise Conflict(say("turn.no_timer"))
                if self._extensions_left(row) <= 0:
                    raise Conflict(say("turn.no_extensions"))
            arg = float(row.config["timer"]["extension_seconds"]) if kind == "extend" else None
            turn["events"].append([kind, self.clock(), arg])
            self.storage.save_state(game_id, row.state)
        self._notify(game_id, "timer")

    def check_timeout(self, game_id: str) -> dict | None:
        """Judge the running turn when its time is up (called on requests and by a tick)."""
        if self.storage.full:
            return None  # judged once space is back (reads go on meanwhile)
        row = self.storage.game(game_id)
        if row is None or row.state["phase"] != "playing" or not row.state["round"]["turn"]:
            return None
        if row.state["round"].get("counting"):
            return None  # the round has ended: its last turn cannot time out
        if not self._timer(row).expired():
            return None
        try:
            return self.end_turn(game_id, timed_out=True, only_if_expired=True)
        except Conflict:
            return None
        except Exception:
            # Reading the game must keep working even if judging this turn fails; the
            # tick tries again and the log says why.
            log.exception("judging the timed-out turn of game %s failed", game_id)
            return None

    def check_all_timeouts(self) -> int:
        return sum(1 for game_id in self.storage.game_ids("playing")
                   if self.check_timeout(game_id))

    # -- turns -----------------------------------------------------------------------------
    def end_turn(self, game_id: str, photo_id: str | None = None, *, timed_out: bool = False,
                 only_if_expired: bool = False, meant: str | None = None) -> dict:
        """Judge the running turn and start the next. `meant`: the id of the turn the
        caller means (the API requires it); Conflict, and nothing changes, for another."""
        from vision.game.turn import judge_turn

        if meant is not None:
            # A tap after the deadline: the server's own timeout judges the turn first,
            # so the tap then names an ended turn and is refused.
            self.check_timeout(game_id)
        # A timed-out turn is judged by the process that gets the game first; the others
        # skip it (SKIP LOCKED) rather than wait to find it judged.
        with self.lock(game_id, wait=not only_if_expired):
            row = self.row(game_id)
            turn = self._running_turn(row, meant)
            if row.state["round"].get("counting"):
                raise Conflict(say("turn.counting"))
            state, rules = row.state, self.rules(row)
            timer = self._timer(row)
            if only_if_expired and not timer.expired():
                raise Conflict(say("turn.not_over"))
            timed_out = timed_out or timer.expired()
            time_used = min(timer.elapsed(), timer.seconds) if timer.limited else timer.elapsed()
            before_row = self.storage.reading(game_id, turn["before_reading"])
            if photo_id is not None:
                after_row = self.storage.reading_by_photo(game_id, photo_id)
                if after_row is None:
                    raise NotFound(say("photo.no_reading", photo=repr(photo_id)))
            else:
                after_row = self.storage.reading(game_id, state["latest_reading"]) or before_row
            empty = TileDetections.empty()
            before = detections_from_bytes(before_row.detections) if before_row else empty
            after = detections_from_bytes(after_row.detections) if after_row else empty
            player = turn["player"]
            first_meld = player not in state["melded"]
            # Tiles under a hand as the turn ends still lie where the camera last saw them:
            # counted there, and named for a look (`check`).
            hidden = self.hidden_of(game_id, after_row.photo_id, after_row.id) if after_row \
                else []
            judged = judge_turn(before, after, rules=rules, first_meld=first_meld,
                                hidden=hidden)
            v = judged.verdict
            pool = int(state["round"]["pool"])
            played_ids = list(judged.played)
            after_codes = judged.after.detections.codes
            passed = not v.played
            next_table = after_row.id if after_row else None
            penalty = None
            legal = bool(v.legal)
            draw = int(v.draw)
            new_detections = None

            if timed_out:
                pen = timeout_penalty(_tiles_of(judged.before), _tiles_of(judged.after),
                                      v.played, pool, rules)
                if legal:
                    draw = min(pen.draw, pool)
                elif not pen.reasons and v.played:
                    # Sets valid but the turn is not (an initial meld under 30): it is
                    # taken back whole.
                    draw = min(rules.timeout_draw, pool)
                    penalty = self._penalty(judged, played_ids, draw, timed_out=True)
                    next_table = before_row.id if before_row else None
                elif passed:
                    draw = min(pen.draw, pool)
                    next_table = before_row.id if before_row else None
                else:
                    draw = pen.draw
                    back = self._tiles_back(judged, pen.tiles_back_to_rack)
                    penalty = {"tiles_back": back, "draw": draw,
                               "words": self._penalty_words(player, back, draw, timed_out=True)}
                    if rules.timeout_penalty == "restore-table":
                        next_table = before_row.id if before_row else None
                    else:
                        back_ids = {t["id"] for t in back}
                        keep = np.array([i not in back_ids for i in range(len(after))], bool)
                        new_detections = after[keep]
            elif not legal:
                draw = min(draw, pool)
                next_table = before_row.id if before_row else None
                if not passed:
                    penalty = self._penalty(judged, played_ids, draw, timed_out=False)

            if legal and first_meld and v.played:
                state["melded"].append(player)
            state["round"]["pool"] = max(0, pool - draw)
            # This player's invalid sets: one already invalid before the turn and left as
            # it was is named in `preexisting_invalid` instead (the referee's table after
            # the turn lists the photo's sets first, in order, so the indexes agree).
            inherited = set(v.inherited_sets)
            invalid_sets = [{"tiles": [after_codes[i] for i in ids], "reasons": list(sv.reasons),
                             "reason_ids": reason_refs(sv.reasons)}
                            for k, (ids, sv) in enumerate(zip(judged.after.sets,
                                                              judged.after.verdicts, strict=True))
                            if not sv.valid and k not in inherited]
            verdict = {
                "turn": turn["number"],
                "turn_in_round": _in_round(state["round"], turn["number"]),
                "round": state["round"]["number"],
                "player": player,
                "legal": legal,
                "passed": passed,
                "timed_out": timed_out,
                "played": _codes(v.played),
                "left_table": _codes(v.left_table),
                "played_ids": [int(i) for i in played_ids],
                "meld_total": v.initial_meld_total,
                "first_meld": first_meld,
                "first_meld_ok": bool(first_meld and legal and v.played),
                "problems": list(v.problems),
                "problem_ids": reason_refs(v.problems),  # the page words them
                "invalid_sets": invalid_sets,
                # The referee's words for sets already invalid before this turn and left
                # as they were: said, but not held against this player.
                "preexisting_invalid": list(v.invalid_before),
                "preexisting_ids": reason_refs(v.invalid_before),
                "draws": int(draw),
                "penalty": penalty,
                "time_used_s": round(float(time_used), 3),
                "suggestion": judged.after.suggestion,
                "warnings": list(judged.warnings),
                "check": list(judged.check),
                "hidden": [after_codes[i] for i in sorted(set(hidden)) if 0 <= i < len(after)],
                "before_reading": before_row.id if before_row else None,
                "after_reading": after_row.id if after_row else None,
                "before_photo_id": before_row.photo_id if before_row else None,
                "after_photo_id": after_row.photo_id if after_row else None,
                "at": self.clock(),
            }
            verdict["message"] = self._message(verdict)
            players = row.config["players"]
            with self.storage.transaction() as db:
                if new_detections is not None:
                    height, width = (after_row.reading["height"], after_row.reading["width"])
                    next_table = self.storage.add_reading(
                        game_id, reading_json(new_detections, rules, width, height,
                                              after_row.photo_id),
                        detections_to_bytes(new_detections), after_row.photo_id, db)
                state["round"]["table_reading"] = next_table
                state["latest_reading"] = next_table
                state["last_verdict"] = verdict
                self.storage.add_turn(db, game_id, turn["number"], state["round"]["number"],
                                      player, verdict, verdict["before_reading"],
                                      verdict["after_reading"])
                state["turn_count"] += 1
                self._new_turn(state, players[(players.index(player) + 1) % len(players)])
                self.storage.save_state(game_id, state, db)
        self._notify(game_id, "turn-accepted" if legal else "turn-rejected")
        return verdict

    def _penalty(self, judged, played_ids, draw, *, timed_out: bool) -> dict:
        codes = judged.after.detections.codes
        back = [self._tile_out(judged, i, codes) for i in played_ids]
        return {"tiles_back": back, "draw": int(draw),
                "words": self._penalty_words(None, back, draw, timed_out=timed_out)}

    @staticmethod
    def _tile_out(judged, i: int, codes) -> dict:
        corners = judged.after.detections.corners[i]
        return {"id": int(i), "code": codes[i],
                "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in corners]}

    def _tiles_back(self, judged, tiles_back) -> list[dict]:
        """The referee's tiles going back to the rack, found on the after reading: tiles
        in invalid sets and loose ones first, then any played tile."""
        codes = judged.after.detections.codes
        candidates = [i for ids, sv in zip(judged.after.sets, judged.after.verdicts,
                                           strict=True) if not sv.valid for i in ids]
        candidates += [i for i in judged.after.loose if i not in judged.after.faint]
        candidates += [i for i in judged.played if i not in candidates]
        wanted = Counter(t.code() for t in tiles_back)
        out = []
        for i in candidates:
            if wanted[codes[i]] > 0:
                wanted[codes[i]] -= 1
                out.append(self._tile_out(judged, i, codes))
        return out

    @staticmethod
    def _penalty_words(player, back, draw, *, timed_out: bool) -> str:
        start = "Time is up: " if timed_out else ""
        tiles = " ".join(t["code"] for t in back)
        take = f"take {tiles} back to the rack" if tiles else "the table stays as it is"
        draws = f" and draw {draw}" if draw else ""
        return f"{start}{take}{draws}."

    @staticmethod
    def _message(v: dict) -> str:
        who = v["player"]
        if v["timed_out"] and v["penalty"]:
            return f"{who}: {v['penalty']['words']}"
        if v["passed"]:
            extra = "time is up, " if v["timed_out"] else ""
            return f"{who}: {extra}nothing laid, draw {v['draws']}."
        if v["legal"]:
            n = len(v["played"])
            meld = f" Initial meld of {v['meld_total']} points." if v["first_meld"] else ""
            more = f" Time is up: draw {v['draws']}." if v["timed_out"] and v["draws"] else ""
            return f"{who}: good turn, {n} tile{'s' if n != 1 else ''} played.{meld}{more}"
        problem = v["problems"][0] if v["problems"] else "the turn is not legal"
        words = v["penalty"]["words"] if v["penalty"] else f"draw {v['draws']}."
        return f"{who}: not legal, {problem}. {words[0].upper()}{words[1:]}"

    # -- readings --------------------------------------------------------------------------
    def store_reading(self, game_id: str, detections: TileDetections, width: int, height: int,
                      photo: bytes | None, kind: str, content_type: str = "image/jpeg", *,
                      photo_id: str | None = None, view: str | None = None,
                      carried: list | None = None) -> dict:
        """A new table reading (a deliberate photo, or a stable change from the camera):
        corrections applied, judged, stored with its photo, and made the latest. Without
        `photo` bytes it points at the stored photo `photo_id` (a corrected reading keeps
        the photo it corrects, so the turn it decides keeps that photo too).

        `view` names where its pixels come from: one camera (`frames`), else the photo
        itself (a hand-held photo is a view of its own). Corrections made in another view
        are carried over by the tiles around them, or dropped and the reading says so.
        `carried`, when given, gets the corrections carried over into `view` by this
        reading, at their places there: the live tracker of that camera is told of them
        like one made on its own reading (`frames.FrameHub`)."""
        with self.lock(game_id):
            row = self.row(game_id)
            if row.state["phase"] == "finished":
                raise Conflict(say("round.finished"))
            rules = self.rules(row)
            with self.storage.transaction() as db:
                if photo is not None:
                    photo_id = self.storage.add_photo(game_id, photo, kind, content_type, db)
                if view is None and photo_id is not None:
                    view = f"photo:{photo_id}"
                before = row.state["corrections"]
                detections, row.state["corrections"], dropped = apply_corrections(
                    detections, before, view)
                if carried is not None:
                    # A correction already in this view comes back as it was; one carried
                    # over is a new one, at its place in this view.
                    same = {id(c) for c in before}
                    carried.extend(c for c in row.state["corrections"] if id(c) not in same)
                reading = reading_json(detections, rules, width, height, photo_id)
                reading["view"], reading["corrections_dropped"] = view, dropped
                if dropped:
                    reading["warnings"].append(CORRECTIONS_DROPPED)
                reading_id = self.storage.add_reading(game_id, reading,
                                                      detections_to_bytes(detections),
                                                      photo_id, db)
                row.state["latest_reading"] = reading_id
                self.storage.save_state(game_id, row.state, db, about=f"reading:{reading_id}")
            out = self._reading_out(self.storage.reading(game_id, reading_id))
        self._notify(game_id, "reading")
        return out

    def read_photo(self, game_id: str, photo: PhotoIn) -> dict:
        """Photo mode: one still photo of the table becomes the latest table reading."""
        self.row(game_id)
        detections = self._read(photo)
        return self.store_reading(game_id, detections, photo.width, photo.height, photo.data,
                                  "table", photo.content_type)

    def _read(self, photo: PhotoIn) -> TileDetections:
        """The tiles of an uploaded photo. The upload check decoded the detector's image;
        the tiles may be cropped from a finer decode, and if that one fails the photo is
        still the sender's problem (400), not the server's. A photo too blurred, dark or
        overexposed to read, or with a hand over its tiles, is refused (422) with what to
        do, never judged."""
        try:
            detections = read_lone_photo(self.reader, photo.photo)
        except PhotoUnfit as error:
            raise GameError(unfit_message(error.problems), 422) from None
        except PhotoCovered:
            raise GameError(say("photo.covered"), 422) from None
        except PhotoError as error:
            raise GameError(photo_message(str(error)), 400) from None
        return detections

    def reading_out(self, game_id: str, reading_id: int) -> dict | None:
        """A stored reading by its id, as the live messages carry it (None: no such)."""
        return self._reading_out(self.storage.reading(game_id, reading_id))

    def latest_reading(self, game_id: str) -> dict:
        row = self.row(game_id)
        reading = self._reading_out(self.storage.reading(game_id, row.state["latest_reading"]))
        if reading is None:
            raise NotFound(say("table.no_reading"))
        return reading

    def correct(self, game_id: str, tile_id: int, code: str) -> tuple[dict, tuple[float, float]]:
        try:
            tile = Tile.from_code(code)
        except TileCodeError as error:
            raise BadInput(say("correction.code", error=str(error))) from None
        with self.lock(game_id):
            row = self.row(game_id)
            latest = self.storage.reading(game_id, row.state["latest_reading"])
            if latest is None:
                raise Conflict(say("table.none"))
            d = detections_from_bytes(latest.detections)
            if not 0 <= tile_id < len(d):
                raise BadInput(say("correction.tile_id", last=len(d) - 1, tile_id=tile_id))
            if tile.code() not in d.labels:
                raise BadInput(say("correction.unreadable", tile=tile.code()))
            x, y = (float(v) for v in d.centers[tile_id])
            # A correction belongs to the view it was made in (its pixels mean nothing in
            # another camera's): it keeps the tiles around it, to be found there again.
            view = latest.reading.get("view")
            corrections = [c for c in row.state["corrections"]
                           if c.get("view") != view or np.hypot(c["x"] - x, c["y"] - y)
                           > CORRECTION_REACH * tile_height(d)]
            corrections.append({"x": x, "y": y, "code": tile.code(), "at": self.clock(),
                                "view": view, "size": tile_height(d),
                                "around": _around(d, (x, y))})
            row.state["corrections"] = corrections
            self.storage.save_state(game_id, row.state)
            out = self.store_reading(game_id, d, latest.reading["width"],
                                     latest.reading["height"], None, "table",
                                     photo_id=latest.photo_id, view=view)
        self._notify(game_id, "correction")
        return out, (x, y)

    # -- racks and the start draw ----------------------------------------------------------
    def rack_from_codes(self, game_id: str, player: str, codes: str | list) -> dict:
        row = self.row(game_id)
        self._player(row, player)
        try:
            tiles = parse_tiles(codes)
        except TileCodeError as error:
            raise BadInput(say("rack.codes", error=str(error))) from None
        return {"player": player, "tiles": _codes(tiles), "rows": [_codes(tiles)],
                "total": rack_penalty(tiles, self.rules(row)), "photo_id": None,
                "warnings": []}

    def rack_from_photo(self, game_id: str, player: str, photo: PhotoIn) -> dict:
        from vision.game.rack import read_rack

        row = self.row(game_id)
        self._player(row, player)
        # the photo and the reader: a stand's tiles are cropped again (vision.game.back_tier)
        rack = read_rack(self._read(photo), self.rules(row), frame=(photo.width, photo.height),
                         photo=photo.photo, reader=self.reader)
        photo_id = self.storage.add_photo(game_id, photo.data, "rack", photo.content_type)
        codes = rack.detections.codes
        return {"player": player, "tiles": [codes[i] for r in rack.rows for i in r],
                "rows": [[codes[i] for i in r] for r in rack.rows], "total": int(rack.total),
                "photo_id": photo_id, "warnings": list(rack.warnings),
                "warning_ids": [m.json() for m in rack_warnings(rack)],
                "edge_tiles": list(rack.edge), "off_rack": [codes[i] for i in rack.off_rack],
                "width": photo.width, "height": photo.height,
                # Each tile's reading where it lies: the page draws them on the photo.
                "marks": [{"id": i, "code": codes[i], "uncertain": bool(rack.detections.uncertain[i]),
                           "off_rack": i in rack.off_rack,
                           "corners": [[round(float(x), 1), round(float(y), 1)]
                                       for x, y in rack.detections.corners[i]]}
                          for i in range(len(codes))]}

    @staticmethod
    def _player(row: GameRow, player: str) -> None:
        if player not in row.config["players"]:
            raise BadInput(say("rack.player_unknown", player=repr(player),
                               players=", ".join(row.config["players"])))

    def start_draw(self, game_id: str, photo: PhotoIn) -> dict:
        from vision.game.rack import start_order

        with self.lock(game_id):
            row = self.row(game_id)
            if row.state["phase"] == "playing":
                raise Conflict(say("round.playing_short"))
            try:
                draw = start_order(self._read(photo), row.config["players"])
            except ValueError as error:
                raise BadInput(say("start.refused", error=str(error))) from None
            photo_id = self.storage.add_photo(game_id, photo.data, "start", photo.content_type)
            row.state["start_draw"] = draw.starter
            self.storage.save_state(game_id, row.state)
        if draw.starter:
            message = f"{draw.starter} starts."
        elif draw.tied:
            message = f"No one starts yet: {', '.join(draw.tied)} draw again."
        else:
            message = "No one starts yet: draw again."
        return {"tiles": list(draw.codes), "drawn": draw.to_json()["drawn"],
                "starter": draw.starter, "ties": list(draw.tied), "message": message,
                "warnings": list(draw.warnings), "photo_id": photo_id}

    # -- history, sheet, photos ------------------------------------------------------------
    def history(self, game_id: str) -> list[dict]:
        self.row(game_id)
        return [_verdict_out(v) for v in self.storage.turns(game_id)]

    def sheet_csv(self, game_id: str) -> str:
        row = self.row(game_id)
        return self._sheet(row.config["players"], self.storage.rounds(game_id)).to_csv()

    def photo(self, game_id: str, photo_id: str) -> tuple[bytes, str]:
        self.row(game_id)
        found = self.storage.photo(game_id, photo_id)
        if found is None:
            raise NotFound(say("photo.not_found", photo=repr(photo_id)))
        return found


def editions_json() -> list[dict]:
    return [{"name": name, "settings": rules_to_json(rules)} for name, rules in EDITIONS.items()]
