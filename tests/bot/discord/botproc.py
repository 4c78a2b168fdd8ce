"""The bot in a process of its own, pointed at a fake Discord, so a test can SIGKILL it.

    python -m tests.bot.discord.botproc '{"api_base": ..., "ws_url": ..., "token": ...,
                                          "db_url": ..., "speed": 1.0, "seed": null}'

Prints "READY" once connected and caught up, then runs until killed.

    python -m tests.bot.discord.botproc -

A process kept warm: it imports what the bot needs, prints "LOADED" and waits for the JSON
config on a line of its stdin; only then does it touch the database or connect (so a test that
restarts the bot many times starts the next process while the current one runs, and a restart
costs what the bot itself does at its start, not the interpreter's imports).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import discord.gateway
import discord.http
import yarl

from tests.bot.discord.harness import new_bot


async def main(config: dict[str, Any]) -> None:
    discord.http.Route.BASE = config["api_base"]
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config["ws_url"])

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
    if sys.argv[1] == "-":
        print("LOADED", flush=True)
        line = sys.stdin.readline()
        if not line:  # the test ended without using this process
            sys.exit(0)
        asyncio.run(main(json.loads(line)))
    else:
        asyncio.run(main(json.loads(sys.argv[1])))
