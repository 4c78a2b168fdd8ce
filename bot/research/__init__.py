"""Research tools: load the published LLMafia games so they can be analysed and replayed.

`bot.research.llmafia` reads a game folder into plain dataclasses (repairing the known quirks of
the release and listing every repair) and writes one back in the dataset's own layout.
"""
