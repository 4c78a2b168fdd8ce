"""People's data: the consent notice and its records (`consent`), withdrawal from every stored
game (`privacy`, `plan_check`, `withdrawals`), secrets at rest (`crypto`) and the anonymised
dataset a moderator exports (`dataset`)."""
