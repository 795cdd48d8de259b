"""What every `rummikub` command shares: its options, their checks, and the help text.

    add_rules_options(parser)   --edition NAME and --set NAME=VALUE (RULES.md section 10)
    rules_from_args(args)       -> referee Rules; a bad name or value is a CommandError
    add_models_option(parser)   --models DIR (default $RUMMIKUB_MODELS, else models/)
    add_json_option(parser)     --json
    command_parser(subparsers, name, ...)   a subcommand with the shared help layout
    ArgumentParser              argparse's, with usage errors on one line

A command module registers its parsers with these so every command spells, checks and
explains an option the same way.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path


class CommandError(Exception):
    """A problem with what the user asked for: printed as one line, exit status 2."""


TILE_CODES_HELP = """\
tile codes:
  a colour letter and a number 1-13 (R12 is the red twelve), or J for a joker
  K black   R red   B blue   O orange (Y is read as O: editions that print it yellow)
  G green: the fourth colour of the "Rummy" edition (--edition rummy)
  lower case is read too (r12); codes are separated by spaces, commas or semicolons"""

EXIT_STATUS_HELP = """\
exit status:
  0    done, and everything judged is valid: every set and table, the meld, the turn,
       an arrangement found (score, round and start judge nothing: 0 when done)
  1    done, and something judged is not: an invalid set or table, a meld or turn that
       is not legal, tiles with no arrangement
  2    bad input or cannot run: an unreadable tile code or photo, a missing file, an
       unknown edition or setting, more tiles than a box holds, output that cannot be
       written; one line on stderr says what
  130  interrupted (Ctrl-C); 141 the reader of the output went away (| head), quietly
  With several photos the highest status applies (2, then 1, then 0)."""

ENVIRONMENT_HELP = """\
environment:
  RUMMIKUB_MODELS  folder with detector.onnx and classifier.onnx (and their .json);
                   --models DIR wins over it; default: models/ in the checkout"""


def _edition_names() -> str:
    from referee import EDITIONS

    return ", ".join(EDITIONS)


def add_rules_options(parser: argparse.ArgumentParser) -> None:
    """`--edition NAME` and `--set NAME=VALUE`, read back with `rules_from_args`."""
    parser.add_argument("--edition", default=None, metavar="NAME",
                        help=f"rule preset (RULES.md section 10): {_edition_names()} "
                             f"(default original)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="change one rule setting of the edition, e.g. "
                             "--set rack_joker_penalty=50 or --set colors=KRBG (repeatable)")


def rules_from_args(args: argparse.Namespace):
    """The referee Rules that `--edition` and `--set` ask for (the original edition when
    neither is given). Raises CommandError naming the option and listing what is known."""
    from referee import edition

    name = getattr(args, "edition", None) or "original"
    try:
        rules = edition(name)
    except ValueError as error:
        raise CommandError(f"--edition: {error}") from None
    for override in getattr(args, "overrides", None) or []:
        setting, sep, value = override.partition("=")
        try:
            if not sep:
                raise ValueError("give NAME=VALUE, e.g. rack_joker_penalty=50")
            rules = rules.with_setting(setting, value)
        except ValueError as error:
            raise CommandError(f"--set {override}: {error}") from None
    return rules


def add_models_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models", metavar="DIR", type=Path, default=None,
                        help="folder with detector.onnx and classifier.onnx (default: "
                             "$RUMMIKUB_MODELS, else models/)")


def add_json_option(parser: argparse.ArgumentParser, what: str = "print JSON to stdout") -> None:
    parser.add_argument("--json", action="store_true", help=what)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors are one line (and exit status 2), like every
    other bad input: `rummikub check: the following arguments are required: SET (...)`."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (`{self.prog} --help` explains)\n")


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose paragraphs to the terminal; keeps blocks laid out by hand (a heading
    line followed by indented lines: tile codes, exit statuses) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in text.split("\n\n"):
            if "\n " in paragraph or paragraph.startswith(" "):
                out.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                out.append(textwrap.fill(" ".join(paragraph.split()), width,
                                         initial_indent=indent, subsequent_indent=indent))
        return "\n\n".join(out)


def command_parser(subparsers: argparse._SubParsersAction, name: str, *, help: str,
                   description: str, tile_codes: bool = False,
                   photos: bool = False) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with the tile codes (when it reads them), the exit
    statuses, and the models setting (when it reads photos)."""
    parts = ([TILE_CODES_HELP] if tile_codes else []) + [EXIT_STATUS_HELP]
    if photos:
        parts.append(ENVIRONMENT_HELP)
    return subparsers.add_parser(name, help=help, description=description,
                                 epilog="\n\n".join(parts), formatter_class=HelpFormatter)
