"""An LLM seat playing roles beyond LLMafia's, through the real `openai` and `anthropic` SDKs and
the loopback fake servers: the role's card from the registry is in its prompt, each night
ability gets a structured answer whose enum is exactly the targets the engine offers (an
escort never itself, a vigilante only while it has bullets), a model naming an illegal
target falls back to a legal choice, and a role without a night action never acts at night."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from agent.decisions import InMemoryDecisionLog
from agent.llm.anthropic_backend import AnthropicClient
from agent.llm.base import LLMClient
from agent.llm.openai_backend import OpenAIClient
from agent.llm.structured import parse_mode
from agent.llm_player import LLMPlayer
from games import GameConfig
from games.events import ChoicesOffered, NightActionRecorded, PhaseStarted
from tests.agent.llm.conftest import ANTHROPIC_MODEL, FAST
from tests.agent.test_llm_player import NAMES, QUICK, Table
from tests.fakes.llm_servers import FakeAnthropicServer, FakeLLMServer, FakeOpenAIServer

JSON = dict[str, Any]


def deal(role: str) -> tuple[str, ...]:
    """Ari (seat 0, the agent) plays ``role``; Blake and Casey are the mafia."""
    return (role, "bystander", "mafia", "mafia", "detective", "doctor", "bystander")


def _text(req: JSON) -> str:
    """Every message's text of an OpenAI or Anthropic request, joined."""
    out: list[str] = []
    for m in req.get("messages", []):
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(out)


def _is_night(req: JSON) -> bool:
    return "tonight" in _text(req).rsplit("The time now is", 1)[-1] and "Choose one of" in _text(
        req
    )


async def play(
    role: str,
    server: FakeLLMServer,
    client_for: Callable[[str], LLMClient],
    seed: int = 3,
    deal_: tuple[str, ...] = (),
) -> tuple[Table, InMemoryDecisionLog]:
    dealt = deal_ or deal(role)
    config = GameConfig(
        deal=dealt,
        roles=() if deal_ else tuple(r for r in dealt if r not in ("mafia", "bystander")),
        role_list=deal_,  # a custom setup, dealt exactly as listed
        day_seconds=60,
        vote_seconds=30,
        night_seconds=30,
        night_vote_seconds=20,
    )
    table = Table(config)
    log = InMemoryDecisionLog()
    async with server:
        client = client_for(server.base_url)
        player = LLMPlayer(
            seat=0,
            name=NAMES[0],
            persona="You are calm.",
            port=table.port(0),
            clock=table.clock,
            timers=table.timers,
            generator=client,
            scheduler=client,
            decisions=log,
            rng=random.Random(seed),
            settings=QUICK,
            game_id=f"g-{role}",
        )
        table.players[0] = player
        for _ in range(700):
            if table.state.over or not table.state.seats[0].alive:
                break
            await table.advance(1)
            await player.idle()
            await table.settle()
        await player.close()
    return table, log


def offers(table: Table) -> list[ChoicesOffered]:
    return [
        e
        for e in table.events
        if isinstance(e, ChoicesOffered) and e.seat == 0 and e.verb not in ("vote", "kill")
    ]


def acts(table: Table) -> list[NightActionRecorded]:
    return [e for e in table.events if isinstance(e, NightActionRecorded) and e.seat == 0]


def night_number(table: Table, act: NightActionRecorded) -> int:
    started = [e for e in table.events if isinstance(e, PhaseStarted) and e.t <= act.t]
    return started[-1].number


def openai_schemas(server: FakeLLMServer) -> list[tuple[str, list[str]]]:
    """(schema name, enum) of every night request the OpenAI fake received, in order."""
    out = []
    for r in server.requests:
        fmt = (r.json or {}).get("response_format") or {}
        spec = fmt.get("json_schema") or {}
        if str(spec.get("name", "")).startswith("night"):
            out.append((spec["name"], spec["schema"]["properties"]["name"]["enum"]))
    return out


def anthropic_schemas(server: FakeLLMServer) -> list[tuple[str, list[str], str]]:
    """(tool name, enum, the request's text) of every night request the Anthropic fake got."""
    out = []
    for r in server.requests:
        for tool in (r.json or {}).get("tools") or []:
            if str(tool["name"]).startswith("night"):
                enum = tool["input_schema"]["properties"]["name"]["enum"]
                out.append((tool["name"], enum, _text(r.json or {})))
    return out


def _system(req: JSON) -> str:
    system = req.get("system")
    if isinstance(system, list):
        return "\n".join(str(b.get("text", "")) for b in system)
    if isinstance(system, str):
        return system
    return "\n".join(
        str(m.get("content")) for m in req.get("messages", []) if m.get("role") == "system"
    )


async def test_escort_schema_enum_is_the_engines_legal_targets() -> None:
    server = FakeOpenAIServer(lambda _req: '{"name": "Blake"}', flavour="openai")
    table, log = await play(
        "escort",
        server,
        lambda url: OpenAIClient("gpt-4o-mini", base_url=url, api_key="k"),
    )
    offered = offers(table)
    schemas = openai_schemas(server)
    assert offered and schemas
    legal = [list(o.target_names) for o in offered]
    for name, enum in schemas:
        assert name == "night_block"
        assert enum in legal  # exactly a night's offer, in seat order
        assert "Ari" not in enum  # an escort cannot block themself
    assert legal[0] == [n for n in NAMES if n != "Ari" and n in legal[0]]
    system = _system(server.requests[0].json or {})
    assert "Role card: escort (town)." in system
    assert "Night ability: block (block), each night, on one other player." in system
    # each night's block is the model's own answer (valid, no fallback)
    night = [r for r in log.records if r.kind == "night_action"]
    assert night and all(r.valid and not r.fallback for r in night)
    assert [a.target_name for a in acts(table)] == [r.decision for r in night]
    assert table.refused == []


async def test_a_model_naming_an_illegal_target_falls_back_legally() -> None:
    """A model with no structured output (the "plain" server) answers the seat's own name, which
    an escort may not block, twice: the fallback is the baseline's choice among the offered."""
    asked: list[str] = []

    def answer(req: JSON) -> str:
        if _is_night(req):
            asked.append(_text(req))
            return "Ari"
        return "<wait>"

    server = FakeOpenAIServer(answer, flavour="plain")
    table, log = await play(
        "escort",
        server,
        lambda url: OpenAIClient(
            "smollm2", base_url=url, api_key="k", structured=parse_mode("off")
        ),
    )
    night = [r for r in log.records if r.kind == "night_action"]
    assert asked and any(r.called and not r.valid for r in night)
    assert any(r.fallback for r in night)
    done = acts(table)
    assert done
    by_seq = {o.phase_seq: set(o.target_names) for o in offers(table)}
    for act in done:
        assert act.target_name != "Ari"
        assert any(act.target_name in names for names in by_seq.values())
    assert table.refused == []  # nothing illegal ever reached the engine


async def test_vigilante_tool_enum_and_bullets_through_anthropic() -> None:
    def answer(req: JSON) -> str:
        tools = [str(t["name"]) for t in req.get("tools") or []]
        # votes go to a bystander (the game lasts), the shots to a mafia member
        return json.dumps({"name": "Casey" if tools == ["night_kill"] else "Finley"})

    server = FakeAnthropicServer(answer)
    table, _ = await play(
        "vigilante",
        server,
        lambda url: AnthropicClient(ANTHROPIC_MODEL, api_key="k", base_url=url, policy=FAST),
        seed=1,  # a table where the baseline's coin says "shoot" on night 2
    )
    tools = anthropic_schemas(server)
    offered = [list(o.target_names) for o in offers(table)]
    assert tools
    for name, enum, text in tools:
        assert name == "night_kill"
        assert enum in offered and "Ari" not in enum
        assert "Uses left: " in text and " of 2, this one included." in text
    shots = acts(table)
    assert [s.target_name for s in shots] == ["Casey"]  # the model's own target
    assert all(night_number(table, s) >= 2 for s in shots)  # the baseline holds night 1
    system = _system(server.requests[0].json or {})
    assert "Role card: vigilante (town)." in system and "on up to 2 nights" in system
    assert table.refused == []


async def test_tracker_prompt_asks_in_its_own_words() -> None:
    server = FakeOpenAIServer(lambda _req: '{"name": "Casey"}', flavour="openai")
    table, _ = await play(
        "tracker",
        server,
        lambda url: OpenAIClient("gpt-4o-mini", base_url=url, api_key="k"),
    )
    night = [r for r in server.requests if _is_night(r.json or {})]
    assert night
    assert "at dawn you learn privately whom they visited" in _text(night[0].json or {})
    assert {n for n, _ in openai_schemas(server)} == {"night_track"}
    assert acts(table) and table.refused == []


async def test_a_role_without_a_night_action_never_acts_at_night() -> None:
    server = FakeOpenAIServer(lambda _req: '{"name": "Casey"}', flavour="openai")
    table, log = await play(
        "mayor",
        server,
        lambda url: OpenAIClient("gpt-4o-mini", base_url=url, api_key="k"),
    )
    assert any(isinstance(e, PhaseStarted) and e.phase.startswith("night") for e in table.events)
    assert offers(table) == [] and acts(table) == []
    assert openai_schemas(server) == []
    assert not [r for r in log.records if r.kind == "night_action"]
    system = _system(server.requests[0].json or {})
    assert "Role card: mayor (town)." in system and "Night ability: none." in system
    assert "your day vote counts 2 times" in system
    assert table.refused == []


async def test_a_lone_consort_blocks_beside_its_kill_vote() -> None:
    """The only mafia left has no night talk: the night opens on the kill vote, the decision
    the model is asked; the consort's block beside it is still made, legally."""

    def answer(req: JSON) -> str:
        return '{"name": "Finley"}'

    server = FakeOpenAIServer(answer, flavour="openai")
    config_deal = ("consort", "bystander", "bystander", "bystander", "detective", "doctor")
    table, _ = await play(
        "consort",
        server,
        lambda url: OpenAIClient("gpt-4o-mini", base_url=url, api_key="k"),
        deal_=(*config_deal, "bystander"),
    )
    skipped = [e for e in table.events if isinstance(e, PhaseStarted) and e.talk_skipped]
    assert skipped
    done = acts(table)
    assert done and table.refused == []
    offered = {o.phase_seq: set(o.target_names) for o in offers(table)}
    for act in done:
        assert act.target_name != "Ari" and any(act.target_name in n for n in offered.values())
    assert "Role card: consort (mafia)." in _system(server.requests[0].json or {})


async def test_the_doctor_s_enum_leaves_out_last_night_s_patient() -> None:
    def answer(req: JSON) -> str:
        spec = (req.get("response_format") or {}).get("json_schema") or {}
        return '{"name": "Eden"}' if spec.get("name") == "night_action" else '{"name": "Finley"}'

    server = FakeOpenAIServer(answer, flavour="openai")
    table, _ = await play(
        "doctor",
        server,
        lambda url: OpenAIClient("gpt-4o-mini", base_url=url, api_key="k"),
        deal_=("doctor", "bystander", "mafia", "mafia", "detective", "bystander", "bystander"),
    )
    enums = [enum for name, enum in openai_schemas(server) if name == "night_action"]
    protected = [a.target_name for a in acts(table)]
    assert len(protected) >= 2 and protected[0] == "Eden"
    offered = [list(o.target_names) for o in offers(table)]
    assert all(enum in offered for enum in enums)
    assert "Ari" in enums[0]  # a doctor may protect themself
    later = [enum for enum in enums if "Eden" not in enum]
    assert later, "the night after Eden was protected still offered Eden"
    assert protected[1] != "Eden" and table.refused == []
