"""The anonymised dataset a live bot hands out, and the text scrubbing it rests on.

`export` writes finished games (``/mafia export`` on Discord and Slack, ``mafiabot export``)
in the LLMafia release's layout (`llmafia_model`, `llmafia_write`, `llmafia_survey`,
`llmafia_manager`), as JSON lines and CSV tables, under character names only (`scrub`, which
withdrawal and the replay page use too). `stored` names the LLMafia games in the store and
rebuilds a stored game as an LLMafia game; `outdir` and `names` keep output folders and file
names safe. The offline research tools (`research/`) build on these; nothing here imports them.
"""
