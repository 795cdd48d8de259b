"""The turn and its timer, exactly once: the countdown replayed from stored events, a call
for a turn that is no longer running refused with words, a timed-out turn judged by one
process, and the referee's judgement of a turn with its penalty (`TurnFlow`, part of
`app.server.games.GameService`)."""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np

from app.server.gamedata import (
    TURN_ID,
    codes_of,
    detections_from_bytes,
    detections_to_bytes,
    in_round,
    reading_json,
    tiles_of,
    turn_id,
)
from app.server.gameerrors import Conflict, NotFound
from app.server.hiddenshare import stored_ids
from app.server.messages import Message, say
from app.server.storage import GameRow
from referee import TurnTimer
from referee.reasons import reason_refs
from referee.timer import timeout_penalty
from vision.recognition.detections import TileDetections

log = logging.getLogger("rummikub.server")


class TurnFlow:
    """The running turn's timer and end (see the module notes); the game's lock, rows and
    listeners are `GameService`'s."""

    def _turn_view(self, row: GameRow) -> dict:
        turn = row.state["round"]["turn"]
        timer = self._timer(row)
        now = self.clock()
        remaining = timer.remaining()
        return {
            "id": turn_id(row.state),
            "number": turn["number"],
            "in_round": in_round(row.state["round"], turn["number"]),
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
            hidden = self.hidden_at_end(game_id, after_row, after)
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
                pen = timeout_penalty(tiles_of(judged.before), tiles_of(judged.after),
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
                "turn_in_round": in_round(state["round"], turn["number"]),
                "round": state["round"]["number"],
                "player": player,
                "legal": legal,
                "passed": passed,
                "timed_out": timed_out,
                "played": codes_of(v.played),
                "left_table": codes_of(v.left_table),
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
                "check_ids": reason_refs(judged.check),  # the page words them
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

    def hidden_at_end(self, game_id: str, row, detections: TileDetections) -> list[int]:
        """The tiles of reading `row` the game's camera does not see now: this process's
        own camera knows them first hand; else the camera's process stored them
        (`app.server.hiddenshare`), whichever process holds it."""
        if row is None:
            return []
        here = self.hidden_of(game_id, row.photo_id, row.id)
        if here is not None:
            return list(here)
        stored = stored_ids(self.storage.hidden(game_id, row.id), detections.codes)
        return stored or []

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
