"""Copying the immutable game state with some fields changed, fast (the engine's hot path)."""

from __future__ import annotations

from dataclasses import replace

from games.state import GameState

_object_new = object.__new__
_object_setattr = object.__setattr__
#: GameState is a plain frozen dataclass (fields in a __dict__, no __post_init__)
_FAST_STATE = not hasattr(GameState, "__slots__") and not hasattr(GameState, "__post_init__")


def evolve(state: GameState, **changes: object) -> GameState:
    """``replace(state, **changes)`` for the engine's own (known) field names, without
    replace's per-field introspection: the phase changes several times a day."""
    if not _FAST_STATE:  # pragma: no cover - GameState changed shape
        return replace(state, **changes)  # type: ignore[arg-type]  # (names checked by replace)
    new: GameState = _object_new(GameState)
    fields_ = state.__dict__.copy()
    fields_.update(changes)
    _object_setattr(new, "__dict__", fields_)
    return new
