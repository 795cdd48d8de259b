"""What a turn's verdict asks a person to look at (`TurnReading.check`), as message ids
with parameters: the English words here are made from the same ids the page words in its
player's language (app/static/i18n/*.json, keys "server.<id>").

Each note is a `referee.reasons.Reason`: its English `str` for the CLI and the API, and
`.ref()` for the page. `tiles` parameters hold tile codes ("R5 K9"), which the page says
as words.
"""

from __future__ import annotations

from referee.reasons import Reason

# id -> English, one tile and more ({count}, {tiles}: the tiles' codes)
ENGLISH = {
    "check.hidden": (
        "{count} tile hidden under something when the table was read ({tiles}): counted "
        "where it lay; clear the view and check",
        "{count} tiles hidden under something when the table was read ({tiles}): counted "
        "where they lay; clear the view and check"),
    "check.covered_before": (
        "{count} tile of the photo before not found after, where something lies over its "
        "place ({tiles}): not counted as taken away; clear the view and take the photo again",
        "{count} tiles of the photo before not found after, where something lies over their "
        "place ({tiles}): not counted as taken away; clear the view and take the photo again"),
    "check.edge": (
        "{count} tile at the edge of one photo only: {tiles}; not counted as played or taken "
        "away: check it, or photograph the same part of the table both times",
        "{count} tiles at the edge of one photo only: {tiles}; not counted as played or taken "
        "away: check them, or photograph the same part of the table both times"),
}
# The edge tiles are named with the photo they lie in: "K8 (before), R3 (after)".
SIDES = {"before": "{tiles} (before)", "after": "{tiles} (after)"}
CHECK_IDS = frozenset(ENGLISH)


class CheckNote(Reason):
    """One thing to check, in English words made from its id and parameters."""

    def __new__(cls, check_id: str, /, **params):
        one, other = ENGLISH[check_id]
        words = (one if params.get("count") == 1 else other).format(**params)
        self = str.__new__(cls, words)
        self.id = check_id
        self.params = params
        return self


def hidden_note(codes: list[str]) -> CheckNote:
    return CheckNote("check.hidden", count=len(codes), tiles=" ".join(codes))


def covered_note(codes: list[str]) -> CheckNote:
    return CheckNote("check.covered_before", count=len(codes), tiles=" ".join(codes))


def edge_note(before: list[str], after: list[str]) -> CheckNote:
    """Tiles found at the edge of one photo only. The English names each with its photo
    ("K8 (before)"); the page gets their codes and says them as words."""
    note = CheckNote("check.edge", count=len(before) + len(after),
                     tiles=", ".join([SIDES["before"].format(tiles=c) for c in before]
                                     + [SIDES["after"].format(tiles=c) for c in after]))
    note.params = {**note.params, "tiles": " ".join(before + after)}
    return note
