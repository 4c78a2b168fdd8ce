"""Errors the engine raises. Every message is written for the person who caused it."""


class RuleError(ValueError):
    """An action the rules do not allow. The state is unchanged; show ``str(err)`` to the player."""


class ConfigError(ValueError):
    """An impossible game setup. Nothing is created; show ``str(err)`` to the host."""
