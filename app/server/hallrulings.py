"""The director's rulings on a turn (`void-turn`, `set-valid`) on the server: checking one
against the turn's verdict and the rulings before it, and counting a table's games again
from the racks counted at their end. The rules are `referee.tournament.rulings`; the
records (verdicts, counted racks, the audit log) are never changed.

The table as photographed stays the table: no ruling moves a tile between table and
rack while play goes on (the next turn would be judged for it). The tiles a ruling sends
back on the rack or off it are counted when the round is: they change the racks counted at
its end. Drawn tiles are the exception: a ruling made while its round plays has the
player put them back in the pool at once, so the count does not take them off again; one
made after the count names those still on the rack (`drawn`). The server records which
case applied in the entry (`round_over`).
"""

from __future__ import annotations

from app.server.games import BadInput, Conflict, GameError, GameService
from referee.tiles import TileCodeError, parse_tiles
from referee.tournament.rulings import (
    RackChange,
    TurnRecord,
    recount,
    set_problems,
    set_valid_change,
    void_change,
)

TURN_RULINGS = ("set-valid", "void-turn")
Problems = list[tuple[type[GameError], str]]


def _where(body: dict) -> str:
    return f"round {body['round']} table {body['table']} turn {body['turn']}"


def turn_entries(entries: list[dict], rnd: int, table: int, turn: int | None = None) -> list:
    """The log's turn rulings of one table (of one turn), oldest first."""
    return [e for e in entries if e["kind"] in TURN_RULINGS
            and (e["body"]["round"], e["body"]["table"]) == (rnd, table)
            and (turn is None or e["body"]["turn"] == turn)]


def _codes(value, key: str, found: Problems) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        found.append((BadInput, f"{key}: a list of tile codes such as [\"R5\", \"J\"]"))
        return None
    try:
        return [t.code() for t in parse_tiles(value)]
    except TileCodeError as error:
        found.append((BadInput, f"{key}: {error}"))
        return None


def _drawn_of(entry: dict) -> list[str]:
    return list(entry["body"].get("drawn") or [])


def changes_of(entries: list[dict], verdicts: dict[int, dict],
               game_round: int) -> list[tuple[RackChange, list[str]]]:
    """The rack changes the rulings make to `game_round`'s count, in log order."""
    changes = []
    ruled: dict[int, list[list[str]]] = {}
    for entry in entries:
        body = entry["body"]
        verdict = verdicts.get(body["turn"])
        if verdict is None or verdict["round"] != game_round:
            continue
        record = TurnRecord.from_verdict(verdict)
        if entry["kind"] == "void-turn":
            change = void_change(record)
        else:
            before = set_valid_change(record, ruled.get(body["turn"], []))
            ruled.setdefault(body["turn"], []).append(body["set"])
            change = None if before else set_valid_change(record, ruled[body["turn"]])
        if change is not None and not body.get("round_over"):
            # The drawn tiles went back to the pool at the table, before the count.
            change = RackChange(change.player, change.onto_rack, change.off_rack, 0)
        if change is not None and not change.empty:
            changes.append((change, _drawn_of(entry)))
    return changes


def check(games: GameService, game_id: str, entries: list[dict], kind: str,
          body: dict) -> tuple[Problems, dict]:
    """Every problem with a ruling on a judged turn, and (when none) the body to record:
    the director's, with `round_over` and the tiles as codes."""
    found: Problems = []
    verdicts = {v["turn"]: v for v in games.history(game_id)}
    verdict = verdicts[body["turn"]]
    record = TurnRecord.from_verdict(verdict)
    earlier = turn_entries(entries, body["round"], body["table"], body["turn"])
    void = next((e for e in earlier if e["kind"] == "void-turn"), None)
    ruled = [e["body"]["set"] for e in earlier if e["kind"] == "set-valid"]
    tiles = _codes(body.get("set"), "set", found)
    drawn = _codes(body.get("drawn"), "drawn", found)
    if void is not None:
        found.append((Conflict, f"{_where(body)} is already void (log entry {void['id']}); "
                                "nothing changed"))
        return found, body
    if kind == "void-turn":
        if ruled:
            found.append((Conflict, f"{_where(body)} has a set ruled valid already: voiding it "
                                    "would undo its penalty twice; nothing changed"))
        if body.get("set") is not None:
            found.append((BadInput, "set: only for set-valid"))
        change = void_change(record)
    else:
        if body.get("set") is None:
            found.append((BadInput, "set: the tiles of the set ruled valid, as codes"))
        elif tiles is not None:
            for problem in set_problems(record, tiles, ruled):
                found.append((Conflict if "already" in problem else BadInput, problem))
        change = set_valid_change(record, ruled + [tiles]) if tiles is not None else None
    if found:
        return found, body
    counted = {r["number"]: r for r in games.storage.rounds(game_id)}
    game_round = counted.get(verdict["round"])
    stored = {**body, "round_over": game_round is not None}
    if tiles is not None:
        stored["set"] = tiles
    if drawn is not None:
        stored["drawn"] = drawn
    if game_round is None or change is None or change.empty:
        if drawn:
            found.append((BadInput, "drawn: only when the ruling takes drawn tiles off a rack "
                                    "already counted"))
        return found, stored
    if change.draws_back and drawn is None:
        found.append((BadInput, f"{record.player} drew {change.draws_back} tile(s) in turn "
                                f"{record.turn}, and round {verdict['round']} is counted: name "
                                "those still on the rack at the count (drawn, [] for none) "
                                "to take them off it"))
        return found, stored
    row = games.row(game_id)
    before = changes_of(turn_entries(entries, body["round"], body["table"]), verdicts,
                        verdict["round"])
    try:
        recount(game_round["racks"], game_round["winner"],
                before + [(change, drawn or [])], games.rules(row))
    except ValueError as error:
        found.append((BadInput, str(error)))
    return found, stored


def effect_words(games: GameService, game_id: str, entries: list[dict], body: dict,
                 kind: str) -> str:
    """What the ruling does, in a line for the director."""
    verdicts = {v["turn"]: v for v in games.history(game_id)}
    record = TurnRecord.from_verdict(verdicts[body["turn"]])
    if kind == "void-turn":
        change = void_change(record)
    else:
        earlier = turn_entries(entries, body["round"], body["table"], body["turn"])
        ruled = [e["body"]["set"] for e in earlier if e["kind"] == "set-valid"]
        change = set_valid_change(record, ruled)
        if change is None:
            return (f"the set is ruled valid; {record.player}'s turn {record.turn} still does "
                    "not stand (another problem is left), so its penalty stays")
    if change.empty:
        return f"turn {record.turn} changes no rack: nothing to count again"
    if body.get("round_over"):
        return (f"round {verdicts[body['turn']]['round']} of the table is counted again "
                "from its racks with this ruling")
    moves = []
    if change.draws_back:
        moves.append(f"{record.player} puts the {change.draws_back} tile(s) drawn back in the "
                     "pool now")
    counted = []
    if change.onto_rack:
        counted.append(f"{' '.join(change.onto_rack)} as on {record.player}'s rack")
    if change.off_rack:
        counted.append(f"{' '.join(change.off_rack)} as off {record.player}'s rack")
    if counted:
        moves.append("the tiles stay where they are, and the round's count takes "
                     + " and ".join(counted))
    return "; ".join(moves)
