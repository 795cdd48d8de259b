"""How the player laid their tiles for a calibration photo: rows of tile codes.

A layout is rows, top row first, each left to right as the player sees them. A code is
the referee's (`K7`, `G12`, `J`), or `?7`: "a 7 of this row's colour", for layouts that
leave it to the camera which colour each row holds (every `?` row is one colour, and no
two `?` rows share one).

Built in: `rows` -- four rows, one colour each in any order, 1 to 13 left to right, and
a fifth row with the jokers (1 to 4; it may be left out). A FILE layout is a text file
with the photo's true tiles row by row (codes separated by spaces or commas, `#` starts
a comment), so any photo whose tiles are known -- one corrected by hand, say -- can
calibrate too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_CODE = re.compile(r"^(?:J|[KRBOG?](?:[1-9]|1[0-3]))$")
SLOTS = "KRBOG"


class LayoutError(ValueError):
    """A layout that cannot be parsed or built (the message names the input)."""


@dataclass(frozen=True)
class Layout:
    name: str
    rows: tuple[tuple[str, ...], ...]
    # The last row holds only jokers and may hold 1-4 of them, or be missing altogether.
    jokers_free: bool = False

    def __repr__(self) -> str:
        if BUILTIN.get(self.name) == self:
            return f"Layout.builtin({self.name!r})"
        return f"Layout.from_text({self.text()!r}, name={self.name!r})"

    @classmethod
    def builtin(cls, name: str) -> Layout:
        if name not in BUILTIN:
            raise LayoutError(f"no built-in layout {name!r} (built in: {', '.join(BUILTIN)})")
        return BUILTIN[name]

    @classmethod
    def from_text(cls, text: str, name: str = "file") -> Layout:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            codes = line.split("#", 1)[0].replace(",", " ").split()
            bad = [c for c in codes if not _CODE.match(c.upper())]
            if bad:
                raise LayoutError(f"{name}, line {number}: not a tile code: {' '.join(bad)!r} "
                                  "(codes look like K7, R13, B1, O5, G9, J)")
            if codes:
                rows.append(tuple(c.upper() for c in codes))
        if not rows:
            raise LayoutError(f"{name}: no tiles in the layout")
        return cls(name, tuple(rows))

    @classmethod
    def from_file(cls, path: Path | str) -> Layout:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise LayoutError(f"cannot read the layout file {path}: "
                              f"{getattr(error, 'strerror', None) or error}") from None
        return cls.from_text(text, name=str(path))

    @classmethod
    def resolve(cls, spec: str) -> Layout:
        """A built-in layout's name, or else the path of a layout file."""
        if spec in BUILTIN:
            return BUILTIN[spec]
        if not Path(spec).exists():
            raise LayoutError(f"{spec!r} is neither a built-in layout ({', '.join(BUILTIN)}) "
                              "nor a layout file")
        return cls.from_file(spec)

    def text(self) -> str:
        return "\n".join(" ".join(row) for row in self.rows)

    @property
    def size(self) -> int:
        return sum(len(row) for row in self.rows)

    def describe_row(self, index: int) -> str:
        """Row `index` in words: `'1 to 13 of one colour'`, `'the jokers'`, or its codes."""
        row = self.rows[index]
        if all(c == "J" for c in row) and self.jokers_free:
            return "the jokers"
        if all(c.startswith("?") for c in row):
            numbers = [int(c[1:]) for c in row]
            if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
                return f"{numbers[0]} to {numbers[-1]} of one colour"
        return " ".join(row)


_ROWS = tuple(tuple(f"?{n}" for n in range(1, 14)) for _ in range(4)) + (("J", "J"),)
BUILTIN: dict[str, Layout] = {"rows": Layout("rows", _ROWS, jokers_free=True)}
