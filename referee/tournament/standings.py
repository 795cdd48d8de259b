"""Standings: game results become tournament points, then the tie-breaks in the format's order.

A game's scores are the round scores of referee.scoring (the player who went out collects
what the others pay). The format turns each into tournament points: the raw score, or
points by place at the table (4/2/1/0; players on equal scores share the places' points).
Players level on tournament points are told apart by the format's tie-breaks, in order;
head-to-head only counts games among the players still level at that step.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from referee.tournament.format import Format
from referee.tournament.seating import Seating

__all__ = ["GameResult", "Standing", "standings", "results_problems", "game_points",
           "bye_points"]


@dataclass(frozen=True)
class GameResult:
    """One game at one table: `scores` maps each player at it to their game score."""

    round: int
    table: int
    game: int
    scores: Mapping[str, int]

    @property
    def winner(self) -> str | None:
        """The one highest score (who went out); None when the top is shared."""
        best = max(self.scores.values())
        top = [p for p, s in self.scores.items() if s == best]
        return top[0] if len(top) == 1 else None

    def to_dict(self) -> dict:
        return {"round": self.round, "table": self.table, "game": self.game,
                "scores": dict(self.scores)}

    @classmethod
    def from_dict(cls, data: dict) -> GameResult:
        if not isinstance(data, dict):
            raise ValueError("a game result is a JSON object")
        problems = []
        for key in ("round", "table", "game"):
            value = data.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{key}: a whole number 1 or more, not {value!r}")
        scores = data.get("scores")
        if not isinstance(scores, dict) or not scores or not all(
                isinstance(p, str) and isinstance(s, int) and not isinstance(s, bool)
                for p, s in scores.items()):
            problems.append("scores: an object of player name to whole-number score")
        unknown = sorted(set(data) - {"round", "table", "game", "scores"})
        if unknown:
            problems.append(f"unknown key {unknown[0]!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return cls(data["round"], data["table"], data["game"], dict(scores))


@dataclass(frozen=True)
class Standing:
    """One line of the standings; `tie_breaks` holds every tie-break's value, by name."""

    place: int
    player: str
    tournament_points: float
    games: int
    tie_breaks: dict[str, float | int | None] = field(default_factory=dict)
    # Rounds this player sat out (a bye), each scored by the format's `bye_points`.
    byes: int = 0

    def to_dict(self) -> dict:
        return {"place": self.place, "player": self.player,
                "tournament_points": _number(self.tournament_points), "games": self.games,
                "byes": self.byes,
                "tie_breaks": {k: _number(v) for k, v in self.tie_breaks.items()}}


def _number(value):
    return int(value) if isinstance(value, float) and value.is_integer() else value


def game_points(result: GameResult, fmt: Format) -> dict[str, float]:
    """Tournament points for one game: the raw scores, or place points shared on ties."""
    if fmt.game_points == "raw":
        return {p: float(s) for p, s in result.scores.items()}
    ordered = sorted(result.scores.values(), reverse=True)
    points = {}
    for player, score in result.scores.items():
        first = ordered.index(score)
        shared = fmt.place_points[first:first + ordered.count(score)]
        points[player] = sum(shared) / len(shared)
    return points


def bye_points(fmt: Format) -> float:
    """What a bye earns for each game of its round (Format.bye_points)."""
    if fmt.game_points == "raw":
        return 0.0  # a game's raw scores sum to 0: 0 is both the average and no game
    if fmt.bye_points == "win":
        return float(fmt.place_points[0])
    seats = fmt.place_points[:fmt.players_per_table]
    return sum(seats) / len(seats)


def standings(results: Iterable[GameResult], fmt: Format,
              seatings: Sequence[Seating] = ()) -> list[Standing]:
    """The standings after `results`; `seatings` (round 1 first) name byes and boards.

    A bye earns `bye_points(fmt)` for each game of its round. Players level on everything
    share a place.
    """
    results = list(results)
    players: list[str] = []
    for item in [p for s in seatings for p in s.players] + [
            p for r in results for p in r.scores]:
        if item not in players:
            players.append(item)
    points: dict[str, float] = defaultdict(float)
    raw: Counter = Counter()
    wins: Counter = Counter()
    games: Counter = Counter()
    by_round: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    mates: dict[str, list[tuple[int, tuple[str, ...]]]] = defaultdict(list)
    boards: dict[int, dict[str, int]] = defaultdict(dict)
    for result in results:
        earned = game_points(result, fmt)
        for player, score in result.scores.items():
            points[player] += earned[player]
            by_round[result.round][player] += earned[player]
            raw[player] += score
            games[player] += 1
            boards[result.round][player] = result.table
        if result.winner is not None:
            wins[result.winner] += 1
    byes: Counter = Counter()
    for number, seating in enumerate(seatings, 1):
        if seating.bye:
            byes[seating.bye] += 1
            points[seating.bye] += bye_points(fmt) * fmt.games_per_round
            by_round[number][seating.bye] += bye_points(fmt) * fmt.games_per_round
        for table_number, table in enumerate(seating.tables, 1):
            for player in table:
                boards[number].setdefault(player, table_number)
    # Opponents per round: from the results' tables (one entry per round and table).
    seen = set()
    for result in results:
        key = (result.round, result.table)
        if key in seen:
            continue
        seen.add(key)
        for player in result.scores:
            mates[player].append((result.round, tuple(p for p in result.scores if p != player)))
    last = max(by_round, default=0)
    values: dict[str, dict[str, float | int | None]] = {p: {} for p in players}
    for player in players:
        values[player]["points"] = raw[player]
        values[player]["wins"] = wins[player]
        values[player]["buchholz"] = _number(sum(points[o] for _, others in mates[player]
                                                 for o in others))
        values[player]["final-round-board"] = boards[last].get(player) if last else None
        values[player]["final-round-result"] = _number(by_round[last].get(player, 0.0)) \
            if last else None
        values[player]["head-to-head"] = 0

    groups = _split(sorted(players, key=lambda p: -points[p]), lambda p: points[p])
    for name in fmt.tie_breaks:
        refined = []
        for group in groups:
            if len(group) == 1:
                refined.append(group)
                continue
            if name == "head-to-head":
                h2h = _head_to_head(group, results)
                for player in group:
                    values[player]["head-to-head"] = h2h[player]
                key = h2h.get
            else:
                key = _sort_value(name, values)
            refined.extend(_split(sorted(group, key=lambda p, k=key: -k(p)), key))
        groups = refined
    table = []
    place = 1
    for group in groups:
        for player in sorted(group):
            table.append(Standing(place, player, _number(points[player]), games[player],
                                  values[player], byes[player]))
        place += len(group)
    return table


def _sort_value(name, values):
    """Higher is better for every tie-break but the final-round board (table 1 is best)."""
    if name == "final-round-board":
        return lambda p: -(values[p][name] or 10**6)
    return lambda p: values[p][name] if values[p][name] is not None else float("-inf")


def _split(ordered: list[str], key) -> list[list[str]]:
    groups: list[list[str]] = []
    for player in ordered:
        if groups and key(groups[-1][0]) == key(player):
            groups[-1].append(player)
        else:
            groups.append([player])
    return groups


def _head_to_head(group: list[str], results: list[GameResult]) -> dict[str, int]:
    """Per player: the others of `group` they finished above, minus those they finished
    below, over every game where they sat together."""
    members = set(group)
    score = dict.fromkeys(group, 0)
    for result in results:
        here = [p for p in result.scores if p in members]
        for player in here:
            for other in here:
                if other != player:
                    mine, theirs = result.scores[player], result.scores[other]
                    score[player] += (mine > theirs) - (mine < theirs)
    return score


def results_problems(results: Sequence[GameResult], seatings: Sequence[Seating],
                     fmt: Format) -> list[str]:
    """Every problem with a list of game results against the rounds' seatings: a game twice,
    a game number or round the format does not have, players not seated at that table."""
    found = []
    counts = Counter((r.round, r.table, r.game) for r in results)
    for (round_number, table, game), count in sorted(counts.items()):
        if count > 1:
            found.append(f"round {round_number} table {table} game {game} is entered "
                         f"{count} times")
    for result in results:
        where = f"round {result.round} table {result.table} game {result.game}"
        if result.game > fmt.games_per_round:
            found.append(f"{where}: a round has {fmt.games_per_round} games")
        if result.round > len(seatings):
            found.append(f"{where}: round {result.round} has no seating")
            continue
        tables = seatings[result.round - 1].tables
        if result.table > len(tables):
            found.append(f"{where}: round {result.round} has {len(tables)} tables")
            continue
        seated = set(tables[result.table - 1])
        if set(result.scores) != seated:
            missing = sorted(seated - set(result.scores))
            extra = sorted(set(result.scores) - seated)
            parts = ([f"no score for {', '.join(missing)}"] if missing else []) + (
                [f"{', '.join(extra)} not seated there"] if extra else [])
            found.append(f"{where}: {'; '.join(parts)}")
    return found
