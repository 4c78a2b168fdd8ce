"""``mafiabot run`` exactly as a user starts it, with discord.py pointed at the loopback fake
Discord (``FAKE_DISCORD_API``, ``FAKE_DISCORD_WS``, when given): the only difference from
production. (Slack needs none: ``MAFIABOT_SLACK_API_URL`` points it at the fake Slack.)

    python tests/bot/ops/runproc.py run --discord
"""

from __future__ import annotations

import os
import sys

import discord.gateway
import discord.http
import yarl

if "FAKE_DISCORD_API" in os.environ:
    discord.http.Route.BASE = os.environ["FAKE_DISCORD_API"]
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(os.environ["FAKE_DISCORD_WS"])

from mafiabot.cli import main

if __name__ == "__main__":
    sys.argv[0] = "mafiabot"
    main()
