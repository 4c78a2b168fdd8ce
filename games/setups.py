"""Named setups: which roles are dealt at each table size. A setup is data.

A setup lists *slots*: (from how many players, role). At a table of ``n`` players every slot
whose threshold is at most ``n`` is in play; the other seats are bystanders. The LLMafia setup
is the default and deals as LLMafia does (:func:`games.config.default_mafia_count` mafia,
the rest bystanders, plus any extra roles the host adds).
"""

from __future__ import annotations

from dataclasses import dataclass

from games.errors import ConfigError

DEFAULT_SETUP = "llmafia"
#: the roles of LLMafia's own game (players are mafia or not; a detective and a doctor are
#: bystanders with a night action): its dataset format and the agent's prompt know these alone
LLMAFIA_ROLES = frozenset({"mafia", "bystander", "detective", "doctor"})


def default_mafia_count(players: int) -> int:
    """LLMafia defaults: 1 mafia under 7 players, 2 up to 10, 3 above."""
    if players <= 6:
        return 1
    if players <= 10:
        return 2
    return 3


@dataclass(frozen=True)
class Setup:
    name: str
    description: str
    min_players: int
    max_players: int
    #: (from this many players, role); bystanders fill the remaining seats
    slots: tuple[tuple[int, str], ...] = ()
    #: the LLMafia deal (mafia count by table size, extra roles from the config)
    llmafia: bool = False
    #: where the setup comes from
    source: str = ""
    #: the table size its balance is measured at (``mafiabot balance`` without --players)
    players: int = 0

    @property
    def balance_players(self) -> int:
        return self.players or self.min_players

    def roles_for(self, players: int) -> tuple[str, ...]:
        """The roles dealt at ``players`` seats (LLMafia: its mafia and bystanders)."""
        if not self.min_players <= players <= self.max_players:
            raise ConfigError(
                f"The setup {self.name!r} is for {self.min_players} to {self.max_players} "
                f"players; this game has {players}."
            )
        if self.llmafia:
            mafia = default_mafia_count(players)
            return ("mafia",) * mafia + ("bystander",) * (players - mafia)
        roles = [role for at, role in self.slots if at <= players]
        return tuple(roles) + ("bystander",) * (players - len(roles))


SETUPS: dict[str, Setup] = {
    s.name: s
    for s in (
        Setup(
            "llmafia",
            "The LLMafia study's game: mafia and bystanders (1 mafia up to 6 players, 2 up to "
            "10, 3 above); the host may add a detective and a doctor.",
            5,
            30,
            llmafia=True,
            source="LLMafia",
            players=7,
        ),
        Setup(
            "vanilla_plus",
            "A small table's first step beyond LLMafia: mafia, a detective and a doctor.",
            5,
            7,
            ((5, "mafia"), (5, "detective"), (7, "doctor"), (7, "mafia")),
            source="Mafia Universe (vanilla plus a cop and a doctor)",
            players=5,
        ),
        Setup(
            "classic",
            "Mid-size: a godfather who reads innocent, an escort and a consort who block, a mayor.",
            7,
            12,
            (
                (7, "godfather"),
                (7, "mafia"),
                (7, "detective"),
                (7, "doctor"),
                (9, "consort"),
                (9, "escort"),
                (11, "mayor"),
                (11, "mafia"),
            ),
            source="Mafia Universe / Town of Salem roles",
            players=7,
        ),
        Setup(
            "salem",
            "Town of Salem-style: a framer and a janitor, an investigator, a lookout, a "
            "vigilante, and neutrals (jester, executioner, serial killer, survivor).",
            9,
            15,
            (
                (9, "godfather"),
                (9, "framer"),
                (9, "detective"),
                (9, "doctor"),
                (9, "jester"),
                (9, "lookout"),
                (10, "serial_killer"),
                (10, "vigilante"),
                (11, "investigator"),
                (12, "executioner"),
                (13, "survivor"),
                (13, "escort"),
                (14, "janitor"),
                (15, "veteran"),
            ),
            source="Town of Salem",
            players=9,
        ),
        Setup(
            "carnival",
            "Neutrals' night out: a jester, a survivor and an executioner among a small town "
            "and two mafia.",
            8,
            12,
            (
                (8, "mafia"),
                (8, "mafia"),
                (8, "detective"),
                (8, "doctor"),
                (8, "jester"),
                (10, "survivor"),
                (10, "executioner"),
                (11, "consigliere"),
                (12, "bulletproof"),
            ),
            source="Town of Salem neutrals",
            players=8,
        ),
        Setup(
            "mountainous",
            "A large table of many plain voices: a godfather and a phantom whose role dies with "
            "them among the mafia, a miller who looks guilty, a detective, and from 14 players "
            "a bus driver.",
            12,
            16,
            (
                (12, "mafia"),
                (12, "mafia"),
                (12, "phantom"),
                (12, "godfather"),
                (12, "detective"),
                (12, "miller"),
                (14, "bus_driver"),
                (15, "mafia"),
            ),
            source="Mafia Universe",
            players=12,
        ),
    )
}


def get_setup(name: str) -> Setup:
    try:
        return SETUPS[name]
    except KeyError:
        raise ConfigError(f"Unknown setup {name!r}. Setups: {', '.join(sorted(SETUPS))}.") from None
