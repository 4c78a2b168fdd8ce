"""The help every platform shows (``/mafia help`` on Discord and Slack, ``/help`` in the
terminal): how a game goes, the first steps (join, start, talk, vote, act at night, the
survey), the roles in play, what each command does, where your booth is.

Written once here, true to each surface: the markup picks it (``**bold**`` for Discord,
``*bold*`` for Slack, none for the terminal, where everyone else is an AI agent, there is no
game channel and the survey asks no guess). Each platform picks its command list and says where
the asker's booth is. The answer is always private to the person who asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from games.roles import get_role, registered_roles

Markup = Literal["discord", "slack", "plain"]

HOW_IT_GOES = (
    "Everyone plays under a character name given for this game, and at least one player is "
    "an AI agent: nobody is told which. By **day** the living talk on the stage (the game "
    "channel), then vote someone out. At **night** the mafia pick someone to kill, and the "
    "other roles with a night action make their choice. After the game a short survey asks "
    "who you think the AI was; once everyone has answered (or a few minutes later) the stage "
    "is told who it was and how many of you spotted it."
)
#: the terminal: you are the only person at the table
HOW_IT_GOES_TERMINAL = (
    "You play under a character name given for this game; everyone else at this table is an "
    "AI agent playing like a person. By **day** everyone talks, then votes someone out. At "
    "**night** the mafia pick someone to kill, and the other roles with a night action make "
    "their choice. The game ends when the mafia are all out, or when they are as many as "
    "everyone else."
)

#: the first questions, answered for Discord
FIRST_STEPS_DISCORD = (
    "**Join**: press **Join** under a game's lobby message in the game channel (anyone opens "
    "one with `/mafia new`). The first time, you are asked to agree to a short notice.",
    "**Start**: the host (or a moderator) presses **Start**; AI players take the empty seats.",
    "**Talk**: type in your booth (below); your line appears on the stage under your "
    "character's name.",
    '**Vote**: when voting opens, pick a name in the menu under the "Voting is open" '
    "announcement on the stage; you can change your vote until the time is up.",
    "**At night**: if your role acts at night (see the roles below), its menu comes to "
    "your booth; the mafia's night talk and kill vote happen there too.",
    "**The survey**: after the game your booth asks which player you think was the AI and "
    "three 1-5 questions about its messages (answers are kept under your character name "
    "only). The stage is told who the AI was once everyone has answered, or a few minutes "
    "after the game.",
)
#: ... for Slack
FIRST_STEPS_SLACK = (
    "**Join**: press **Join** on the game's message in the channel (`/mafia new` opens one), "
    "or type `/mafia join` there. The first time, you are asked to agree to a short notice.",
    "**Start**: the host presses **Start** (or types `/mafia start`); AI players take the "
    "empty seats.",
    "**Talk**: type in our direct messages (your booth, below); your line appears in the game "
    "channel under your character's name.",
    "**Vote**: when voting opens, a menu comes to our direct messages: pick a name; you can "
    "change your vote until the time is up.",
    "**At night**: if your role acts at night (see the roles below), its menu comes to "
    "our direct messages; the mafia's night talk and kill vote happen there too.",
    "**The survey**: after the game, press **Answer the survey** in our direct messages: "
    "which player you think was the AI, and three 1-5 questions about its messages (kept "
    "under your character name only). The game channel is told who the AI was once everyone "
    "has answered, or a few minutes after the game.",
)
#: ... for the terminal
FIRST_STEPS_TERMINAL = (
    "**Start**: the game starts as soon as you run it; `/quit` leaves, and the game is saved "
    "so you can continue it later.",
    "**Talk**: type a line and press Enter.",
    "**Vote**: when voting opens, `/vote NAME` (or `/abstain`); you can change your vote until "
    "the time is up. If you are mafia, the night's kill is a `/vote` too.",
    "**At night**: a detective or a doctor uses `/act NAME`.",
    "**After the game**: a few 1-5 questions about how human the others' messages seemed "
    "(Enter skips one, `/skip` skips them all), kept under your character name only. "
    "`mafiabot history` lists your games, each with its replay page.",
)


@dataclass(frozen=True)
class Command:
    usage: str
    what: str

    @property
    def names(self) -> tuple[str, ...]:
        """The commands this line is about: ``/mafia stats [member]`` -> ("stats",), ``/mafia
        setup, config`` -> ("setup", "config"), ``/vote NAME`` -> ("vote",)."""
        words = self.usage.removeprefix("/mafia ").removeprefix("/")
        return tuple(part.split()[0] for part in words.split(", "))


#: ``/mafia`` on Discord (options are shown as Discord shows them). This list and Slack's are
#: every command each platform has: tests compare them with the commands the adapters register
DISCORD: tuple[Command, ...] = (
    Command("/mafia help", "this help"),
    Command("/mafia new", "open a game lobby in this channel (you are the host)"),
    Command("/mafia consent", "read the notice, or withdraw your consent and your data"),
    Command("/mafia stats [member]", "games, wins by side and role, spot-the-AI, your rank"),
    Command("/mafia leaderboard [page]", "this server's players ranked, your place, the AI"),
    Command("/mafia history", "your last games: role, result, who the AI was, your guess"),
    Command("/mafia web [on|off|name|noname]", "this server's web pages, if the bot has them"),
    Command("/mafia replay game", "a game's replay page, after the reveal (its players, mods)"),
    Command("/mafia setup, config, status, end, kick", "running the games (moderators)"),
    Command("/mafia export", "anonymised research export of finished games (moderators)"),
    Command("/mafia spotrate", "how often people named the AI in the survey (moderators)"),
    Command("/mafia roles", "every role and setup a game can use"),
)
#: ``/mafia`` on Slack (settings typed as words)
SLACK: tuple[Command, ...] = (
    Command("/mafia help", "this help"),
    Command("/mafia new [settings]", "open a game in this channel (you are the host)"),
    Command("/mafia join", "take a seat in this channel's game (or press Join on its message)"),
    Command("/mafia leave", "give your seat up, before the game starts"),
    Command("/mafia start", "deal the roles and begin (host)"),
    Command("/mafia status", "phase, time left, who is alive (and, privately, your role)"),
    Command("/mafia config [settings]", "show or change the settings before the start (host)"),
    Command("/mafia end", "stop the game (host)"),
    Command("/mafia kick @someone", "take someone out; an AI plays their character on (host)"),
    Command("/mafia consent [withdraw]", "your consent, or withdraw it and your data"),
    Command("/mafia stats [@someone]", "games, wins by side and role, spot-the-AI, your rank"),
    Command("/mafia leaderboard [page]", "this workspace's players ranked, your place, the AI"),
    Command("/mafia history [N]", "your last games: role, result, who the AI was, your guess"),
    Command("/mafia web [on|off|name NAME|noname]", "the workspace's web pages, if any"),
    Command("/mafia replay GAME", "a game's replay page, after the reveal (its players, admins)"),
    Command("/mafia export", "anonymised research export of finished games (workspace admins)"),
    Command("/mafia spotrate", "how often people named the AI in the survey (workspace admins)"),
    Command("/mafia roles", "every role and setup a game can use"),
)
#: how the terminal's help names the resume command (the terminal says it as it can be run)
RESUME = "mafiabot play --resume"
#: the terminal's commands (typed in the game)
TERMINAL: tuple[Command, ...] = (
    Command("/vote NAME", "vote for NAME (during a vote; you can change it until the deadline)"),
    Command("/abstain", "abstain in the current vote"),
    Command("/act NAME", "your role's night action (detective: investigate, doctor: protect)"),
    Command("/who", "players, what is known about them, and the time left"),
    Command("/help", "this help"),
    Command("/quit", f"leave; the game is saved, continue with: {RESUME}"),
)

#: in play in every game
ALWAYS = ("mafia", "bystander")


def roles_in_play(extra: Iterable[str]) -> list[str]:
    """The roles of a game with these extra roles (the server's defaults, say), in a fixed
    order: mafia, bystander, then the extra ones as registered."""
    known = set(registered_roles())
    return [*ALWAYS, *(r for r in sorted(set(extra)) if r in known and r not in ALWAYS)]


def role_lines(roles: Sequence[str]) -> list[str]:
    """One line per role, from the role's own description (addressed to "you")."""
    out = []
    for name in roles:
        text = get_role(name).description
        out.append(f"- **{name}**: {_third_person(text)}")
    return out


def _third_person(description: str) -> str:
    # "You are the doctor, on ..." -> "on ..."; keep the rest of what the role says
    head, _, rest = description.partition(". ")
    if head.startswith("You are") and "," in head:
        return head.split(",", 1)[1].strip().capitalize() + ". " + rest
    return rest or description


def catalog_text(markup: Markup = "discord") -> str:
    """``/mafia roles``: every role by faction with its abilities, then the setups (short
    enough for one chat message)."""
    from games.setups import SETUPS

    lines = ["**Roles** (town, mafia and neutrals; a host picks them with `setup=`)"]
    for faction in ("town", "mafia", "neutral"):
        names = [r for r in registered_roles() if get_role(r).faction == faction]
        shown = ", ".join(f"{r} ({get_role(r).abilities_text()})" for r in names)
        lines.append(f"**{faction.capitalize()}**: {shown}")
    lines.append("**Setups**: " + ", ".join(
        f"{s.name} ({s.min_players}-{s.max_players})" for s in SETUPS.values()
    ))  # fmt: skip
    return render("\n".join(lines), markup)


def help_text(
    *,
    commands: Sequence[Command],
    roles: Sequence[str],
    booth: str,
    markup: Markup = "discord",
    note: str = "",
) -> str:
    """The whole help: how a game goes, the roles in play (``roles``), the commands, and
    ``booth`` (where the asker's booth is, in the platform's words)."""
    how, steps = {
        "discord": (HOW_IT_GOES, FIRST_STEPS_DISCORD),
        "slack": (HOW_IT_GOES, FIRST_STEPS_SLACK),
        "plain": (HOW_IT_GOES_TERMINAL, FIRST_STEPS_TERMINAL),
    }[markup]
    lines = [
        "**Mafia with a hidden AI player.**"
        if markup != "plain"
        else "**Mafia against AI players.**",
        how,
        "",
        "**First steps**",
        *(f"- {step}" for step in steps),
        "",
        "**Roles in play here**",
        *role_lines(roles),
        "",
        "**Your booth**",
        booth,
        "",
        "**Commands**",
        *(f"`{c.usage}`: {c.what}" for c in commands),
    ]
    if note:
        lines += ["", note]
    return render("\n".join(lines), markup)


def render(text: str, markup: Markup) -> str:
    if markup == "slack":
        return text.replace("**", "*")
    if markup == "plain":
        return text.replace("**", "").replace("`", "")
    return text
