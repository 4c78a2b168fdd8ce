"""Example banks of the disclosure guard (agent.guard_similar): data files, one example a line."""
