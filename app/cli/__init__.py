"""The `rummikub` command line: thin argument parsing over the same objects the app uses.

Each group of subcommands lives in its own module with a `register(subparsers)` function
that adds its parsers and sets `func` on them. A command returns its exit status.
"""

from __future__ import annotations

import argparse
import sys

from app.cli import game, photos, rules


class CommandError(Exception):
    """A problem with what the user asked for: printed as one line, exit status 2."""


def rules_for_edition(name: str | None):
    """The referee's rules for `--edition NAME` (the standard rules when none is given)."""
    from referee import DEFAULT_RULES, edition

    if not name:
        return DEFAULT_RULES
    try:
        return edition(name)
    except ValueError as error:
        raise CommandError(f"--edition {name}: {error}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rummikub",
        description="A camera referee for Rummikub: checks sets, reads photos, scores racks.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in (rules, photos, game):
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CommandError as error:
        print(f"rummikub {args.command}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
