"""Night resolution: every role's action and the mafia's kill, in one documented order.

Pure and deterministic: seats, actions and the mafia's chosen victim in, deaths and private
results out. The order (docs/roles.md prints :data:`ORDER`):

1. Alerts and vests: a veteran on alert or a survivor in a vest can't die tonight. They
   can't be blocked.
2. Blocks (escort, consort): the blocked player's action does nothing tonight. A blocker
   can't be blocked; two blockers on each other both act.
3. Redirects (bus driver): every action aimed at the driver's target lands on the driver and
   every action aimed at the driver lands on the target (the mafia's kill included).
4. The mafia's kill is carried out by the lowest-seated living mafia who voted for the
   victim and is not blocked; if every such voter is blocked, nobody is killed by the mafia.
5. Frames: a framed player appears guilty to every investigation tonight.
6. Visits: every action that was not blocked visits its (final) target; a veteran on alert
   shoots every visitor.
7. Protection: a bodyguard takes an attack on the guarded player in their place (and kills
   the attacker); a doctor's protection beats every attack on the protected player;
   bulletproof players (and veterans on alert, survivors in a vest) survive attacks.
8. Attacks (mafia kill, vigilante, serial killer, veteran) in that order; a player attacked
   twice dies once.
9. Investigations: faction (detective: guilty if mafia not appearing innocent, a serial
   killer, a miller, or framed) and exact role (investigator, consigliere: a godfather shows
   as bystander, a framed player or a miller as mafia). Results of players who died tonight
   are not delivered.
10. Tracking and watching: whom the target visited, who visited the target.
11. Cleaning: a janitor's target who died tonight has their role hidden from all but the
    janitor; a role hidden on death (phantom) is never revealed by its death.

A limited ability (vigilante's bullets, veteran's alerts, survivor's vests, janitor's cleans)
is spent when it is carried out (not when blocked; a clean only when its target dies).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from games.roles import Role, get_role

ORDER: tuple[tuple[str, str], ...] = (
    ("alert, vest", "a veteran on alert or a survivor in a vest can't die tonight; unblockable"),
    ("block", "the blocked player's action does nothing tonight; blockers can't be blocked"),
    ("redirect", "actions aimed at the bus driver's target land on the driver, and the reverse"),
    ("mafia kill", "carried out by the lowest-seated unblocked mafia who voted for the victim"),
    ("frame", "the framed player appears guilty to every investigation tonight"),
    ("visits", "every unblocked action visits its target; a veteran on alert shoots visitors"),
    (
        "guard, protect",
        "bodyguard dies in the target's place and kills the attacker; a doctor's protection "
        "beats every attack; bulletproof survives attacks",
    ),
    ("kill", "mafia kill, vigilante, serial killer, veteran, in that order"),
    (
        "investigate",
        "faction or exact role, as the target appears tonight (godfather innocent, miller and "
        "framed guilty)",
    ),
    ("track, watch", "whom the target visited; who visited the target"),
    ("clean", "a cleaned victim's role is hidden from all but the janitor; so is a phantom's"),
)


@dataclass
class Note:
    """A private result for ``seat`` at dawn."""

    seat: int
    verb: str
    target: int | None
    #: what was learnt: "mafia" / "innocent" / a role name / "blocked" / "visited" / ...
    result: str
    #: seats named by the result (whom the target visited, who visited)
    seats: tuple[int, ...] = ()


@dataclass
class Outcome:
    #: seats that died tonight, in the order they fell
    deaths: list[int] = field(default_factory=list)
    #: deaths whose role is not revealed
    hidden: set[int] = field(default_factory=set)
    #: detective results, delivered as InspectionResult: actor -> (target, appears guilty)
    inspections: dict[int, tuple[int, bool]] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    #: uses spent tonight, by seat
    spent: dict[int, int] = field(default_factory=dict)


def appears_guilty(role: Role, framed: bool) -> bool:
    if framed:
        return True
    if role.appears is not None:
        return role.appears == "guilty"
    return role.team == "mafia" or role.win == "solo_killer"


def appears_as(role: Role, framed: bool) -> str:
    """The role an exact investigation reports."""
    if framed or role.appears == "guilty":
        return "mafia"
    if role.appears == "innocent":
        return "bystander"
    return role.name


def resolve(
    roles: Sequence[str],
    alive: frozenset[int],
    actions: Mapping[int, int],
    kill: int | None,
    kill_voters: Sequence[int],
) -> Outcome:
    """Resolve one night. ``roles`` by seat; ``actions`` actor -> target; ``kill`` the mafia's
    chosen victim and ``kill_voters`` the living mafia who voted for it, in seat order."""
    out = Outcome()
    if not actions:  # the LLMafia game without special roles: the kill alone
        if kill is not None and kill_voters:
            out.deaths.append(kill)
            if get_role(roles[kill]).hidden_on_death:
                out.hidden.add(kill)
        return out
    role_of = [get_role(r) for r in roles]
    acts = {a: t for a, t in sorted(actions.items()) if a in alive and role_of[a].ability}
    safe: set[int] = set()
    # 1. alerts and vests
    alert: set[int] = set()
    for a in acts:
        ability = role_of[a].ability
        if ability in ("alert", "vest"):
            safe.add(a)
            out.spent[a] = 1
            if ability == "alert":
                alert.add(a)
    # 2. blocks
    blocked: set[int] = set()
    for a, t in acts.items():
        if role_of[a].ability == "block":
            target_ability = role_of[t].ability
            if target_ability not in ("alert", "vest", "block"):
                blocked.add(t)
    for a in sorted(blocked):
        if a in acts:
            out.notes.append(Note(a, role_of[a].night_verb or "act", acts[a], "blocked"))
    live = {a: t for a, t in acts.items() if a not in blocked}
    # 3. redirects
    drivers = [(a, t) for a, t in live.items() if role_of[a].ability == "redirect"]
    for driver, other in drivers:
        live = {
            a: (t if a == driver else other if t == driver else driver if t == other else t)
            for a, t in live.items()
        }
        if kill is not None:
            kill = other if kill == driver else driver if kill == other else kill
    # 4. the mafia's killer
    killer = next((v for v in kill_voters if v not in blocked), None)
    visits: list[tuple[int, int]] = [(a, t) for a, t in live.items() if t != a]
    if killer is not None and kill is not None:
        visits.append((killer, kill))
    # 5. frames
    framed = {t for a, t in live.items() if role_of[a].ability == "frame"}
    # 7. protection
    healed = {t for a, t in live.items() if role_of[a].ability == "protect"}
    guards: dict[int, int] = {}
    for a, t in live.items():
        if role_of[a].ability == "guard":
            guards.setdefault(t, a)
    # 8. attacks, in order
    attacks: list[tuple[int, int]] = []
    if killer is not None and kill is not None:
        attacks.append((killer, kill))
    for kind in ("vigilante", "solo"):
        for a, t in live.items():
            if role_of[a].ability == "kill" and (role_of[a].win == "solo_killer") == (
                kind == "solo"
            ):
                attacks.append((a, t))
                if role_of[a].uses is not None:
                    out.spent[a] = 1
    for vet in sorted(alert):  # 6. a veteran on alert shoots every visitor
        attacks.extend((vet, a) for a, t in visits if t == vet)
    dead: set[int] = set()

    def hit(attacker: int, target: int) -> None:
        if target in dead or target not in alive:
            return
        if target in healed or target in safe or role_of[target].bulletproof:
            return
        dead.add(target)
        out.deaths.append(target)

    for attacker, target in attacks:
        guard = guards.get(target)
        if guard is not None and guard != attacker and guard not in dead and target != guard:
            del guards[target]  # one bodyguard takes one attack
            hit(attacker, guard)
            hit(guard, attacker)
            continue
        hit(attacker, target)
    # 9. investigations
    for a, t in live.items():
        ability = role_of[a].ability
        if ability == "investigate":
            out.inspections[a] = (t, appears_guilty(role_of[t], t in framed))
        elif ability == "investigate_role":
            out.notes.append(
                Note(a, role_of[a].night_verb or "", t, appears_as(role_of[t], t in framed))
            )
    # 10. tracking and watching
    for a, t in live.items():
        ability = role_of[a].ability
        if ability == "track":
            seen = tuple(sorted({v for s, v in visits if s == t}))
            out.notes.append(Note(a, "track", t, "visited", seen))
        elif ability == "watch":
            seen = tuple(sorted({s for s, v in visits if v == t and s != a}))
            out.notes.append(Note(a, "watch", t, "visitors", seen))
    # 11. cleaning and hidden roles
    for a, t in live.items():
        if role_of[a].ability == "clean" and t in dead and t not in out.hidden:
            out.hidden.add(t)
            out.spent[a] = 1
            out.notes.append(Note(a, "clean", t, role_of[t].name))
    out.hidden.update(d for d in dead if role_of[d].hidden_on_death)
    return out
