"""The errors of the game flow: a request the game cannot follow, with the HTTP status a
route answers and, for the page, the message id of its words (`app.server.messages`)."""

from __future__ import annotations

from app.server.messages import Message


class GameError(Exception):
    """A request the game cannot follow; `status` is the HTTP status a route answers."""

    status = 400

    def __init__(self, message: str | Message, status: int | None = None, *,
                 detail: str | None = None):
        # `detail`: fuller English words for the API than the message's own
        super().__init__(detail or str(message))
        # The page words an id in its player's language; the API keeps the English.
        self.message_id = message.json() if isinstance(message, Message) else None
        if status is not None:
            self.status = status


class NotFound(GameError):
    status = 404


class Conflict(GameError):
    """Right request, wrong moment (ending a turn before a round started)."""

    status = 409


class BadInput(GameError):
    status = 422


class Busy(Conflict):
    """Another server process holds the game's row (only asked of with `wait=False`)."""
