"""Research tools, offline: import the published LLMafia games, report, replay, likeness.

`research.llmafia` reads a game folder into the dataclasses of
`bot.protection.dataset.llmafia_model`
(repairing the known quirks of the release and listing every repair); `research.importer`
puts games into the bot's store, where `research.report` and `research.likeness` read them
beside games played here; `research.replay` plays a recorded game's humans against the agent
through the real `GameService`. These modules may import `bot`, `agent` and `games`; no live
module imports them (the command line imports them inside the research commands).
"""
