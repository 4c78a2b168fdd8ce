"""The service's refusals, in a leaf module: everything in ``bot/`` may import it (the consent
rules, the adapters, the service itself) without importing the service."""


class ServiceError(RuntimeError):
    """A request the service refuses (unknown game, not in the lobby, ...). Show it to the user."""


class PlatformUnreachable(RuntimeError):
    """A chat platform cannot be reached at all (DNS, refused, no route): one line for the
    person starting the bot, not a traceback. Nothing is lost; games carry on at the next start."""


class StoreUnavailable(ServiceError):
    """The database refused a read or a write; nothing was changed (in memory either)."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"The game could not be saved just now ({reason}); nothing changed. "
            "Try again in a moment."
        )
        self.reason = reason


def db_reason(exc: BaseException) -> str:
    """The database's own words for a failure, one short line (no statement, no parameters)."""
    if isinstance(exc, StoreUnavailable):
        return exc.reason
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return (text[0] if text else type(orig).__name__)[:160]
