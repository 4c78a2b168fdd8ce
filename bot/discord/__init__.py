"""The Discord adapter: lobby, stage and booths (the mafia's den relayed into them).

Entry point: :func:`bot.discord.app.run_discord` (``mafiabot run --discord``). The bot only ever
calls the service port (`bot.service.port.GameService`) and renders what the service emits, so the
agent's lines reach the stage by exactly the same path as everyone else's.
"""
