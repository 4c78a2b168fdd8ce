"""The table: what every chat adapter (Slack, Discord, the terminal) shares and that has
nothing to do with one SDK.

A platform adapter only translates (platform event -> service call; engine event -> platform
post). What a lobby needs before it can start, the settings a host may type and how they read
back, the status and phase words, which booths a den line goes to, how a booth's backlog is
handed over after a restart, where a game's platform objects are stored and which finished
games an export takes: each is decided once, here, so the platforms cannot drift apart.

- `bot.table.config`: the ``day=90 vote=30s roles=detective agents=2`` syntax and its summary
- `bot.table.lobby`: the roster, AI seats, who may start, the start check
- `bot.table.status`: phase labels, time left, the status text
- `bot.table.booths`: the den's audience, the restart backlog's order and its refusal note
- `bot.table.links`: the platform link store and the finished games of a server
- `bot.table.seats`: a game's seats read back from the store (a game no longer in memory)
- `bot.table.text`: relayed-text safety (no mass mention) and character avatars
- `bot.table.help`: the help text every platform shows, in its own markup
- `bot.table.personas`: which persona the AI players get (chosen by key, never typed)
- `bot.table.latency`: the relay latency of a line, timed alike on every platform
"""
