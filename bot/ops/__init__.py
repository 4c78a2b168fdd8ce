"""Running the bot in production: metrics, health, structured logs, graceful shutdown.

Nothing here takes part in a game. Everything observes from the outside, through seams the
rest of the bot already has: a service listener, the service's database hook, the LLM
decision log, the Discord relay's latency hook and the platforms' own logs and retry
handlers. `mafiabot run` serves ``/healthz`` and ``/metrics`` (see `bot.ops.http`).
"""
