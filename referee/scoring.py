"""Scoring a round and a game (RULES.md section 8, pool-empty rule of section 10)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from referee.editions import DEFAULT_RULES, Rules
from referee.tiles import Tile

__all__ = ["rack_penalty", "RoundResult", "score_round", "ScoreSheet"]


def rack_penalty(tiles: Iterable[Tile], rules: Rules | None = None, *,
                 melded: bool = True) -> int:
    """What the tiles left on a rack cost: their numbers, a joker 25, 30 or 50 by edition.

    `melded=False` (the player never made the initial meld): editions with a no-meld
    penalty charge it instead, the higher one when the rack held a valid initial meld.
    """
    rules = rules or DEFAULT_RULES
    tiles = list(tiles)
    if not melded and rules.no_meld_penalty:
        # Imported here: the meld search imports the solver, which scoring need not load.
        from referee.meld import best_initial_meld

        could = rules.no_meld_penalty_if_meld_possible and best_initial_meld(tiles, rules).reaches
        return rules.no_meld_penalty_if_meld_possible if could else rules.no_meld_penalty
    return sum(rules.rack_joker_penalty if t.is_joker else t.number for t in tiles)


@dataclass(frozen=True)
class RoundResult:
    """Scores of one round; `winner` is None when equal lowest racks left nobody winning."""

    scores: dict[str, int]
    winner: str | None
    rack_totals: dict[str, int] = field(default_factory=dict)
    pool_empty: bool = False


def score_round(racks: Mapping[str, Sequence[Tile]], winner: str | None,
                rules: Rules | None = None, *, never_melded: Iterable[str] = ()) -> RoundResult:
    """Score a round from every player's rack at its end.

    With a winner (who laid their last tile), each loser scores minus their rack and the
    winner the sum. With `winner=None` the pool ran out: the lowest rack total wins; losers
    pay the difference to it (or their full total, per edition) and the winner collects.
    Equal lowest totals mean no winner: everyone still pays, nobody collects.
    Players in `never_melded` pay the edition's no-meld penalty where it has one.
    """
    rules = rules or DEFAULT_RULES
    if not racks:
        raise ValueError("a round needs at least one player")
    never_melded = set(never_melded)
    strangers = sorted(never_melded - set(racks))
    if strangers:
        raise ValueError(f"never_melded names {', '.join(strangers)}, who did not play")
    if winner is not None and winner in never_melded:
        raise ValueError(f"winner {winner!r} laid every tile, so made the initial meld")
    totals = {name: rack_penalty(tiles, rules, melded=name not in never_melded)
              for name, tiles in racks.items()}
    if winner is not None:
        if winner not in racks:
            raise ValueError(f"winner {winner!r} is not one of the players: {', '.join(racks)}")
        if racks[winner]:
            raise ValueError(f"winner {winner!r} still has tiles on the rack; the round ends "
                             f"when a player lays their last tile")
        scores = {name: -total for name, total in totals.items()}
        scores[winner] = sum(totals.values())
        return RoundResult(scores, winner, totals, False)

    lowest = min(totals.values())
    lowest_players = [name for name, total in totals.items() if total == lowest]
    full = rules.pool_empty_scoring == "full"
    scores = {name: -(total if full else total - lowest) for name, total in totals.items()}
    if len(lowest_players) > 1:
        # Equal lowest totals: no winner (section 10).
        return RoundResult(scores, None, totals, True)
    best = lowest_players[0]
    scores[best] = sum(-score for name, score in scores.items() if name != best)
    return RoundResult(scores, best, totals, True)


def _names(names: Sequence[str]) -> str:
    """"Ann", "Ann and Ben", "Ann, Ben and Cas": players named as people write them."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class ScoreSheet:
    """Rounds of scores per player with running totals; the highest total leads."""

    def __init__(self, players: Sequence[str]):
        if len(set(players)) != len(players) or not players:
            raise ValueError("a score sheet needs one or more players with different names")
        self.players = list(players)
        self.rounds: list[dict[str, int]] = []

    def add_round(self, result: RoundResult | Mapping[str, int]) -> None:
        scores = dict(result.scores if isinstance(result, RoundResult) else result)
        if set(scores) != set(self.players):
            missing = [name for name in self.players if name not in scores]
            extra = [name for name in scores if name not in self.players]
            parts = ([f"{_names(extra)} {'is' if len(extra) == 1 else 'are'} not on it"]
                     if extra else []) + ([f"{_names(missing)} did not play this round"]
                                          if missing else [])
            raise ValueError(f"the sheet's players are {_names(self.players)}: "
                             + "; ".join(parts))
        self.rounds.append({name: scores[name] for name in self.players})

    @property
    def totals(self) -> dict[str, int]:
        return {name: sum(r[name] for r in self.rounds) for name in self.players}

    @property
    def leader(self) -> str | None:
        """The player with the highest total; None before any round or when tied."""
        if not self.rounds:
            return None
        totals = self.totals
        best = max(totals.values())
        leaders = [name for name, total in totals.items() if total == best]
        return leaders[0] if len(leaders) == 1 else None

    def to_csv(self) -> str:
        """`player,round 1,...,total`, one row per player, like the sheet in the rules."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["player"] + [f"round {i}" for i in range(1, len(self.rounds) + 1)]
                        + ["total"])
        totals = self.totals
        for name in self.players:
            writer.writerow([name] + [r[name] for r in self.rounds] + [totals[name]])
        return out.getvalue()

    @classmethod
    def from_csv(cls, text: str) -> ScoreSheet:
        rows = [row for row in csv.reader(io.StringIO(text)) if row]
        if not rows or rows[0][0].strip().lower() != "player":
            raise ValueError("a score sheet starts with a header row 'player,round 1,...,total'")
        header = [cell.strip().lower() for cell in rows[0]]
        has_total = header[-1] == "total"
        round_count = len(header) - 1 - has_total
        sheet = cls([row[0] for row in rows[1:]])
        try:
            columns = [[int(row[1 + i]) for row in rows[1:]] for i in range(round_count)]
        except (ValueError, IndexError):
            raise ValueError("every score on the sheet is a whole number") from None
        for column in columns:
            sheet.add_round(dict(zip(sheet.players, column, strict=True)))
        if has_total:
            for row in rows[1:]:
                # A written total that disagrees with its rounds is a mistake on the sheet.
                if int(row[-1]) != sheet.totals[row[0]]:
                    raise ValueError(f"{row[0]}'s total {row[-1]} is not the sum of the rounds "
                                     f"({sheet.totals[row[0]]})")
        return sheet
