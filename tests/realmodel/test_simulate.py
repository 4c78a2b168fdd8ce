"""``mafiabot simulate --players 5 --agent llm`` on the real tiny model, at clock speed 1 with
short phases (day 90 s, votes 30/20 s, night 30 s), through the product's own ``openai:``
backend. What is asserted is what a person at the table would notice, not the model's wit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.realmodel.play import simulate
from tests.realmodel.server import LlamaServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

#: a blocked loop stalls every seat and every chat; a model call is seconds long on this model,
#: so one awaited on the loop would show as lag of that order. The bar is loose for a loaded
#: 2-core CI box that also runs the model (bench/realmodel.py prints the figure against 50 ms).
LAG_P99_S = 0.25
LAG_WORST_S = 2.0


async def test_five_llm_seats_play_a_whole_game(model_env: LlamaServer, tmp_path: Path) -> None:
    played = await simulate(tmp_path / "sim", players=5, seed=7)
    game = played.report
    facts = game.describe() + "\n--- server log ---\n" + model_env.log_tail(1500)
    print(game.describe())  # the figures, shown with -s

    assert game.ended, facts
    assert len(game.llm_seats) == 5, facts
    # Every seat speaks on every day it is alive: silence is the loudest tell there is.
    assert game.silent_days() == [], facts
    # Every vote and night action of an LLM seat is legal, and the model made it or a logged
    # fallback did; every seat offered a day vote or a kill vote voted in it.
    assert game.llm_votes(), facts
    assert game.bad_votes() == [], facts
    assert game.unvoted() == [], facts
    # The model was really asked, for lines and for votes.
    assert game.calls("scheduler") and game.calls("vote"), facts
    # No call blocks the loop.
    assert played.lag.samples, "the loop-lag sampler did not run"
    assert played.lag.quantile(0.99) <= LAG_P99_S, (played.lag.quantile(0.99), facts)
    assert played.lag.worst <= LAG_WORST_S, (played.lag.worst, facts)
