"""The bot in a process of its own, pointed at a fake Discord, so a test can SIGKILL it.

    python -m tests.bot.discord.botproc '{"api_base": ..., "ws_url": ..., "token": ...,
                                          "db_url": ..., "speed": 1.0, "seed": null}'

Prints "READY" once connected and caught up, then runs until killed.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import discord.gateway
import discord.http
import yarl


async def main(config: dict[str, Any]) -> None:
    discord.http.Route.BASE = config["api_base"]
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config["ws_url"])
    from tests.bot.discord.harness import new_bot

    seed = config.get("seed")
    async with new_bot(
        config["db_url"],
        speed=float(config["speed"]),
        test_seed=None if seed is None else int(seed),
    ) as bot:
        runner = asyncio.create_task(bot.start(config["token"]))
        await asyncio.wait_for(bot.caught_up.wait(), 60)
        print("READY", flush=True)
        await runner


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
