"""The lobby's balance estimate: which setups get one, measured once per setup and table size
however many ask, kept in an LRU, and a setup the simulation cannot play shows none."""

from __future__ import annotations

import asyncio

from agent.balance import Balance
from bot.table.balance_estimate import ESTIMATING, BalanceEstimates, estimate_key, table_size
from games.config import GameConfig
from games.errors import ConfigError

CUSTOM = GameConfig(role_list=("godfather", "detective", "doctor", "jester", "bystander"))


def test_the_table_size_is_the_role_lists_or_the_named_setups() -> None:
    assert table_size(CUSTOM) == 5
    assert table_size(GameConfig()) is None  # the default game: no line
    assert table_size(GameConfig(setup="mountainous")) == 12
    assert BalanceEstimates().line(GameConfig()) is None
    # phase lengths do not change the key; the tie rule (who wins a tied vote) does
    assert estimate_key(CUSTOM) == estimate_key(
        GameConfig(role_list=CUSTOM.role_list, day_seconds=9)
    )
    assert estimate_key(CUSTOM) != estimate_key(
        GameConfig(role_list=CUSTOM.role_list, tie_rule="random")
    )


async def test_a_real_estimate_is_measured_once_for_every_lobby_asking() -> None:
    calls: list[int] = []

    def counted(config: GameConfig, players: int, games: int) -> Balance:
        from agent.balance import measure

        calls.append(players)
        return measure(config, players, games)

    estimates = BalanceEstimates(measure=counted, games=20)
    assert estimates.line(CUSTOM) == ESTIMATING
    first, second = await asyncio.gather(estimates.estimate(CUSTOM), estimates.estimate(CUSTOM))
    assert first is second and first is not None and calls == [5]
    assert sum(first.wins[k] for k in ("town", "mafia", "draw") if k in first.wins) == 20
    line = estimates.line(CUSTOM)
    assert line is not None and line.startswith("Balance (20 simulated games): town ")
    assert "mafia " in line
    assert await estimates.estimate(CUSTOM) is first and calls == [5]


async def test_the_cache_forgets_the_least_recently_used_setup() -> None:
    seen: list[tuple[str, ...]] = []

    def fake(config: GameConfig, players: int, games: int) -> Balance:
        seen.append(config.role_list)
        return Balance("custom", players, games, {"town": games, "mafia": 0})

    estimates = BalanceEstimates(measure=fake, games=10, size=2)
    a, b, c = (GameConfig(role_list=("mafia", *["bystander"] * n)) for n in (4, 5, 6))
    for config in (a, b, a, c):  # a was used after b: b is the one forgotten
        await estimates.estimate(config)
    assert estimates.cached(a) is not None and estimates.cached(c) is not None
    assert not estimates.known(b)
    await estimates.estimate(b)
    assert seen == [a.role_list, b.role_list, c.role_list, b.role_list]


async def test_a_setup_the_simulation_cannot_play_shows_no_figure() -> None:
    def refuses(config: GameConfig, players: int, games: int) -> Balance:
        raise ConfigError("no faction can kill")

    estimates = BalanceEstimates(measure=refuses)
    redrawn: list[int] = []
    task = estimates.watch(CUSTOM, lambda: redrawn.append(1))
    assert task is not None
    await task
    assert estimates.known(CUSTOM) and estimates.line(CUSTOM) is None and not redrawn
    assert estimates.watch(CUSTOM, lambda: redrawn.append(1)) is None  # known: nothing to do
