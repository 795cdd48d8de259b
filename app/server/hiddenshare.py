"""The tiles a camera does not see, known to every server process.

Only the process holding a table's camera socket knows which tiles of the stable reading
its latest frame did not show (under a hand). End turn may reach any process sharing the
database, and after a crash the phone reconnects to another one: so the camera's process
stores them with the reading (`Storage.set_hidden`, table `reading_hidden`) whenever they
change, and a turn is judged with the stored ones (`GameService.hidden_at_end`).

A still table writes nothing: a row is written only when the reading or its hidden tiles
change (a hand coming or going), not per frame.
"""

from __future__ import annotations

import logging

from vision.recognition.labels import code_from_json

log = logging.getLogger("rummikub.server")


def hidden_tiles(reading: dict, hidden: list[int]) -> list[dict]:
    """The hidden tiles of `reading` as stored: id, code, and corners where the camera
    last placed them."""
    tiles = reading.get("tiles") or []
    return [{"id": int(k), "code": code_from_json(tiles[k]), "corners": tiles[k]["corners"]}
            for k in hidden if 0 <= k < len(tiles)]


def stored_ids(stored: list[dict] | None, codes: list[str]) -> list[int] | None:
    """The reading's tile ids named hidden in `stored` (None: nothing stored), kept only
    where the reading's code there agrees."""
    if stored is None:
        return None
    return sorted({int(t["id"]) for t in stored
                   if 0 <= int(t["id"]) < len(codes) and codes[int(t["id"])] == t["code"]})


class HiddenShare:
    """Writes a camera's hidden tiles to the database when they change (one per game)."""

    def __init__(self, storage):
        self.storage = storage
        self._told: dict[str, tuple] = {}  # game -> (reading id, hidden ids) stored last

    def tell(self, game_id: str, reading: dict | None, hidden: list[int]) -> bool:
        """From a reader thread, after a frame: its reading's hidden tiles, stored if new.
        Whether a row was written."""
        if not reading or reading.get("reading_id") is None:
            return False
        key = (int(reading["reading_id"]), tuple(hidden))
        if self._told.get(game_id) == key:
            return False
        try:
            self.storage.set_hidden(game_id, key[0], hidden_tiles(reading, hidden))
        except Exception as error:  # a full disk, a lost database: the next change retries
            log.warning("the hidden tiles of game %s were not stored: %s", game_id, error)
            return False
        self._told[game_id] = key
        return True
