"""The game's data as stored and as the API gives it: rules and detections to and from the
database, a reading's `scan --json` object, a stored verdict, turn ids, rack warnings, the
uploaded photo (`PhotoIn`). Plain functions: no storage, no lock."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np

from app.server.gameerrors import BadInput
from app.server.messages import Message, say
from referee import EDITIONS, Rules, Tile, edition
from referee.editions import SETTINGS
from referee.reasons import reason_refs
from vision.recognition.decode import Photo
from vision.recognition.detections import TileDetections


def in_round(rnd: dict, number: int) -> int:
    """A turn's number counted within its round (the game numbers them across rounds)."""
    return number - int(rnd.get("first_turn") or 1) + 1


def rack_warnings(rack) -> list[Message]:
    """The rack reading's warnings as messages: its doubts and edge tiles by count, any
    other note in the reader's words."""
    out = []
    low = int(rack.detections.uncertain.sum())
    if low:
        out.append(say("rack.low_confidence", count=low))
    if rack.edge:
        out.append(say("rack.edge", count=len(rack.edge)))
    if getattr(rack, "off_rack", None):
        codes = rack.detections.codes
        out.append(say("rack.off_rack", count=len(rack.off_rack),
                       tiles=" ".join(codes[i] for i in rack.off_rack)))
    from vision.game.cover import DOUBT_WORDS

    if DOUBT_WORDS in rack.warnings:
        out.append(say("rack.maybe_covered"))
    from vision.game.rack import EMPTY_WORDS, UPRIGHT_WORDS

    if UPRIGHT_WORDS in rack.warnings:
        out.append(say("rack.upright"))
    if EMPTY_WORDS in rack.warnings:
        out.append(say("rack.empty"))
    known = ("tile(s) read with low confidence", "tile(s) at the photo's edge",
             "off the rack: not counted", DOUBT_WORDS, UPRIGHT_WORDS, EMPTY_WORDS)
    out += [say("rack.note", text=w) for w in rack.warnings if not any(k in w for k in known)]
    return out


TURN_ID = re.compile(r"r(?P<round>\d{1,6})t(?P<turn>\d{1,9})")


def turn_id(state: dict) -> str:
    """The running turn's id ("r2t5": round 2, the game's 5th turn): every call that
    changes a turn names it, so a call meant for an ended turn changes nothing. Turns
    stored before ids were kept get the same id from their numbers."""
    turn = state["round"]["turn"]
    return turn.get("id") or f"r{state['round']['number']}t{turn['number']}"


def rules_to_json(rules: Rules) -> dict:
    out = {"name": rules.name}
    for name in SETTINGS:
        value = getattr(rules, name)
        out[name] = [c.value for c in value] if name == "colors" else value
    return out


def rules_from_json(data: dict) -> Rules:
    return Rules(**{**data, "colors": tuple(data["colors"])})


def rules_with(edition_name: str, settings: dict | None) -> Rules:
    """The edition preset with single settings overridden; BadInput naming a bad one."""
    try:
        rules = edition(edition_name)
    except ValueError as error:
        raise BadInput(say("edition.refused", error=str(error))) from None
    for key, value in (settings or {}).items():
        try:
            if isinstance(value, str):
                rules = rules.with_setting(key, value)
            elif isinstance(value, list):
                rules = rules.with_setting(key, " ".join(str(v) for v in value))
            elif value is None and key.replace("-", "_") == "turn_seconds":
                rules = rules.replace(turn_seconds=None)
            elif key.replace("-", "_") == "turn_seconds" and isinstance(value, int | float) \
                    and not isinstance(value, bool):
                rules = rules.replace(turn_seconds=float(value))
            else:
                rules = rules.replace(**{key.replace("-", "_"): value})
        except (ValueError, TypeError) as error:
            raise BadInput(say("settings.invalid", key=key, error=str(error))) from None
    return rules


def detections_to_bytes(d: TileDetections) -> bytes:
    out = io.BytesIO()
    arrays = {"corners": d.corners, "detector_scores": d.detector_scores,
              "class_probs": d.class_probs, "class_ids": d.class_ids,
              "uncertain": d.uncertain, "labels": np.array(d.labels)}
    if d.flip_probs is not None:
        arrays["flip_probs"] = d.flip_probs
    np.savez(out, **arrays)
    return out.getvalue()


def detections_from_bytes(data: bytes) -> TileDetections:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return TileDetections(
            corners=z["corners"].astype(np.float32), detector_scores=z["detector_scores"],
            class_probs=z["class_probs"], class_ids=z["class_ids"].astype(np.int64),
            labels=tuple(str(x) for x in z["labels"]), uncertain=z["uncertain"].astype(bool),
            flip_probs=z["flip_probs"] if "flip_probs" in z.files else None)


def reading_json(d: TileDetections, rules: Rules, width: int, height: int,
                 photo_id: str | None) -> dict:
    """The `rummikub scan --json` object of one photo (plus `photo_id`)."""
    from vision.game.table import judge_table

    table = judge_table(d, rules, frame=(int(width), int(height)))
    result = {"photo": photo_id, "photo_id": photo_id, "width": int(width),
              "height": int(height), "tiles": table.detections.to_json()}
    result.update(table.to_json())
    # Each set's reasons as message ids too: the page words them in its player's language.
    for out, verdict in zip(result["sets"], table.verdicts, strict=True):
        out["reason_ids"] = reason_refs(verdict.reasons)
    result["warnings"] = ([] if len(d) else ["no tiles found"]) + list(table.warnings)
    return result


def codes_of(tiles) -> list[str]:
    return [t.code() for t in tiles]


def verdict_out(verdict: dict | None) -> dict | None:
    """A stored verdict as the API gives it. Verdicts stored before the referee named the
    sets already invalid before a turn (`TurnVerdict.invalid_before`) listed them as
    {tiles, reasons}: they are said in words like the new ones."""
    if not verdict or all(isinstance(x, str) for x in verdict.get("preexisting_invalid", [])):
        return verdict
    words = [x if isinstance(x, str) else
             f"set ({' '.join(x.get('tiles', []))}) was already invalid before this turn: "
             f"{'; '.join(x.get('reasons', []))}" for x in verdict["preexisting_invalid"]]
    return {**verdict, "preexisting_invalid": words}


def tiles_of(reading) -> list[list[Tile]]:
    """A judged table as the referee's sets; loose tiles (not faint ones) as sets of one."""
    codes = reading.detections.codes
    sets = [[Tile.from_code(codes[i]) for i in s] for s in reading.sets]
    sets += [[Tile.from_code(codes[i])] for i in reading.loose if i not in reading.faint]
    return sets


@dataclass
class PhotoIn:
    """An uploaded photo whose header and pixel data passed the checks: its bytes (kept)
    and the `vision.recognition.decode.Photo` the pipeline reads, decoded only as far as it needs
    (a big JPEG at 1/2 to 1/8 of each side; each decode is kept for the next use)."""

    data: bytes
    content_type: str
    photo: Photo

    @property
    def width(self) -> int:
        return self.photo.width

    @property
    def height(self) -> int:
        return self.photo.height


def editions_json() -> list[dict]:
    return [{"name": name, "settings": rules_to_json(rules)} for name, rules in EDITIONS.items()]
