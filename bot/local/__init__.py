"""The terminal front end, the smallest complete adapter: `bot.local.terminal` (``mafiabot
play``: one person in a terminal against agents, lines stamped when read), `bot.local.simulate`
(``mafiabot simulate``: agents only, the transcript printed live) and `bot.local.render` (the
events printed for a seat or for everyone)."""
