"""The classes a tile reading can take, in the order the classifier's outputs use.

Codes are the referee's tile notation (`K7`, `O13`, `J`). A model file carries its own
label list; this module is the default order and the bridge from the dataset's names.
"""

from __future__ import annotations

COLOR_WORDS = {"K": "black", "R": "red", "B": "blue", "O": "orange", "G": "green"}
WORD_TO_SLOT = {word: slot for slot, word in COLOR_WORDS.items()}
# The dataset and some rule books call the fourth colour yellow.
WORD_TO_SLOT["yellow"] = "O"

TILE_CLASSES: tuple[str, ...] = tuple(
    f"{slot}{number}" for slot in "KRBO" for number in range(1, 14)
) + ("J",)


def code_from_dataset_name(name: str) -> str:
    """`'black_10'` -> `'K10'`, `'joker'` -> `'J'` (the dataset's names, by name never index)."""
    if name == "joker":
        return "J"
    word, _, number = name.partition("_")
    if word not in WORD_TO_SLOT or not number.isdigit() or not 1 <= int(number) <= 13:
        raise ValueError(f"not a tile class name: {name!r}")
    return f"{WORD_TO_SLOT[word]}{int(number)}"


def split_code(code: str) -> tuple[str | None, int | None, bool]:
    """`'R7'` -> `('red', 7, False)`, `'J'` -> `(None, None, True)`: the JSON fields."""
    if code == "J":
        return None, None, True
    return COLOR_WORDS[code[0]], int(code[1:]), False


def code_from_json(tile: dict) -> str:
    """A reading's tile as JSON (`split_code`'s fields) back to its code; `?` for a colour
    it does not name."""
    if tile.get("joker"):
        return "J"
    return f"{WORD_TO_SLOT.get(tile.get('color'), '?')}{tile.get('number')}"
