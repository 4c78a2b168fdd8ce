"""Slack request verification that logs one short WARNING, never the request's body.

Bolt's own `AsyncRequestVerification` logs the whole body of a request whose signature fails,
at INFO: anybody could fill the log with an unsigned POST, and a genuine request refused for
clock skew would write user ids and what people typed. `quiet_verification` swaps it, in
the app's middleware list, for this subclass, which verifies the same way and logs a line
with the timestamp and the body's size only, at most one every `EVERY` seconds (with the
number refused since). It is done on the app itself, so it holds wherever the Slack runner
runs, also embedded in a process that set up no logging of ours.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.request_verification.async_request_verification import (
    AsyncRequestVerification,
)

log = logging.getLogger(__name__)

#: at most one warning line in this many seconds
EVERY = 10.0


class QuietRequestVerification(AsyncRequestVerification):
    def __init__(self, signing_secret: str) -> None:
        super().__init__(signing_secret, base_logger=log)
        self.refused = 0
        self._told_at: float | None = None
        self._untold = 0

    def _debug_log_error(self, signature: Any, timestamp: Any, body: Any) -> None:
        self.refused += 1
        self._untold += 1
        now = time.monotonic()
        if self._told_at is not None and now - self._told_at < EVERY:
            return
        size = len(body) if isinstance(body, str | bytes) else 0
        stamp = str(timestamp)[:20]
        more = ""
        if self._untold > 1:
            more = f"; {self._untold - 1} more refused since the last report"
        log.warning(
            "refused a request with a bad or stale Slack signature "
            "(timestamp %s, %d bytes; body not logged%s)",
            stamp,
            size,
            more,
        )
        self._told_at = now
        self._untold = 0


def quiet_verification(app: AsyncApp) -> AsyncApp:
    """Replace Bolt's request verification in ``app`` by `QuietRequestVerification`."""
    middleware = app._async_middleware_list
    for i, m in enumerate(middleware):
        if type(m) is AsyncRequestVerification:
            middleware[i] = QuietRequestVerification(app._signing_secret)
    return app
