"""Subcommands: (being written)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add this module's subcommands."""
