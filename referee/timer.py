"""The turn timer (RULES.md section 7) and the penalty when it runs out.

The clock is injected so tests and replays can drive time by hand; by default it is
`time.monotonic`, which never jumps when the wall clock is set.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from referee.editions import DEFAULT_RULES, Rules
from referee.sets import check_set
from referee.tiles import Tile

__all__ = ["TurnTimer", "TimeoutPenalty"]

Table = Sequence[Sequence[Tile]]


@dataclass(frozen=True)
class TimeoutPenalty:
    """What happens when time is up: tiles go back to the rack, the table becomes
    `restored_table`, and the player draws `draw` tiles (never more than the pool holds)."""

    tiles_back_to_rack: list[Tile]
    draw: int
    restored_table: list[list[Tile]]
    reasons: list[str] = field(default_factory=list)


class TurnTimer:
    """A turn's countdown with pause/resume and warnings at chosen remaining times.

    `TurnTimer(edition("original"))` takes the edition's `turn_seconds` (None: no limit);
    `TurnTimer(60)` sets the time directly and uses the default rules for the penalty.
    """

    def __init__(
        self,
        rules_or_seconds: Rules | float | None = None,
        clock: Callable[[], float] = time.monotonic,
        warnings_at: Iterable[float] = (30, 10),
    ):
        if isinstance(rules_or_seconds, Rules):
            self.rules = rules_or_seconds
            self.seconds = rules_or_seconds.turn_seconds
        else:
            self.rules = DEFAULT_RULES
            self.seconds = (DEFAULT_RULES.turn_seconds if rules_or_seconds is None
                            else float(rules_or_seconds))
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"a turn lasts more than 0 seconds, not {self.seconds!r}")
        self.clock = clock
        self.warnings_at = tuple(sorted({float(w) for w in warnings_at}, reverse=True))
        self._elapsed = 0.0
        self._since: float | None = None
        self._started = False
        self._warned: set[float] = set()

    @property
    def limited(self) -> bool:
        return self.seconds is not None

    @property
    def running(self) -> bool:
        return self._since is not None

    def start(self) -> None:
        """Start a fresh turn: full time, no warnings given yet."""
        self._elapsed = 0.0
        self._since = self.clock()
        self._started = True
        self._warned = set()

    def pause(self) -> None:
        if self._since is not None:
            self._elapsed += self.clock() - self._since
            self._since = None

    def resume(self) -> None:
        # Resuming a timer never started starts it, so a UI need not track which it was.
        if not self._started:
            self.start()
        elif self._since is None:
            self._since = self.clock()

    def elapsed(self) -> float:
        if self._since is None:
            return self._elapsed
        return self._elapsed + self.clock() - self._since

    def remaining(self) -> float | None:
        """Seconds left, never below 0; None when the game plays without a timer."""
        if self.seconds is None:
            return None
        return max(0.0, self.seconds - self.elapsed())

    def expired(self) -> bool:
        return self.seconds is not None and self._started and self.elapsed() >= self.seconds

    def due_warnings(self) -> list[float]:
        """The warning times passed since the last call, each given once per turn."""
        left = self.remaining()
        if left is None or not self._started:
            return []
        due = [w for w in self.warnings_at if left <= w and w not in self._warned
               and w < self.seconds]
        self._warned.update(due)
        return due

    def penalty(self, table_before: Table, table_after: Table, rack_before: Sequence[Tile],
                pool_size: int) -> TimeoutPenalty:
        """What the edition says happens when time ran out on this table (section 7)."""
        return timeout_penalty(table_before, table_after, rack_before, pool_size, self.rules)


def timeout_penalty(table_before: Table, table_after: Table, rack_before: Sequence[Tile],
                    pool_size: int, rules: Rules | None = None) -> TimeoutPenalty:
    rules = rules or DEFAULT_RULES
    before = [list(s) for s in table_before]
    after = [list(s) for s in table_after]
    played = Counter(t for s in after for t in s) - Counter(t for s in before for t in s)
    verdicts = [check_set(s, rules) for s in after]
    invalid = [v for v in verdicts if not v.valid]

    # A valid table when time runs out ends the turn as it stands (Pressman: draw 1 anyway).
    if not invalid and played:
        draw = min(rules.timeout_draw_when_valid, pool_size)
        return TimeoutPenalty([], draw, after, [])
    # Nothing laid is a pass: the table goes back and the player draws as for any pass.
    if not played:
        return TimeoutPenalty([], min(rules.empty_turn_draw, pool_size), before,
                              ["time ran out and nothing was laid"])
    reasons = [f"{' '.join(t.code() for t in v.tiles) or 'empty set'}: {'; '.join(v.reasons)}"
               for v in invalid]
    draw = min(rules.timeout_draw, pool_size)
    if rules.timeout_penalty == "restore-table":
        # Travel Tin: the whole table as it was, and the laid tiles back to the rack.
        back = sorted((played & Counter(rack_before)).elements())
        return TimeoutPenalty(back, draw, before, reasons)
    # De Luxe and Dutch rules: only the tiles not in a valid set go back.
    back = sorted(t for v in invalid for t in v.tiles)
    kept = [s for s, v in zip(after, verdicts, strict=True) if v.valid]
    return TimeoutPenalty(back, draw, kept, reasons)
