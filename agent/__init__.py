"""The player: decides when to speak, what to say and how to vote, through the seat interface
a human uses. Depends on ``games`` types only, never on ``bot``."""
