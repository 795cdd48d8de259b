"""The tournament hall's flow: a tournament, its players, its rounds seated by the
referee's seating functions, one game per table, the director's overrides and the
standings. Rules stay in `referee.tournament`; SQL in `hallstore.py`; no HTTP here.

Every result comes from the table's game (each round of play on its score sheet is one
tournament game) and from the audit log: a hand-entered result or a changed score is a log
entry with a reason, and the standings are recomputed from games plus log every time.
"""

from __future__ import annotations

import time

from app.server import hallexport, hallfinals, hallrulings
from app.server.games import BadInput, Conflict, GameError, GameService, NotFound
from app.server.hallstore import HallStore, Taken, TournamentRow
from app.server.messages import say
from referee.tournament import (
    Format,
    GameResult,
    Seating,
    seat_first_round,
    seat_next_round,
    seating_problems,
    standings,
    tournament_format,
)
from referee.tournament.rulings import recount

# Hall-wide turn timers: the presets a director picks from.
TIMER_PRESETS = {"40s": 40.0, "1min": 60.0, "2min": 120.0}
OVERRIDES = ("result", "score", "set-valid", "void-turn")
DIRECTOR = "director"


class HallService:
    def __init__(self, games: GameService, hub=None):
        self.games = games
        self.store = HallStore(games.storage)
        self.hub = hub  # the frame hub: which table's camera went quiet
        games.round_guard = self.round_refusal  # no game after a finals table is decided

    # -- a tournament ----------------------------------------------------------------------
    def create(self, name: str, format_name: str, switches: dict | None,
               timer: str) -> TournamentRow:
        fmt = self._format(format_name, switches)
        if timer not in TIMER_PRESETS:
            raise BadInput(say("tournament.timer", presets=", ".join(TIMER_PRESETS),
                               timer=repr(timer)))
        return self.store.create(name, fmt.to_dict(), {"timer": timer, "paused": False})

    @staticmethod
    def _format(name: str, switches: dict | None) -> Format:
        try:
            fmt = tournament_format(name)
            return fmt.replace(**(switches or {})) if switches else fmt
        except (ValueError, TypeError) as error:
            raise BadInput(say("tournament.format", error=str(error))) from None

    def row(self, tournament_id: str) -> TournamentRow:
        row = self.store.tournament(tournament_id)
        if row is None:
            raise NotFound(say("tournament.not_found", tournament=repr(tournament_id)))
        return row

    @staticmethod
    def fmt(row: TournamentRow) -> Format:
        return Format.from_dict(row.format)

    def register(self, tournament_id: str, names: list[str]) -> list[str]:
        self.row(tournament_id)
        names = [n.strip() for n in names]
        if any(not n for n in names) or len(set(names)) != len(names):
            raise BadInput(say("tournament.players"))
        if self.store.seatings(tournament_id):
            raise Conflict(say("tournament.registration_closed"))
        try:
            with self.games.storage.transaction() as db:
                self.store.add_players(db, tournament_id, names)
        except Taken as error:
            raise Conflict(say("tournament.registered", player=str(error))) from None
        return self.store.players(tournament_id)

    def change(self, tournament_id: str, timer: str | None = None,
               format_name: str | None = None, switches: dict | None = None) -> dict:
        """Hall-wide settings: the timer preset (for tables seated from now on), and the
        format and its switches (the edition among them) until round 1 is seated."""
        row = self.row(tournament_id)
        if timer is not None and timer not in TIMER_PRESETS:
            raise BadInput(say("tournament.timer", presets=", ".join(TIMER_PRESETS),
                               timer=repr(timer)))
        fmt = None
        if format_name is not None or switches is not None:
            if self.store.seatings(row.id):
                raise Conflict(say("tournament.format_fixed"))
            fmt = self._format(format_name or row.format["name"], switches)
        settings = {**row.settings, **({"timer": timer} if timer else {})}
        with self.games.storage.transaction() as db:
            self.store.save_settings(db, row.id, settings)
            if fmt is not None:
                self.store.save_format(db, row.id, fmt.to_dict())
            self.store.log(db, row.id, "settings", {"timer": settings["timer"], **(
                {"format": fmt.to_dict()} if fmt else {})}, "", DIRECTOR)
        return {"settings": settings, "format": (fmt.to_dict() if fmt else row.format)}

    # -- rounds ----------------------------------------------------------------------------
    def seatings(self, tournament_id: str) -> list[Seating]:
        """Every seated round, the finals' stages after the qualifying rounds."""
        return [Seating.from_dict(s) for s in self.store.seatings(tournament_id)]

    def seat(self, tournament_id: str, round_number: int, seating: dict | None = None,
             seed: str | None = None) -> Seating:
        """Seat round `round_number` (the next one) and make one game per table, all in
        one transaction. A given `seating` is checked for every problem first."""
        row = self.row(tournament_id)
        fmt = self.fmt(row)
        players = self.store.players(row.id)
        history = self.seatings(row.id)[:fmt.rounds]
        due = len(history) + 1
        if round_number < due:
            raise Conflict(say("tournament.round_seated", round=round_number))
        if round_number != due:
            raise Conflict(say("tournament.round_not_next", due=due, round=round_number))
        if round_number > fmt.rounds:
            raise Conflict(say("tournament.too_many_rounds", format=fmt.name, rounds=fmt.rounds))
        if history:
            missing = self.missing_results(row, history)
            if missing:
                raise Conflict(say("tournament.round_not_over", round=due - 1,
                                     missing="; ".join(missing)))
        if seating is not None:
            try:
                chosen = Seating.from_dict(seating)
            except ValueError as error:
                raise BadInput(say("tournament.seating", error=str(error))) from None
            problems = seating_problems(chosen, players, fmt, history)
            if problems:
                raise BadInput(say("tournament.seating", error="; ".join(problems)))
        else:
            try:
                if not history:
                    chosen = seat_first_round(players, fmt, seed or row.id)
                else:
                    ranking = [s.player for s in self.standings(row.id)]
                    chosen = seat_next_round(ranking, history, fmt, seed=seed or row.id)
            except ValueError as error:
                raise BadInput(say("tournament.seating_refused", error=str(error))) from None
        self._add_round(row, fmt, round_number, chosen, "seat", {})
        return chosen

    def seat_finals(self, tournament_id: str, stage: str) -> Seating:
        """Seat finals stage `stage` (the next one) from the standings or the semi-finals."""
        row = self.row(tournament_id)
        fmt = self.fmt(row)
        seatings = self.seatings(row.id)
        results = self.results(row.id)
        missing = hallfinals.missing(fmt, seatings, results) if seatings else []
        ranking = [s.player for s in self.standings(row.id)]
        chosen = hallfinals.seating_for(fmt, stage, seatings, ranking, results, missing)
        self._add_round(row, fmt, len(seatings) + 1, chosen, "finals", {"stage": stage})
        return chosen

    def _add_round(self, row: TournamentRow, fmt: Format, round_number: int, chosen: Seating,
                   kind: str, extra: dict) -> None:
        """The round's row, one game per table and the log entry, in one transaction."""
        seconds = TIMER_PRESETS[row.settings["timer"]]
        try:
            with self.games.storage.transaction() as db:
                self.store.add_round(db, row.id, round_number, {**chosen.to_dict(), **extra})
                for number, table in enumerate(chosen.tables, 1):
                    game = self.games.create(
                        list(table), fmt.edition, None, {"enabled": True, "seconds": seconds},
                        hall={"tournament": row.id, "round": round_number, "table": number},
                        db=db)
                    self.store.add_table(db, row.id, round_number, number, game.id)
                self.store.log(db, row.id, kind, {"round": round_number, **extra,
                                                  "seating": chosen.to_dict()}, "", DIRECTOR)
        except Taken:
            if kind == "finals":
                raise Conflict(say(hallfinals.SEATED[extra["stage"]])) from None
            raise Conflict(say("tournament.round_seated", round=round_number)) from None

    def round_refusal(self, game_row) -> str | None:
        """Why a tournament table may not start another game (None: it may): a finals
        table whose match is decided or whose games are all played."""
        hall = game_row.config.get("hall")
        row = self.store.tournament(hall["tournament"]) if hall else None
        if row is None or hall["round"] <= self.fmt(row).rounds:
            return None  # a qualifying table: no results to read
        return hallfinals.decided(self.fmt(row), self.seatings(row.id), self.results(row.id),
                                  hall["round"], hall["table"])

    def table_game(self, tournament_id: str, round_number: int, table: int) -> str:
        for rnd, number, game_id in self.store.tables(tournament_id):
            if (rnd, number) == (round_number, table):
                return game_id
        raise NotFound(say("tournament.no_table", round=round_number, table=table))

    # -- results and standings -------------------------------------------------------------
    def results(self, tournament_id: str) -> list[GameResult]:
        """Each table's games from its score sheet, counted again where a turn ruling came
        after the count, then the log's results and scores in order."""
        row = self.row(tournament_id)
        fmt = self.fmt(row)
        entries = self.store.entries(row.id)
        seatings = self.store.seatings(row.id)
        found: dict[tuple[int, int, int], dict[str, int]] = {}
        for rnd, table, game_id in self.store.tables(row.id):
            rulings = hallrulings.turn_entries(entries, rnd, table)
            verdicts = {v["turn"]: v for v in self.games.history(game_id)} if rulings else {}
            limit = hallfinals.game_limit(fmt, rnd) if rnd <= len(seatings) else 0
            for played in self.games.storage.rounds(game_id):
                if limit is not None and played["number"] > limit:
                    continue
                scores = dict(played["scores"])
                changes = hallrulings.changes_of(rulings, verdicts, played["number"])
                if changes:
                    rules = self.games.rules(self.games.row(game_id))
                    scores = recount(played["racks"], played["winner"], changes, rules).scores
                found[(rnd, table, played["number"])] = scores
        for entry in entries:
            body = entry["body"]
            if entry["kind"] == "result":
                found[(body["round"], body["table"], body["game"])] = dict(body["scores"])
            elif entry["kind"] == "score":
                key = (body["round"], body["table"], body["game"])
                if key in found:
                    found[key] = {**found[key], body["player"]: body["score"]}
        return [GameResult(r, t, g, scores) for (r, t, g), scores in sorted(found.items())]

    def missing_results(self, row: TournamentRow, seatings: list[Seating]) -> list[str]:
        """The games of the last seated round that have no result yet, by table."""
        return hallfinals.missing(self.fmt(row), seatings, self.results(row.id))

    def standings(self, tournament_id: str) -> list:
        """The qualifying rounds' standings (the finals rank their own tables)."""
        row = self.row(tournament_id)
        fmt = self.fmt(row)
        results = [r for r in self.results(row.id) if r.round <= fmt.rounds]
        return standings(results, fmt, self.seatings(row.id)[:fmt.rounds])

    def standings_json(self, tournament_id: str) -> dict:
        row = self.row(tournament_id)
        fmt = self.fmt(row)
        seatings = self.seatings(row.id)
        finals = hallfinals.view(fmt, seatings, self.results(row.id)) \
            if hallfinals.finals_stages(fmt) else None
        return {"tournament": row.id, "name": row.name, "format": fmt.name,
                "tie_breaks": list(fmt.tie_breaks), "round": min(len(seatings), fmt.rounds),
                "rounds": fmt.rounds,
                "stage": hallfinals.stage_of(fmt, len(seatings)) if seatings else "round",
                "seating": seatings[-1].to_dict() if seatings else None,
                "standings": [s.to_dict() for s in self.standings(row.id)],
                "finals": finals}

    # -- the director's overrides ----------------------------------------------------------
    def override(self, tournament_id: str, kind: str, body: dict, reason: str,
                 by: str = DIRECTOR) -> dict:
        """One override, checked, then appended to the audit log (never changed after)."""
        row = self.row(tournament_id)
        reason = (reason or "").strip()
        if not reason:
            raise BadInput(say("override.no_reason"))
        if kind not in OVERRIDES:
            raise BadInput(say("override.kind", kinds=", ".join(OVERRIDES), kind=repr(kind)))
        problems, body = self._override_problems(row, kind, body)
        if problems:
            raise problems[0][0]("; ".join(p for _, p in problems))
        entries = self.store.entries(row.id)
        with self.games.storage.transaction() as db:
            entry = self.store.log(db, row.id, kind, body, reason, by or DIRECTOR)
        out = {"id": entry, "kind": kind, "body": body, "reason": reason}
        if kind in hallrulings.TURN_RULINGS:
            game_id = self.table_game(row.id, body["round"], body["table"])
            out["effect"] = hallrulings.effect_words(
                self.games, game_id, entries + [{"id": entry, "kind": kind, "body": body}],
                body, kind)
        return out

    def _override_problems(self, row: TournamentRow, kind: str, body: dict
                           ) -> tuple[list[tuple[type[GameError], str]], dict]:
        """Every problem with an override, and the body to record (a turn ruling's with
        what the server found: whether the round was counted already)."""
        fmt = self.fmt(row)
        seatings = self.seatings(row.id)
        found: list[tuple[type[GameError], str]] = []
        for key in ("round", "table") + (("game",) if kind in ("result", "score") else ("turn",)):
            value = body.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                found.append((BadInput, f"{key}: a whole number 1 or more, not {value!r}"))
        if found:
            return found, body
        rnd, table = body["round"], body["table"]
        if rnd > len(seatings):
            return [(Conflict, f"round {rnd} is not seated")], body
        if table > len(seatings[rnd - 1].tables):
            return [(BadInput, f"round {rnd} has {len(seatings[rnd - 1].tables)} tables")], body
        seated = set(seatings[rnd - 1].tables[table - 1])
        limit = hallfinals.game_limit(fmt, rnd)
        if kind in ("result", "score") and limit is not None and body["game"] > limit:
            where = "a round" if rnd <= fmt.rounds else f"a {hallfinals.stage_of(fmt, rnd)} table"
            found.append((BadInput, f"game: {where} has {limit} games"))
        if kind == "result":
            why = hallfinals.decided(fmt, seatings, self.results(row.id), rnd, table,
                                     body["game"])
            if why:
                found.append((Conflict, str(why)))
        if kind == "result":
            if rnd != len(seatings):
                found.append((Conflict, f"round {rnd} is over: results go to round "
                                        f"{len(seatings)}, the one playing"))
            scores = body.get("scores")
            if not isinstance(scores, dict) or any(
                    isinstance(s, bool) or not isinstance(s, int) for s in scores.values()):
                found.append((BadInput, "scores: player name to a whole-number score"))
            elif set(scores) != seated:
                found.append((BadInput, f"scores: one for each player at table {table} "
                                        f"({', '.join(sorted(seated))})"))
        elif kind == "score":
            if body.get("player") not in seated:
                found.append((BadInput, f"player: one of {', '.join(sorted(seated))}"))
            score = body.get("score")
            if isinstance(score, bool) or not isinstance(score, int):
                found.append((BadInput, f"score: a whole number, not {score!r}"))
            have = {(r.round, r.table, r.game): r.scores for r in self.results(row.id)}
            key = (rnd, table, body["game"])
            if key not in have:
                found.append((Conflict, f"round {rnd} table {table} game {body['game']} has no "
                                        "result to change yet"))
            elif not found and have[key].get(body["player"]) == score:
                found.append((Conflict, f"{body['player']} has {score} in round {rnd} table "
                                        f"{table} game {body['game']} already; nothing changed"))
        else:
            game_id = self.table_game(row.id, rnd, table)
            turns = {t["turn"] for t in self.games.history(game_id)}
            if body["turn"] not in turns:
                found.append((NotFound, f"round {rnd} table {table} has no judged turn "
                                        f"{body['turn']}"))
        unknown = sorted(set(body) - {"round", "table", "game", "turn", "scores", "player",
                                      "score", "note", "set", "drawn"})
        if unknown:
            found.append((BadInput, f"unknown key {unknown[0]!r}"))
        if kind == "result" and not found:
            have = {(r.round, r.table, r.game): r.scores for r in self.results(row.id)}
            if have.get((rnd, table, body["game"])) == body["scores"]:
                found.append((Conflict, f"round {rnd} table {table} game {body['game']} has "
                                        "these scores already; nothing changed"))
        if kind in hallrulings.TURN_RULINGS and not found:
            return hallrulings.check(self.games, self.table_game(row.id, rnd, table),
                                     self.store.entries(row.id), kind, body)
        return found, body

    def log(self, tournament_id: str) -> list[dict]:
        self.row(tournament_id)
        return self.store.entries(tournament_id)

    # -- all tables at once ----------------------------------------------------------------
    def pause_all(self, tournament_id: str, paused: bool) -> dict:
        """Pause (or resume) the turn timer at every table of the round playing."""
        row = self.row(tournament_id)
        changed = []
        seatings = self.seatings(row.id)
        for rnd, number, game_id in self.store.tables(row.id):
            if rnd != len(seatings):
                continue
            try:
                self.games.timer_event(game_id, "pause" if paused else "resume")
                changed.append(number)
            except GameError:  # no turn running there, or already paused: nothing to do
                pass
        with self.games.storage.transaction() as db:
            self.store.save_settings(db, row.id, {**row.settings, "paused": paused})
            self.store.log(db, row.id, "pause" if paused else "resume", {"tables": changed},
                           "", DIRECTOR)
        return {"paused": paused, "tables": changed}

    def console(self, tournament_id: str) -> dict:
        """Every table of the round playing at a glance, and the call queue."""
        row = self.row(tournament_id)
        seatings = self.seatings(row.id)
        calls = self.store.calls(row.id)
        open_calls = {c["game_id"] for c in calls if c["answered_at"] is None}
        tables = []
        for rnd, number, game_id in self.store.tables(row.id):
            if rnd != len(seatings):
                continue
            view = self.games.view(game_id, with_tokens=True)
            turn = (view["round"] or {}).get("turn") or {}
            verdict = view["last_verdict"] or {}
            tables.append({
                "number": number, "game_id": game_id, "token": view["token"],
                "watch_token": view["watch_token"],
                "players": [p["name"] for p in view["players"]], "state": view["state"],
                "turn": turn.get("player"), "remaining_s": turn.get("remaining_s"),
                "paused": bool(turn.get("paused")), "last_verdict": view["last_verdict"],
                "flags": {"invalid_set": bool(verdict.get("invalid_sets")
                                              or verdict.get("preexisting_invalid")),
                          "timeout": bool(verdict.get("timed_out")),
                          "camera_lost": self._camera_lost(game_id, view["state"]),
                          "referee_called": game_id in open_calls},
                "games_played": len(view["sheet"]["rounds"]),
            })
        fmt = self.fmt(row)
        return {"tournament": row.id, "name": row.name, "round": len(seatings),
                "stage": hallfinals.stage_of(fmt, len(seatings)) if seatings else "round",
                "settings": row.settings, "tables": tables,
                "calls": [c for c in calls if c["answered_at"] is None]}

    def _camera_lost(self, game_id: str, state: str) -> bool:
        """A camera filmed the table and went quiet while the game plays."""
        gf = getattr(self.hub, "games", {}).get(game_id) if self.hub is not None else None
        if gf is None or state != "playing" or not gf.camera_seen:
            return False
        from app.server.frames import CAMERA_QUIET_S

        return time.monotonic() - gf.camera_seen >= CAMERA_QUIET_S

    # -- referee calls ---------------------------------------------------------------------
    def call(self, game_id: str) -> dict:
        """The table asks for the referee; the call carries the table's current picture."""
        game = self.games.row(game_id)
        hall = game.config.get("hall")
        if not hall:
            raise Conflict(say("referee.no_tournament"))
        if any(c["game_id"] == game_id and c["answered_at"] is None
               for c in self.store.calls(hall["tournament"])):
            raise Conflict(say("referee.called"))
        reading = self.games.storage.reading(game_id, game.state.get("latest_reading"))
        photo_id = reading.photo_id if reading is not None else None
        call_id = self.store.add_call(hall["tournament"], game_id, photo_id)
        return {"id": call_id, "table": hall["table"], "round": hall["round"],
                "photo_id": photo_id}

    def answer(self, tournament_id: str, call_id: int, answer: str) -> dict:
        self.row(tournament_id)
        answer = (answer or "").strip()
        if not answer:
            raise BadInput(say("referee.no_answer"))
        with self.games.storage.transaction() as db:
            if not self.store.answer_call(db, tournament_id, call_id, answer):
                raise Conflict(say("referee.answered", call=call_id))
            self.store.log(db, tournament_id, "call-answered", {"call": call_id}, answer,
                           DIRECTOR)
        return {"id": call_id, "answer": answer}

    # -- a disputed turn -------------------------------------------------------------------
    def dispute(self, tournament_id: str, round_number: int, table: int, turn: int) -> dict:
        """One turn: its verdict (with its before and after photos), and every override of it."""
        game_id = self.table_game(tournament_id, round_number, table)
        verdicts = [v for v in self.games.history(game_id) if v["turn"] == turn]
        if not verdicts:
            raise NotFound(say("tournament.no_turn", round=round_number, table=table,
                                     turn=turn))
        overrides = [e for e in self.store.entries(tournament_id)
                     if e["kind"] in ("set-valid", "void-turn")
                     and (e["body"]["round"], e["body"]["table"], e["body"]["turn"])
                     == (round_number, table, turn)]
        game = self.games.row(game_id)
        verdict = verdicts[0]
        # The readings carry each tile's corners and the sets: the console draws them
        # over the photos; corrections made by hand are in the game's state.
        readings = {side: self.games.storage.reading(game_id, verdict.get(f"{side}_reading"))
                    for side in ("before", "after")}
        return {"round": round_number, "table": table, "game_id": game_id,
                "watch_token": game.watch_token, "verdict": verdict,
                "readings": {k: r.reading if r else None for k, r in readings.items()},
                "corrections": game.state.get("corrections", []),
                "overrides": overrides,
                "voided": any(o["kind"] == "void-turn" for o in overrides),
                "ruled_valid": [o["body"]["set"] for o in overrides if o["kind"] == "set-valid"]}

    # -- exports (app/server/hallexport.py) ------------------------------------------------
    def export(self, tournament_id: str) -> dict:
        return hallexport.export(self, tournament_id)

    def standings_csv(self, tournament_id: str) -> str:
        return hallexport.standings_csv(self, tournament_id)

    def games_csv(self, tournament_id: str) -> str:
        return hallexport.games_csv(self, tournament_id)
