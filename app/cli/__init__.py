"""The `rummikub` command line: thin argument parsing over the same objects the app uses.

Each group of subcommands lives in its own module with a `register(subparsers)` function
that adds its parsers and sets `func` on them. A command returns its exit status (the
rule is `common.EXIT_STATUS_HELP`); options shared by commands live in `app.cli.common`.

Output follows the Unix conventions, here once for every command: a reader that goes away
(`rummikub scan ... | head -1`) ends the command quietly with status 141, as SIGPIPE
would; output that cannot be written (`> /dev/full`) is one line on stderr and status 2.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from app.cli import calibrate, game, photos, rules, serve, watch
from app.cli.common import (  # CommandError is re-exported: commands import it from here
    ENVIRONMENT_HELP,
    EXIT_STATUS_HELP,
    TILE_CODES_HELP,
    ArgumentParser,
    CommandError,
    HelpFormatter,
)

__all__ = ["CommandError", "build_parser", "main", "rules_for_edition"]


def rules_for_edition(name: str | None):
    """The referee's rules for `--edition NAME` (the standard rules when none is given)."""
    from app.cli.common import rules_from_args

    return rules_from_args(argparse.Namespace(edition=name, overrides=[]))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rummikub-referee")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="rummikub",
        description="A camera referee for Rummikub: checks sets, reads photos, scores racks. "
        "`rummikub COMMAND --help` explains one command.",
        epilog="\n\n".join([TILE_CODES_HELP, EXIT_STATUS_HELP, ENVIRONMENT_HELP]),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rummikub {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module in (rules, photos, game, calibrate, serve, watch):
        module.register(subparsers)
    return parser


class OutputError(Exception):
    """Standard output could not be written; `cause` is the OSError."""

    def __init__(self, cause: OSError):
        super().__init__(str(cause))
        self.cause = cause


class _Output:
    """Standard output as the commands see it: a write or flush that fails raises
    OutputError, so main() can tell a lost reader from a problem with the input files."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            raise OutputError(error) from None

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise OutputError(error) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _drop_unwritten(stream) -> None:
    """Point the real stdout at /dev/null, so the text still buffered for a reader that is
    gone (or a full disk) is not written again, noisily, when Python exits."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return  # not a real file (a test's capture): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    real_stdout = sys.stdout
    sys.stdout = out = _Output(real_stdout)
    command = "rummikub"
    try:
        try:
            parser = build_parser()
            args = parser.parse_args(argv)  # --help and --version write and exit here
            command = f"rummikub {args.command}"
            status = int(args.func(args) or 0)
        except CommandError as error:
            print(f"{command}: {error}", file=sys.stderr)
            status = 2
        except KeyboardInterrupt:
            status = 130
        finally:
            out.flush()  # the last of the output fails here, if anywhere
        return status
    except OutputError as error:
        _drop_unwritten(real_stdout)
        if error.cause.errno == errno.EPIPE:
            return 141  # the reader went away: quietly, as a SIGPIPE'd program
        print(f"{command}: cannot write the output: {error.cause.strerror or error.cause}",
              file=sys.stderr)
        return 2
    finally:
        sys.stdout = real_stdout


if __name__ == "__main__":
    sys.exit(main())
