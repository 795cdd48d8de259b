"""The finals on the server: after the qualifying rounds the director seats the format's
finals stages (the semi-finals 1,3,5,7 / 2,4,6,8 and then the final table, or a final
table of the top 4). Each stage is stored as one more round after the qualifying ones, its
tables games like any other (table sheets, QR codes, the console). A semi-final sums its
games; the final plays to N game wins (`Finals.wins_needed`) or sums its games. The rules
are `referee.tournament.finals`; no HTTP here.
"""

from __future__ import annotations

from app.server.games import BadInput, Conflict
from app.server.messages import Message, say
from referee.tournament import (
    Format,
    GameResult,
    Seating,
    final_table,
    finals_seeding,
    finals_stages,
    game_points,
    match_of,
    table_ranking,
)

SEATED = {"semi-final": "finals.semis_seated", "final": "finals.final_seated"}


def stage_of(fmt: Format, round_number: int) -> str:
    """"round" for a qualifying round, else the finals stage the round holds."""
    if round_number <= fmt.rounds:
        return "round"
    return finals_stages(fmt)[round_number - fmt.rounds - 1]


def game_limit(fmt: Format, round_number: int) -> int | None:
    """How many games a table of this round plays; None for a final played to N wins."""
    stage = stage_of(fmt, round_number)
    if stage == "round":
        return fmt.games_per_round
    if stage == "final" and fmt.finals.wins_needed:
        return None
    return fmt.finals.games


def table_results(results: list[GameResult], round_number: int, table: int) -> list:
    return [r for r in results if (r.round, r.table) == (round_number, table)]


def table_state(fmt: Format, round_number: int, table: int, players: tuple[str, ...],
                results: list[GameResult]) -> dict:
    """One finals table: its games, points or wins, its ranking and whether it is done."""
    mine = table_results(results, round_number, table)
    out = {"table": table, "players": list(players), "games": len(mine)}
    limit = game_limit(fmt, round_number)
    if limit is None:
        match = match_of(mine, players, fmt.finals.wins_needed)
        counted = len(match.games)
        wins = match.wins
        ranking = sorted(players, key=lambda p: (-wins[p], players.index(p)))
        out.update(wins=wins, wins_needed=fmt.finals.wins_needed, games=counted,
                   done=match.over, ranking=ranking if match.over else None,
                   winner=match.winner)
        return out
    ranking = table_ranking(mine, players, fmt)
    done = len(mine) >= limit
    points = dict.fromkeys(players, 0.0)
    for result in mine:
        for player, earned in game_points(result, fmt).items():
            points[player] += earned
    out.update(points={p: int(v) if v.is_integer() else v for p, v in points.items()},
               games_needed=limit, done=done, ranking=ranking if done else None,
               winner=ranking[0] if done else None)
    return out


def view(fmt: Format, seatings: list[Seating], results: list[GameResult]) -> dict:
    """The finals as the console and the big screen show them."""
    stages = []
    for number in range(fmt.rounds + 1, len(seatings) + 1):
        tables = [table_state(fmt, number, t, players, results)
                  for t, players in enumerate(seatings[number - 1].tables, 1)]
        stages.append({"stage": stage_of(fmt, number), "round": number, "tables": tables})
    last = stages[-1] if stages else None
    champion = None
    if last and last["stage"] == "final" and last["tables"][0]["done"]:
        champion = last["tables"][0]["winner"]
    return {"stages": finals_stages(fmt), "seated": stages, "winner": champion,
            "next": _next_stage(fmt, seatings)}


def _next_stage(fmt: Format, seatings: list[Seating]) -> str | None:
    stages = finals_stages(fmt)
    done = max(0, len(seatings) - fmt.rounds)
    return stages[done] if done < len(stages) else None


def seating_for(fmt: Format, stage: str, seatings: list[Seating], ranking: list[str],
                results: list[GameResult], missing: list[str]) -> Seating:
    """The tables of finals stage `stage`, checked: the qualifying rounds (or the
    semi-finals) must be over, and a stage is seated once. Conflict or BadInput with
    words otherwise."""
    stages = finals_stages(fmt)
    if not stages:
        raise Conflict(say("finals.none", format=fmt.name))
    if stage not in stages:
        raise BadInput(say("finals.stage", stages=", ".join(stages), stage=repr(stage)))
    index = stages.index(stage)
    seated = len(seatings) - fmt.rounds
    if seated > index:
        raise Conflict(say(SEATED[stage]))
    if len(seatings) < fmt.rounds:
        raise Conflict(say("finals.too_early", rounds=fmt.rounds, seated=len(seatings)))
    if seated < index:
        raise Conflict(say("finals.semis_first"))
    if missing and index:
        raise Conflict(say("finals.semis_not_over", missing="; ".join(missing)))
    if missing:
        raise Conflict(say("tournament.round_not_over", round=fmt.rounds,
                           missing="; ".join(missing)))
    if len(ranking) < fmt.finals.size:
        raise Conflict(say("finals.too_few", size=fmt.finals.size, count=len(ranking)))
    if index == 0:
        tables = finals_seeding(ranking, fmt)
    else:
        semis = seatings[-1].tables
        rankings = [table_state(fmt, len(seatings), t, players, results)["ranking"]
                    for t, players in enumerate(semis, 1)]
        tables = [final_table(rankings, fmt)]
    return Seating(tuple(tuple(t) for t in tables), None)


def missing(fmt: Format, seatings: list[Seating], results: list[GameResult]) -> list[str]:
    """The tables of the last seated round that are not over, with how far they are."""
    number = len(seatings)
    found = []
    for table, players in enumerate(seatings[-1].tables, 1):
        limit = game_limit(fmt, number)
        if limit is None:
            state = table_state(fmt, number, table, players, results)
            if not state["done"]:
                found.append(f"table {table} plays to {fmt.finals.wins_needed} wins")
            continue
        have = {r.game for r in table_results(results, number, table) if r.game <= limit}
        if len(have) < limit:
            found.append(f"table {table} has {len(have)} of {limit} games")
    return found


def decided(fmt: Format, seatings: list[Seating], results: list[GameResult],
            round_number: int, table: int, game: int | None = None) -> Message | None:
    """Why no further game counts at a finals table (None: it still plays): its match is
    decided, or its games are all played. `game`: the game a result names."""
    if stage_of(fmt, round_number) == "round" or round_number > len(seatings):
        return None
    players = seatings[round_number - 1].tables[table - 1]
    state = table_state(fmt, round_number, table, players, results)
    if "wins" in state:
        if state["done"] and (game is None or game > state["games"]):
            return say("finals.decided", player=state["winner"], wins=fmt.finals.wins_needed)
        return None
    if game is None and state["done"]:
        return say("finals.games_played", games=state["games_needed"])
    return None
