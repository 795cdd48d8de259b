"""Readings of the table and of racks: a photo or a stable camera change stored as the
latest table (corrections applied and carried between views), a player's correction, a
rack read from a photo or typed codes, the start draw, stored photos (`ReadingFlow`, part
of `app.server.games.GameService`)."""

from __future__ import annotations

import numpy as np

from app.server.corrections import (
    CORRECTION_REACH,
    CORRECTIONS_DROPPED,
    apply_corrections,
    tile_height,
    tiles_around,
)
from app.server.gamedata import (
    PhotoIn,
    codes_of,
    detections_from_bytes,
    detections_to_bytes,
    rack_warnings,
    reading_json,
)
from app.server.gameerrors import BadInput, Conflict, GameError, NotFound
from app.server.messages import photo_message, say, unfit_message
from app.server.storage import GameRow
from referee import Tile, TileCodeError, parse_tiles, rack_penalty
from vision.game.cover import PhotoCovered, read_lone_photo, read_rack_photo
from vision.recognition.decode import PhotoError
from vision.recognition.detections import TileDetections
from vision.recognition.quality import PhotoUnfit


class ReadingFlow:
    """Table and rack readings (see the module notes); the game's lock, rows and listeners
    are `GameService`'s."""

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
        return self._refusing(lambda: read_lone_photo(self.reader, photo.photo))

    @staticmethod
    def _refusing(read):
        """`read()`, its refusals as answers: too poor to read or covered (422, with what to
        do), a photo whose finer decode fails (400)."""
        try:
            return read()
        except PhotoUnfit as error:
            raise GameError(unfit_message(error.problems), 422) from None
        except PhotoCovered as error:
            raise GameError(say("rack.covered" if error.rack else "photo.covered"),
                            422) from None
        except PhotoError as error:
            raise GameError(photo_message(str(error)), 400) from None

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
                                "around": tiles_around(d, (x, y))})
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
        return {"player": player, "tiles": codes_of(tiles), "rows": [codes_of(tiles)],
                "total": rack_penalty(tiles, self.rules(row)), "photo_id": None,
                "warnings": []}

    def rack_from_photo(self, game_id: str, player: str, photo: PhotoIn) -> dict:
        row = self.row(game_id)
        self._player(row, player)
        # the photo and the reader: a stand's tiles are cropped again (vision.game.back_tier)
        rack = self._refusing(lambda: read_rack_photo(self.reader, photo.photo, self.rules(row),
                                                      (photo.width, photo.height)))
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

    def photo(self, game_id: str, photo_id: str) -> tuple[bytes, str]:
        self.row(game_id)
        found = self.storage.photo(game_id, photo_id)
        if found is None:
            raise NotFound(say("photo.not_found", photo=repr(photo_id)))
        return found
