"""The director's rulings on a judged turn and what they do to a game's count.

A ruling never edits history: the turn's verdict and the racks counted at the round's end
stay as they were stored, and the round's scores are counted again from those racks with
every ruling's change applied (docs/tournament-hall.md, "Overrides that count").

- Void a turn: it counts as "nothing happened". The tiles it laid that stayed on the table
  go back on the player's rack, and the tiles it drew (a pass, a penalty, a timeout) come
  off it. The table as photographed stays the table: later turns are not judged again.
- Rule a set valid: the director's word for one of the turn's invalid sets. When every
  problem of the turn was an invalid set and each is ruled valid, the turn stands: its
  penalty is undone (the tiles sent back go to the table, the drawn tiles back to the
  pool); a timed-out turn keeps its draw, for the time ran out either way.

Drawn tiles were never photographed, so undoing a draw in a round already counted needs
the player to name the drawn tiles still on the rack at the count (none or fewer when they
were laid later: those are on the table either way); they come off the counted rack.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from referee.editions import Rules
from referee.scoring import RoundResult, score_round
from referee.tiles import Tile, parse_tiles

__all__ = ["TurnRecord", "RackChange", "void_change", "set_valid_change", "unruled_sets",
           "recount"]

SET_PROBLEM = "turn.set_invalid"


@dataclass(frozen=True)
class TurnRecord:
    """What a judged turn did, as tile codes: the server's verdict in a few fields."""

    turn: int
    player: str
    played: tuple[str, ...] = ()
    tiles_back: tuple[str, ...] = ()  # the penalty's tiles sent back to the rack
    draws: int = 0
    timed_out: bool = False
    invalid_sets: tuple[tuple[str, ...], ...] = ()
    # Problems that are not an invalid set (a short initial meld, a tile gone from the
    # table): ruling sets valid cannot make such a turn stand.
    other_problems: tuple[str, ...] = ()

    @property
    def penalised(self) -> bool:
        return bool(self.tiles_back) or (bool(self.invalid_sets) and self.draws > 0)

    @classmethod
    def from_verdict(cls, verdict: Mapping) -> TurnRecord:
        penalty = verdict.get("penalty") or {}
        ids = [p.get("id") for p in verdict.get("problem_ids") or []]
        words = list(verdict.get("problems") or [])
        other = tuple(w for w, i in zip(words, ids, strict=False) if i != SET_PROBLEM)
        return cls(int(verdict["turn"]), str(verdict["player"]),
                   tuple(verdict.get("played") or ()),
                   tuple(t["code"] for t in penalty.get("tiles_back") or ()),
                   int(verdict.get("draws") or 0), bool(verdict.get("timed_out")),
                   tuple(tuple(s["tiles"]) for s in verdict.get("invalid_sets") or ()), other)


@dataclass(frozen=True)
class RackChange:
    """One ruling's change to one player's counted rack: tiles back on it, tiles off it
    (sent to the table), and how many drawn tiles come off it (named when counted)."""

    player: str
    onto_rack: tuple[str, ...] = ()
    off_rack: tuple[str, ...] = ()
    draws_back: int = 0

    @property
    def empty(self) -> bool:
        return not (self.onto_rack or self.off_rack or self.draws_back)


def void_change(turn: TurnRecord) -> RackChange:
    """A void turn: what it laid and left on the table goes back on the rack; what it
    drew comes off it."""
    stayed = Counter(turn.played) - Counter(turn.tiles_back)
    return RackChange(turn.player, tuple(sorted(stayed.elements())), (), turn.draws)


def _same_set(a: Sequence[str], b: Sequence[str]) -> bool:
    return Counter(a) == Counter(b)


def unruled_sets(turn: TurnRecord, ruled: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """The turn's invalid sets not yet ruled valid (each ruling covers one set)."""
    left = list(turn.invalid_sets)
    for tiles in ruled:
        for i, candidate in enumerate(left):
            if _same_set(candidate, tiles):
                del left[i]
                break
    return left


def set_valid_change(turn: TurnRecord, ruled: Sequence[Sequence[str]]) -> RackChange | None:
    """The change once `ruled` (sets ruled valid, in order) are the turn's invalid sets:
    its penalty undone. None while the turn does not stand yet (a set still invalid, or a
    problem that is not a set)."""
    if unruled_sets(turn, ruled) or turn.other_problems or not turn.penalised:
        return None
    return RackChange(turn.player, (), turn.tiles_back, 0 if turn.timed_out else turn.draws)


def set_problems(turn: TurnRecord, tiles: Sequence[str],
                 ruled: Sequence[Sequence[str]]) -> list[str]:
    """Why `tiles` cannot be ruled valid for this turn (empty: it can)."""
    shown = " ".join(tiles)
    if not any(_same_set(s, tiles) for s in turn.invalid_sets):
        sets = "; ".join(" ".join(s) for s in turn.invalid_sets) or "none"
        return [f"turn {turn.turn} has no invalid set {shown} (its invalid sets: {sets})"]
    if not any(_same_set(s, tiles) for s in unruled_sets(turn, ruled)):
        return [f"the set {shown} of turn {turn.turn} is already ruled valid"]
    return []


def recount(racks: Mapping[str, Sequence[str]], winner: str | None,
            changes: Sequence[tuple[RackChange, Sequence[str]]], rules: Rules) -> RoundResult:
    """The round scored again from its counted racks with each change applied (with the
    drawn tiles it names). The winner stays the winner while their rack is empty; a rack
    a ruling filled means nobody went out, scored as the edition scores an empty pool.
    Raises ValueError naming every problem (a drawn tile not on the rack, a count off)."""
    counted = {name: Counter(parse_tiles(list(codes))) for name, codes in racks.items()}
    problems = []
    for change, drawn in changes:
        if change.player not in counted:
            problems.append(f"{change.player} did not play this round")
            continue
        rack = counted[change.player]
        rack.update(parse_tiles(list(change.onto_rack)))
        for tile in parse_tiles(list(change.off_rack)):
            if rack[tile]:  # one laid again later is on the table either way
                rack[tile] -= 1
        drawn_tiles = parse_tiles(list(drawn))
        if len(drawn_tiles) > change.draws_back:
            problems.append(f"{change.player} drew {change.draws_back} tile(s): name at most "
                            f"{change.draws_back}, not {len(drawn_tiles)}")
            continue
        for tile in drawn_tiles:
            if not rack[tile]:
                problems.append(f"{tile.code()} is not on {change.player}'s counted rack")
                continue
            rack[tile] -= 1
    if problems:
        raise ValueError("; ".join(problems))
    final: dict[str, list[Tile]] = {name: list(rack.elements()) for name, rack in counted.items()}
    out = winner if winner is not None and not final.get(winner) else None
    if out is None:
        emptied = [name for name, tiles in final.items() if not tiles]
        out = emptied[0] if len(emptied) == 1 else None
    return score_round(final, out, rules)
