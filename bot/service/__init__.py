"""The game service: the one port every front end calls (`bot.service.port.GameService`), and
what only it uses: the live game and seat port, moments and grace, the journal, ownership and
leases, recovery, clocks and timers, deadlines, delivery lanes, outages, idle lobbies, alerts and
transcripts. docs/architecture.md walks through them."""
