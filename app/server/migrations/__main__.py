"""`python -m app.server.migrations -m "what changes"`: a new, empty revision file here."""

import argparse

from alembic import command

from app.server.dbopen import alembic_config

parser = argparse.ArgumentParser(prog="python -m app.server.migrations")
parser.add_argument("-m", "--message", required=True, help="what the revision changes")
command.revision(alembic_config(), message=parser.parse_args().message)
