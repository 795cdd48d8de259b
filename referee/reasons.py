"""Reasons in words and as ids: each reason the referee gives is its English sentence (a
`str`, as the CLI and the API have always had it) that also carries a message id and
parameters, so a page words it in the player's language (app/static/i18n/*.json, keys
"server.<id>"). `REASON_IDS` lists every id the referee can give.

Parameters named `tiles` hold tile codes ("R5 R6"), `colors` colour letters ("K R"),
`reasons` a list of nested reasons: the page words each of them.
"""

from __future__ import annotations

REASON_IDS = frozenset({
    # one set (referee/sets.py)
    "set.too_short", "set.only_jokers", "set.too_many_jokers", "set.unknown_colour",
    "set.not_run_or_group", "set.mixed_both", "set.duplicate_tile", "set.mixed_colours",
    "set.mixed_numbers", "set.duplicate_colour", "set.too_long_group",
    "set.duplicate_number", "set.too_long_run", "set.wraps", "set.gap",
    # a turn (referee/turn.py)
    "turn.no_sets", "turn.set_invalid", "turn.meld_low", "turn.meld_low_rack",
    "turn.joker_to_rack", "turn.tiles_left", "turn.not_from_rack", "turn.pass",
    "turn.alone_before", "turn.invalid_before", "turn.alone", "turn.impossible_count",
    "turn.joker_set_split", "turn.meld_changed_table", "turn.meld_table_tiles",
    # anything said only in words
    "referee.text",
})


class Reason(str):
    """An English reason that also knows its message id and parameters."""

    def __new__(cls, words: str, reason_id: str, /, **params):
        if reason_id not in REASON_IDS:
            raise KeyError(f"no reason with id {reason_id!r}")
        self = super().__new__(cls, words)
        self.id = reason_id
        self.params = params
        return self

    def ref(self) -> dict:
        return {"id": self.id, "params": {k: _plain(v) for k, v in self.params.items()}}


def _plain(value):
    if isinstance(value, Reason):
        return value.ref()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def reason_refs(reasons) -> list[dict]:
    """The ids of reasons given as words; a reason made elsewhere as plain words keeps them."""
    return [r.ref() if isinstance(r, Reason) else {"id": "referee.text", "params": {"text": str(r)}}
            for r in reasons]
