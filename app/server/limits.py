"""Limits on what one client may cost the server: messages per second on a live socket,
and the memory of the pixels being decoded at once across all photos and frames.

Both are small value types with one question each (`MessageRate.take`, the budget's
context manager); the routes decide what to answer."""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

# A camera page sends 2 to 3 frames a second, plus a ping now and then; 10 a second with
# bursts of 20 leaves room for a fast phone and none for a flood.
SOCKET_RATE = 10.0
SOCKET_BURST = 20
# Past this many refused in a row the sender is not a phone out of step but a flood:
# the socket is closed with a reason (1008, policy violation).
SOCKET_FLOOD = 100


@dataclass
class MessageRate:
    """A token bucket: `rate` messages a second, `burst` at once."""

    rate: float = SOCKET_RATE
    burst: int = SOCKET_BURST
    flood: int = SOCKET_FLOOD
    clock: object = time.monotonic
    tokens: float = field(init=False)
    last: float = field(init=False)
    refused_in_a_row: int = 0
    refused: int = 0

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)
        self.last = self.clock()

    def take(self) -> bool:
        """True when one more message may be handled now."""
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            self.refused_in_a_row = 0
            return True
        self.refused += 1
        self.refused_in_a_row += 1
        return False

    @property
    def flooding(self) -> bool:
        return self.refused_in_a_row >= self.flood


class TooMuchToDecode(ValueError):
    """One photo needs more than the whole budget: it can never be decoded here."""


class ServerBusy(RuntimeError):
    """The budget stayed full for the whole wait."""


class DecodeBudget:
    """Bytes of decoded pixels held at once, by all photos and frames together: a photo
    waits until it fits, so a burst of big photos queues instead of exhausting memory.
    What one photo holds is `uploads.decode_bytes` (measured: docs/server.md)."""

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.used = 0
        self.peak = 0
        self._cond = threading.Condition()

    def acquire(self, size: int, timeout: float | None = 120.0) -> int:
        size = max(1, int(size))
        if size > self.capacity:
            raise TooMuchToDecode(f"decoding it takes {size / 2**20:.0f} MB, more than the "
                                  f"server's {self.capacity / 2**20:.0f} MB for photos")
        with self._cond:
            if not self._cond.wait_for(lambda: self.used + size <= self.capacity, timeout):
                raise ServerBusy("the server is busy decoding other photos: try again")
            self.used += size
            self.peak = max(self.peak, self.used)
        return size

    def release(self, size: int) -> None:
        with self._cond:
            self.used -= size
            self._cond.notify_all()

    @contextlib.contextmanager
    def hold(self, size: int, timeout: float | None = 120.0):
        held = self.acquire(size, timeout)
        try:
            yield
        finally:
            self.release(held)
