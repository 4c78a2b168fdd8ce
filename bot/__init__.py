"""The bot: the game service every front end calls, the store, and the front ends themselves.

Its parts, one package each:

- `bot.service`: the one port every front end calls (`bot.service.port.GameService`) and what
  only it uses: the game in memory and the seat port (`live`), when an action counts
  (`moments`), the rows of each action (`journal`), one process a game (`ownership`, `lease`),
  resume (`recovery`), game time and deadlines (`clock`, `timers`), ordered delivery
  (`lanes`), input outages (`outages`), idle lobbies (`lobbies`), alerts, transcripts.
- `bot.seats`: who plays an agent seat (`agents`), LLM seats built from settings
  (`llm_agents`), the LLM agent's experience in the database (`experience_store`).
- `bot.players`: what players see of their games: the survey, the reveal, a seat's story,
  stats and the board, the spot-the-AI rate, history, the replay page, the web pages.
- `bot.protection`: people's data: consent, withdrawal (`privacy`, `plan_check`,
  `withdrawals`), secrets at rest (`crypto`), the anonymised dataset (`dataset`).
- `bot.store` (tables, migrations, the group-commit writer), `bot.table` (what every platform
  shares), `bot.discord`, `bot.slack`, `bot.local` (thin adapters), `bot.ops` (serving,
  health, metrics).

At the top: `bot.errors` (the refusals, a leaf), `bot.settings`, `bot.limits` (rate limits),
`bot.runtime` (start-up every command shares), `bot.invocation`, `bot.heap`, and the
generators of docs/configuration.md and docs/roles.md. The command line is above the bot, in
the `mafiabot` package (it imports the bot and the research tools); the offline research tools
live in the top-level `research` package. Nothing in `bot/` imports either.
"""
