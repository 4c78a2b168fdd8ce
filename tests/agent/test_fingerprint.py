"""The baseline's games, move for move: a digest of every event of a fixed set of simulated
games. A refactoring of the baseline (or of the engine) must leave it equal; a change meant to
alter how the baseline plays updates ``DIGEST`` in the same commit, and says so."""

from __future__ import annotations

import hashlib
import json

from agent.fastsim import simulate_fast
from games import GameConfig
from games.events import event_to_dict

#: sha256 of the 120 games below (computed before agent.baseline.speech read a view)
DIGEST = "2f0e6c40db284e6cfd282f55c49e2d34a7742ab3b07559a68ada8eaa7d6c75aa"


def fingerprint() -> str:
    digest = hashlib.sha256()
    for players in range(5, 13):
        for roles in ((), ("detective",), ("detective", "doctor")):
            for seed in range(5):
                result = simulate_fast(
                    GameConfig(roles=roles), players, 1000 * players + seed, keep_events=True
                )
                assert result.events is not None
                for event in result.events:
                    digest.update(json.dumps(event_to_dict(event), sort_keys=True).encode())
                    digest.update(b"\n")
    return digest.hexdigest()


def test_the_baseline_plays_the_same_games_move_for_move() -> None:
    assert fingerprint() == DIGEST


def test_the_speech_view_carries_each_field_of_the_policy_by_its_name() -> None:
    """`BaselinePolicy.speech_view` fills the view positionally (it is made once per line):
    every field must be the policy's own object of that name, not a neighbour's."""
    import random

    from agent.baseline import BaselinePolicy
    from agent.baseline.view import SpeechView

    policy = BaselinePolicy(3, "Quinn", random.Random(7))
    view = policy.speech_view()
    for field in SpeechView._fields:
        own = getattr(policy, field if field in ("seat", "timing") else f"_{field}")
        got = getattr(view, field)
        assert got is own or (callable(own) and got == own), field


def test_compose_takes_the_policy_itself_or_its_view_alike() -> None:
    """Callers outside the baseline (the LLM seat's shadow, the self-disclosure guard) hand
    `compose` the policy; it composes from the policy's view, the same line as from the view."""
    import random

    from agent.baseline import BaselinePolicy
    from agent.baseline.speech import compose
    from games.events import MessageAccepted, visible

    result = simulate_fast(GameConfig(), 8, 3, keep_events=True)
    assert result.events is not None
    said = [i for i, e in enumerate(result.events) if isinstance(e, MessageAccepted)]
    lines = 0
    for cut in said[5:40:5]:
        seen = [e for e in result.events[:cut] if visible(e, 2)]
        now = result.events[cut].t
        a, b = (BaselinePolicy(2, result.seats[2][0], random.Random(9)) for _ in range(2))
        for event in seen:
            a.observe(event)
            b.observe(event)
        from_policy, from_view = compose(a, now), compose(b.speech_view(), now)
        assert from_policy == from_view
        lines += from_policy is not None
    assert lines >= 3
