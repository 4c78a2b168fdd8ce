"""The Discord adapter: lobby, booths, stage and den on a Discord server.

Entry point: :func:`bot.discord.app.run_discord` (``mafiabot run --discord``). The bot only ever
calls the service port (`bot.service.GameService`) and renders what the service emits, so the
agent's lines reach the stage by exactly the same path as everyone else's.
"""
