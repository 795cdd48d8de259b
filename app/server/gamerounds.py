"""Games, rounds and scores: a new game from its players and settings, the view every
phone polls, a round begun, counted and scored, the game finished, its history and score
sheet (`RoundFlow`, part of `app.server.games.GameService`)."""

from __future__ import annotations

from app.server.gamedata import codes_of, rules_to_json, rules_with, verdict_out
from app.server.gameerrors import BadInput, Conflict
from app.server.messages import say
from app.server.storage import GameRow
from referee import ScoreSheet, TileCodeError, parse_tiles, score_round

RACK_START = 14  # tiles each player draws at the start of a round (RULES.md section 3)
EXTENSION_SECONDS = 30.0  # what one "more time" adds to a turn


class RoundFlow:
    """Creating, viewing, rounds and scores (see the module notes); the game's lock, rows and
    listeners are `GameService`'s."""

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
            "last_verdict": verdict_out(state.get("last_verdict")),
            "sheet": self._sheet_json(sheet, rounds),
            "server_time": self.clock(),
            "hall": config.get("hall"),
        }
        if with_tokens:
            out["token"] = row.token
            out["watch_token"] = row.watch_token
        return out

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
                      "racks": {n: codes_of(t) for n, t in parsed.items()}}
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

    # -- history, sheet, photos ------------------------------------------------------------
    def history(self, game_id: str) -> list[dict]:
        self.row(game_id)
        return [verdict_out(v) for v in self.storage.turns(game_id)]

    def sheet_csv(self, game_id: str) -> str:
        row = self.row(game_id)
        return self._sheet(row.config["players"], self.storage.rounds(game_id)).to_csv()
