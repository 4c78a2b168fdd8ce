"""The service's refusal, in a leaf module: everything in ``bot/`` may import it (the consent
rules, the adapters, the service itself) without importing the service."""


class ServiceError(RuntimeError):
    """A request the service refuses (unknown game, not in the lobby, ...). Show it to the user."""


class PlatformUnreachable(RuntimeError):
    """A chat platform cannot be reached at all (DNS, refused, no route): one line for the
    person starting the bot, not a traceback. Nothing is lost; games carry on at the next start."""
