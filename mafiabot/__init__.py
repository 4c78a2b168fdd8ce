"""The ``mafiabot`` command line: above the bot (`bot`) and the research tools (`research`),
which it wires together; neither imports it."""
