"""The bot: the game service every front end calls, the store, and the front ends themselves.

The service (one port, `bot.service.GameService`) and what it is made of:

- `bot.service`: lobby, play and deadlines; hands committed events to listeners and agents
- `bot.live`: the game held in memory (`LiveGame`, `SeatInfo`) and an agent's seat port
- `bot.moments`: when an action counts as made (stamps within bounds, the deadline's grace)
- `bot.journal`: the rows written for each lobby change and each action, in one transaction
- `bot.ownership` (with `bot.lease`): one process drives a game; leases, renewal, fencing
- `bot.recovery`: a game rebuilt from its action log (resume after a restart, replay)
- `bot.alerts`: a lasting problem told once to the game's host
- `bot.outages`, `bot.limits`, `bot.consent`, `bot.errors`: input outages, rate limits,
  the consent notice, the refusals

Around it: `bot.store` (tables, migrations, the group-commit writer), `bot.table` (what every
platform shares: settings words, lobby rules, status, booths, links), `bot.discord`,
`bot.slack` and `bot.local` (thin adapters), `bot.ops` (serving, health, metrics), the command
line (`bot.cli`, `bot.runtime`), and the consented dataset a moderator exports (`bot.dataset`).
The offline research tools live outside the bot, in the top-level `research` package.

The rest, by what it serves:

- time and delivery: `bot.clock` (game time), `bot.timers` (deadlines on the scheduler),
  `bot.lanes` (ordered delivery, one lane per destination)
- agents: `bot.agents` (which agent plays a seat), `bot.llm_agents` (LLM seats from settings),
  `bot.experience_store` (the LLM agent's experience in the database)
- after a game: `bot.survey`, `bot.reveal`, `bot.stats`, `bot.spotrate`, `bot.transcript`,
  `bot.replay_page`, `bot.history` (a person's own games), `bot.web_pages` (the optional pages
  on the web)
- people's data: `bot.privacy`, `bot.plan_check` and `bot.withdrawals` (withdrawal),
  `bot.crypto` (secrets at rest)
- lobbies and the process: `bot.lobbies` (idle lobbies close), `bot.settings`,
  `bot.config_reference`, `bot.heap`, `bot.invocation`
"""
