"""An HTTP refusal that carries its message id, so the page can word it in its player's
language while the API and the CLI keep the English `detail` (main.py's handler adds
`message_id` to the body)."""

from __future__ import annotations

from fastapi import HTTPException

from app.server.messages import Message


class Refused(HTTPException):
    def __init__(self, status: int, message: Message, headers: dict | None = None):
        super().__init__(status, str(message), headers)
        self.message_id = message.json()


def refusal_body(detail: str, message: Message | None = None) -> dict:
    """The JSON body of a refusal: the English words, and the id when they have one."""
    body = {"detail": detail}
    if message is not None:
        body["message_id"] = message.json()
    return body
