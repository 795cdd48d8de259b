"""The game server (`rummikub serve`): FastAPI over the referee and the photo pipeline.

`create_app(ServerSettings(...))` builds the app; see app/server/main.py for the parts.
"""

from app.server.main import ServerSettings, create_app

__all__ = ["ServerSettings", "create_app"]
