"""Finals: who plays the semi-finals and the final table, and "first to N wins" matches.

Seeding follows the Belgian club format: the top 8 split over two semi-finals, places
1,3,5,7 and 2,4,6,8, so the two leaders meet only in the final; the best two of each
semi-final make the final table of 4. A final table may play to N game wins (the Dutch
championship final plays to 4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from referee.tournament.format import Format
from referee.tournament.standings import GameResult, Standing, standings

__all__ = ["finals_seeding", "final_table", "Match", "finals_stages", "table_ranking",
           "match_of"]


def finals_stages(fmt: Format) -> list[str]:
    """The finals' stages after the qualifying rounds, in order: none, one final table, or
    the semi-finals and then the final."""
    return {0: [], 4: ["final"], 8: ["semi-final", "final"]}[fmt.finals.size]


def table_ranking(results: Sequence[GameResult], seeds: Sequence[str],
                  fmt: Format) -> list[str]:
    """One finals table's ranking over its games summed (tournament points, then the
    format's tie-breaks); players level on all of them by their seed (the better
    qualifier first)."""
    lines = standings(results, fmt)
    place = {s.player: s.place for s in lines}
    worst = len(seeds) + 1
    return sorted(seeds, key=lambda p: (place.get(p, worst), seeds.index(p)))


def match_of(results: Sequence[GameResult], players: Sequence[str], wins_needed: int) -> Match:
    """A first-to-N match from a table's games in order; a game after the match was
    decided does not count (the server refuses one)."""
    match = Match(tuple(players), wins_needed)
    for result in sorted(results, key=lambda r: r.game):
        if match.over:
            break
        match = match.add_game(result.winner)
    return match


def finals_seeding(ranking: Sequence[Standing] | Sequence[str], fmt: Format) -> list[list[str]]:
    """The finals' first tables: [] for no finals, one table of the top 4, or the two
    semi-final tables of the top 8 (places 1,3,5,7 and 2,4,6,8)."""
    names = [s.player if isinstance(s, Standing) else s for s in ranking]
    size = fmt.finals.size
    if not size:
        return []
    if len(names) < size:
        raise ValueError(f"finals of {size} need {size} ranked players, not {len(names)}")
    top = names[:size]
    if size == 4:
        return [top]
    return [top[0::2], top[1::2]]


def final_table(semi_rankings: Sequence[Sequence[str]], fmt: Format) -> list[str]:
    """The final table from the two semi-finals' rankings: the best `advance` of each,
    semi-final 1's winner first."""
    if len(semi_rankings) != 2:
        raise ValueError(f"two semi-finals feed the final, not {len(semi_rankings)}")
    advance = fmt.finals.advance
    seats = []
    for place in range(advance):
        for ranking in semi_rankings:
            if len(ranking) <= place:
                raise ValueError(f"a semi-final ranking has {len(ranking)} players; "
                                 f"{advance} advance")
            seats.append(ranking[place])
    return seats


@dataclass(frozen=True)
class Match:
    """A "first to `wins_needed` game wins" table; `games` lists each game's winner
    (None for a game nobody won outright). A value: `add_game` returns a new Match."""

    players: tuple[str, ...]
    wins_needed: int
    games: tuple[str | None, ...] = ()

    @property
    def wins(self) -> dict[str, int]:
        counted = Counter(w for w in self.games if w is not None)
        return {p: counted[p] for p in self.players}

    @property
    def winner(self) -> str | None:
        """Who reached `wins_needed` first; None while the match goes on."""
        counted: Counter = Counter()
        for game_winner in self.games:
            if game_winner is None:
                continue
            counted[game_winner] += 1
            if counted[game_winner] >= self.wins_needed:
                return game_winner
        return None

    @property
    def over(self) -> bool:
        return self.winner is not None

    def problems_with(self, game_winner: str | None) -> list[str]:
        """Why a game won by `game_winner` cannot be added (empty: it can)."""
        found = []
        if self.over:
            found.append(f"the match is over: {self.winner} has {self.wins_needed} wins; "
                         f"no further game counts")
        if game_winner is not None and game_winner not in self.players:
            found.append(f"{game_winner} does not play at this table "
                         f"({', '.join(self.players)})")
        return found

    def add_game(self, game_winner: str | None) -> Match:
        """This match with one more game; raises ValueError (and changes nothing) when the
        match is over or the winner is not at the table."""
        found = self.problems_with(game_winner)
        if found:
            raise ValueError("; ".join(found))
        return Match(self.players, self.wins_needed, self.games + (game_winner,))

    def to_dict(self) -> dict:
        return {"players": list(self.players), "wins_needed": self.wins_needed,
                "games": list(self.games), "wins": self.wins, "winner": self.winner}

    @classmethod
    def from_dict(cls, data: dict) -> Match:
        if not isinstance(data, dict):
            raise ValueError("a match is a JSON object")
        match = cls(tuple(data.get("players", ())), data.get("wins_needed", 0))
        if len(match.players) < 2 or len(set(match.players)) != len(match.players):
            raise ValueError("a match has two or more players with different names")
        if isinstance(match.wins_needed, bool) or not isinstance(match.wins_needed, int) \
                or match.wins_needed < 1:
            raise ValueError("wins_needed: a whole number 1 or more")
        for game_winner in data.get("games", ()):
            match = match.add_game(game_winner)
        return match
