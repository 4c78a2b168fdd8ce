"""A whole game through the real GameService and the real Anthropic and OpenAI SDK clients
against the loopback fakes, with a model that writes a disclosing line
(tests/agent/guard_disclosing.tsv, eleven languages: self-reference, model names, preambles,
refusals, formatting; a mafia seat's role statement too) for nine in ten of its chat lines:
none of them reaches the stage or the den, whichever path the line took (the model's, the
regenerated one, the baseline's fallback, the never-mute floor)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from agent.decisions import InMemoryDecisionLog
from bench.guard import CORPUS
from bot.seats.llm_agents import LLMAgentConfig, llm_player_factory
from bot.settings import Settings
from games.events import MessageAccepted, RoleAssigned
from tests.bot.test_llm_agents import (
    PLAYER,
    WORDS,
    Table,
    clients_for,
    kind_of,
    play,
    prompt_of,
)
from tests.fakes.llm_servers import FakeLLMServer

JSON = dict[str, Any]


def corpus() -> tuple[list[str], list[str]]:
    """(lines that disclose from any seat, role statements that disclose from a mafia seat)"""
    anyone: list[str] = []
    mafia: list[str] = []
    for raw in CORPUS.read_text("utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            _, who, text = raw.split("\t", 2)
            (mafia if who == "mafia" else anyone).append(text)
    return anyone, mafia


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


@dataclass
class Discloser(Table):
    """The scripted table, but nine in ten lines it writes disclose the seat."""

    rate: float = 0.9
    served: list[str] = field(default_factory=list)
    pick: random.Random = field(default_factory=lambda: random.Random(7))

    def __call__(self, req: JSON) -> str:
        if kind_of(req) != "generator":
            return super().__call__(req)
        anyone, mafia = corpus()
        if self.pick.random() >= self.rate:
            self.lines += 1
            return " ".join(self.pick.sample(WORDS, 4)) + f" line{self.lines}"
        pool = anyone + mafia if "Your role: mafia" in prompt_of(req) else anyone
        line = self.pick.choice(pool)
        self.served.append(line)
        return line


#: a line shaped as a list or markdown: its marker is the tell (cleaning may take it off)
MARKUP = re.compile(r"^\s*(?:\d{1,2}[.)]\s|[-*•+]\s|#|>|\*\*|```)|\*\*|```")


@pytest.fixture(params=["anthropic", "openai"])
def fake(request: pytest.FixtureRequest) -> tuple[str, FakeLLMServer]:
    provider = str(request.param)
    return provider, request.getfixturevalue(f"fake_{provider}")


@pytest.mark.slow
async def test_a_model_that_discloses_nine_lines_in_ten_puts_none_on_stage(
    fake: tuple[str, FakeLLMServer], engine: Engine, scheduler: Any
) -> None:
    provider, server = fake
    model = Discloser(send_rate=0.7)
    server.responder = model
    log = InMemoryDecisionLog()
    factory = llm_player_factory(
        LLMAgentConfig(llm="x:y", player=PLAYER), log, clients=clients_for(provider, server)
    )
    # a loaded machine asks the model for fewer lines in a game's minute, and may leave the
    # ordinary tenth unsaid: another game then
    games: list[Any] = []

    def ordinary_said() -> bool:
        return any(
            isinstance(e, MessageAccepted) and re.search(r" line\d+$", e.text)
            for played in games
            for e in played.events
        )

    while (len(model.served) < 20 or not ordinary_said()) and len(games) < 4:
        played = await play(engine, scheduler, factory, speed=20.0, limit_s=60)
        assert played.history[-1]["kind"] == "game_over"
        games.append(played)
    assert len(model.served) >= 20, "the model was hardly asked for lines"

    anyone, mafia_only = corpus()
    disclosing = {norm(t) for t in anyone if not MARKUP.search(t)}
    roles = {norm(t) for t in mafia_only}
    said: list[MessageAccepted] = []
    leaked: list[str] = []
    for played in games:
        mafia_seats = {
            e.seat for e in played.events if isinstance(e, RoleAssigned) and e.team == "mafia"
        }
        assert len(mafia_seats) == 2
        game_said = [e for e in played.events if isinstance(e, MessageAccepted)]
        assert game_said
        said += game_said
        leaked += [e.text for e in game_said if MARKUP.search(e.text)]
        for e in game_said:
            text = norm(e.text)
            if not text:
                continue
            on_stage_as_mafia = e.place == "stage" and e.seat in mafia_seats
            pool = disclosing | roles if on_stage_as_mafia else disclosing
            # the line itself, or the length fit's cut of it (a prefix of at least 3 words)
            if any(text == d or (len(text.split()) >= 3 and d.startswith(text)) for d in pool):
                leaked.append(e.text)
    assert leaked == [], leaked
    refusals = [r for r in log.records if (r.decision or "").startswith("guard: ")]
    assert len(refusals) >= len(model.served) // 2
    # the ordinary tenth still reaches the table
    assert any(re.search(r" line\d+$", e.text) for e in said)


def test_the_model_judge_is_set_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAFIABOT_LLM_GUARD_JUDGE", "true")
    monkeypatch.setenv("MAFIABOT_LLM_GUARD_JUDGE_TIMEOUT", "1.5")
    player = LLMAgentConfig.from_settings(Settings(_env_file=None)).player
    assert player.guard_judge and player.guard_judge_timeout_s == 1.5
    assert not LLMAgentConfig.from_settings(
        Settings(_env_file=None, llm_guard_judge=False)
    ).player.guard_judge
