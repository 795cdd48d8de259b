"""The edition's copies on the live table (`vision.game.tracker`): the stable table never
holds more copies of a tile than the edition prints. The copy the frames are least sure of
is re-read as its next plausible reading, or kept out of the table until it is resolved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

from vision.game.tracks import Track

ALT_SHARE = 0.05  # an alternative reading is plausible at >= this share of the best one


def limit(rules, code: str) -> int:
    """How many copies of the tile `code` the edition (`rules`) has."""
    if code == "J":
        return int(rules.jokers)
    if code[0] not in {str(c) for c in rules.colors}:
        return 0  # a colour this edition does not print
    return int(rules.copies)


def code_of(tr: Track) -> int:
    """The tile's reading, or the player's correction of it."""
    return tr.correction if tr.correction is not None else tr.code


def enforce(tracks: Iterable[Track], added: list[Track], reread: list[Track], labels,
            rules) -> list[str]:
    """Never more copies than the edition has: the copy that came last (laid or re-read
    just now) yields first, then the least sure one. Changes the tracks' readings; returns
    what changed, in words."""
    stable = [tr for tr in tracks if tr.code is not None]

    def strength(tr: Track) -> tuple:
        p = tr.probs[tr.code] if tr.probs is not None else 0.0
        return (tr.correction is not None, tr.committed, tr not in added,
                tr not in reread, float(p))

    counts: Counter = Counter()
    changes = []
    for tr in sorted(stable, key=strength, reverse=True):
        code = code_of(tr)
        if counts[code] < limit(rules, labels[code]) or tr.correction is not None:
            counts[code] += 1
            continue
        probs = tr.probs if tr.probs is not None else np.zeros(len(labels))
        best = float(probs[code])
        alt = None
        for k in np.argsort(-probs):
            k = int(k)
            if k == code:
                continue
            if probs[k] < ALT_SHARE * best:
                break
            if counts[k] < limit(rules, labels[k]):
                alt = k
                break
        if alt is not None:
            changes.append(f"tile {tr.id} read {labels[alt]}, not {labels[code]}: "
                           f"the edition has {limit(rules, labels[code])} {labels[code]}")
            tr.code = alt
            counts[alt] += 1
        elif tr in added and limit(rules, labels[code]) > 0:
            tr.code = None  # held back until the frames settle which copy it is
            tr.probs = None
        else:
            counts[code] += 1  # an older tile keeps its place; the referee will say
    return changes
