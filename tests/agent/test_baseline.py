"""The baseline player: it talks like a person, votes sensibly, and knows only what it sees."""

from __future__ import annotations

import random
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent import templates
from agent.base import Intent
from agent.baseline import BaselinePolicy, BaselineTiming
from agent.fastsim import FastResult, simulate_fast
from agent.templates import (
    ACCUSE_WORDS,
    DEFEND_WORDS,
    DETECTIVE_WORD,
    IS_MAFIA,
    TEMPLATES,
    Lexicon,
)
from games import GameConfig
from games.events import (
    Event,
    GameStarted,
    MessageAccepted,
    NightActionRecorded,
    NightResult,
    PhaseEnded,
    PhaseExtended,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
    VoteCast,
)
from games.names import names_in_text

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
#: lines as written (no typing noise), so tests can match them against the templates
PLAIN = BaselineTiming(typed=False)
#: a seat that always has something to say by day and in a vote (its lines' content is what
#: these tests look at; when it speaks is people's timing, tested apart)
TALKATIVE = BaselineTiming(
    typed=False, day_rate=30.0, rate_spread=0.0, vote_talk=1.0, people_day_s=1000.0
)
NAMES = ("Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray", "Harley")


def sec(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


class Table:
    """Feeds one policy the events a seat would see, with a running phase number."""

    def __init__(
        self,
        seed: int,
        seat: int = 0,
        role: str = "bystander",
        partners: tuple[str, ...] = (),
        timing: BaselineTiming | None = None,
        extra_roles: tuple[str, ...] = (),
    ) -> None:
        self.policy = BaselinePolicy(
            seat, NAMES[seat], random.Random(seed), timing=timing or TALKATIVE
        )
        self.seat = seat
        self.seq = 0
        mafia_count = 1 + len(partners) if role == "mafia" else 2
        self.feed(
            GameStarted(t=T0, players=NAMES, mafia_count=mafia_count, extra_roles=extra_roles)
        )
        team = "mafia" if role == "mafia" else "bystanders"
        self.feed(
            RoleAssigned(
                t=T0,
                place="booth",
                visible_to=frozenset({seat}),
                seat=seat,
                name=NAMES[seat],
                role=role,
                team=team,
                partners=partners,
            )
        )

    def feed(self, event: Event) -> None:
        self.policy.observe(event)

    def phase(self, kind: str, at: float, seconds: float, number: int = 1) -> None:
        self.seq += 1
        self.feed(
            PhaseStarted(
                t=sec(at),
                phase=kind,
                number=number,
                seq=self.seq,
                deadline=sec(at + seconds),
                seconds=seconds,
            )
        )

    def say(self, seat: int, text: str, at: float, place: str = "stage") -> None:
        den = place == "den"
        self.feed(
            MessageAccepted(
                t=sec(at),
                place="den" if den else "stage",
                visible_to=frozenset({0, 1}) if den else None,
                seat=seat,
                name=NAMES[seat],
                text=text,
                phase_seq=self.seq,
            )
        )

    def vote(self, voter: int, target: int, at: float, night: bool = False) -> None:
        self.feed(
            VoteCast(
                t=sec(at),
                voter=voter,
                voter_name=NAMES[voter],
                target=target,
                target_name=NAMES[target],
                changed=False,
                night=night,
                phase_seq=self.seq,
            )
        )


def games(
    count: int, players: int = 8, roles: tuple[str, ...] = (), start: int = 0
) -> list[FastResult]:
    config = GameConfig(roles=roles)
    seeds = range(start, start + count)

    def plain(seat: int, name: str, rng: random.Random) -> BaselinePolicy:
        return BaselinePolicy(seat, name, rng, timing=PLAIN)

    return [simulate_fast(config, players, s, plain, keep_events=True) for s in seeds]


@pytest.fixture(scope="module")
def played() -> list[FastResult]:
    """A mix of table sizes and role setups, shared by the table-wide checks below."""
    out: list[FastResult] = []
    for i, players in enumerate((5, 6, 7, 8, 9, 10, 12)):
        out += games(12, players, start=100 * i)
        out += games(12, players, roles=("detective", "doctor"), start=100 * i + 50)
    return out


# --- table-wide behaviour ---------------------------------------------------------------------


def test_mafia_never_vote_for_a_partner_by_day_or_night(played: list[FastResult]) -> None:
    mafia_votes = 0
    for result in played:
        roles = [role for _name, role in result.seats]
        for e in result.events or ():
            if isinstance(e, VoteCast) and roles[e.voter] == "mafia":
                mafia_votes += 1
                assert e.target is not None
                assert roles[e.target] != "mafia", (e, result.seats)
    assert mafia_votes > 200


def test_mafia_never_name_a_partner_on_the_stage(played: list[FastResult]) -> None:
    checked = 0
    for result in played:
        by_seat = {i: name for i, (name, _role) in enumerate(result.seats)}
        mafia = {i for i, (_n, role) in enumerate(result.seats) if role == "mafia"}
        for e in result.events or ():
            if isinstance(e, MessageAccepted) and e.place == "stage" and e.seat in mafia:
                checked += 1
                named = set(names_in_text(e.text, by_seat))
                assert not (named & (mafia - {e.seat})), e.text
    assert checked > 500


def test_votes_only_for_living_others_and_nothing_is_refused(played: list[FastResult]) -> None:
    for result in played:
        assert result.refused == 0
        alive = set(range(len(result.seats)))
        for e in result.events or ():
            if isinstance(e, PlayerEliminated):
                alive.discard(e.seat)
            elif isinstance(e, VoteCast):
                assert e.target != e.voter
                assert e.target in alive


def test_votes_fall_inside_the_phase_with_margin_and_change_at_most_once(
    played: list[FastResult],
) -> None:
    offsets: list[float] = []
    for result in played:
        phase: PhaseStarted | None = None
        changes: Counter[tuple[int, int]] = Counter()
        for e in result.events or ():
            if isinstance(e, PhaseStarted):
                phase = e
            elif isinstance(e, VoteCast) and not e.night:
                assert phase is not None and phase.phase == "vote"
                offset = (e.t - (phase.deadline - timedelta(seconds=phase.seconds))).total_seconds()
                assert 0 < offset <= phase.seconds - min(3.0, 0.1 * phase.seconds) + 1e-6
                offsets.append(offset)
                changes[(e.phase_seq, e.voter)] += e.changed
        assert max(changes.values(), default=0) <= 1
    assert statistics.pstdev(offsets) > 3.0  # spread over the phase, not all at the bell


def test_every_day_vote_completes_before_the_deadline(played: list[FastResult]) -> None:
    for result in played:
        for e in result.events or ():
            if isinstance(e, PhaseEnded) and e.phase == "vote":
                assert e.reason in ("all_voted", "game_over")


def test_no_player_ever_repeats_a_line(played: list[FastResult]) -> None:
    for result in played:
        said: dict[int, set[str]] = defaultdict(set)
        for e in result.events or ():
            if isinstance(e, MessageAccepted):
                key = e.text.casefold()
                assert key not in said[e.seat], e.text
                said[e.seat].add(key)


def test_who_says_whom_they_vote_for_votes_for_them(played: list[FastResult]) -> None:
    """ "X gets my vote" in a vote, then a vote for someone else, gives a player away. A seat
    keeps its word (an announced vote is cast as announced, a draft naming someone else than
    the vote just cast is rewritten); only a later change of mind onto a bandwagon remains."""
    stated = [
        re.compile("^" + re.escape(t).replace(re.escape("{x}"), "(?P<x>\\w+)") + "$")
        for t in templates.TEMPLATES["vote_state"]
    ]
    claims = contradicted = 0
    for result in played:
        said: list[tuple[str, str]] = []
        final: dict[str, str | None] = {}
        voting = False
        for e in [*(result.events or ()), None]:
            if e is None or isinstance(e, PhaseStarted):
                for speaker, named in said:
                    if speaker in final:
                        claims += 1
                        contradicted += final[speaker] != named
                said, final, voting = [], {}, e is not None and e.phase == "vote"
            elif voting and isinstance(e, MessageAccepted):
                for pattern in stated:
                    if (m := pattern.match(e.text)) is not None:
                        said.append((e.name, m["x"]))
                        break
            elif voting and isinstance(e, VoteCast):
                # the vote cast as announced; a later switch onto a bandwagon is a change of
                # mind, not a broken word
                final.setdefault(e.voter_name, e.target_name)
    # (people seldom talk once the vote is on, and neither does the baseline: fewer claims)
    assert claims > 50
    assert contradicted / claims < 0.04, (contradicted, claims)  # (it was 14%)


def test_counts_and_accusations_in_a_vote_are_up_to_date(played: list[FastResult]) -> None:
    """A tally line gives the count at the moment it is said (not when it was drafted), and
    a player who has voted accuses the one they voted for."""

    def patterns(key: str, slot: str, body: str) -> list[re.Pattern[str]]:
        return [
            re.compile("^" + re.escape(t).replace(re.escape("{" + slot + "}"), body) + "$")
            for t in templates.TEMPLATES[key]
        ]

    tallies = patterns("tally", "tally", r"(?P<t>\w+ \d+(?:, \w+ \d+)*)")
    accusations = patterns("accuse", "x", r"(?P<x>\w+)")
    counted = stale = accused = elsewhere = 0
    for result in played:
        voting = False
        votes: dict[str, str | None] = {}
        for e in result.events or ():
            if isinstance(e, PhaseStarted):
                voting, votes = e.phase == "vote", {}
            elif voting and isinstance(e, VoteCast):
                votes[e.voter_name] = e.target_name
            elif voting and isinstance(e, MessageAccepted):
                now = Counter(v for v in votes.values() if v is not None)
                for p in tallies:
                    if (m := p.match(e.text)) is not None:
                        said = (part.rsplit(" ", 1) for part in m["t"].split(", "))
                        counted += 1
                        stale += any(now[e.name if n == "me" else n] != int(c) for n, c in said)
                if votes.get(e.name) is not None:
                    for p in accusations:
                        if (m := p.match(e.text)) is not None:
                            accused += 1
                            elsewhere += m["x"] != votes[e.name]
    assert counted >= 1 and accused >= 5  # (little talk in a vote, as with people)
    assert stale == 0 and elsewhere == 0, (stale, counted, elsewhere, accused)


def test_day_talk_mentions_the_night_victim(played: list[FastResult]) -> None:
    kills = mentioned = 0
    for result in played:
        victim: str | None = None
        for e in result.events or ():
            if isinstance(e, PlayerEliminated) and e.cause == "night":
                victim, kills = e.name, kills + 1
            elif isinstance(e, PhaseStarted) and e.phase == "vote":
                victim = None
            elif isinstance(e, MessageAccepted) and victim and victim in e.text:
                mentioned += 1
                victim = None
    assert kills > 50
    assert mentioned >= 0.8 * kills


def test_detective_claims_are_rare_and_true(played: list[FastResult]) -> None:
    claims = games_with_detective = 0
    for result in played:
        by_seat = {i: name for i, (name, _role) in enumerate(result.seats)}
        detective = next((i for i, (_n, r) in enumerate(result.seats) if r == "detective"), None)
        if detective is None:
            continue
        games_with_detective += 1
        for e in result.events or ():
            if isinstance(e, MessageAccepted) and "detective" in e.text and e.seat == detective:
                claims += 1
                named = set(names_in_text(e.text, by_seat)) - {detective}
                assert len(named) == 1, e.text
                says_mafia = "is mafia" in e.text
                assert (result.seats[named.pop()][1] == "mafia") == says_mafia, e.text
    assert 0 < claims < games_with_detective


def test_doctor_never_protects_the_same_player_two_nights_running(
    played: list[FastResult],
) -> None:
    nights = 0
    for result in played:
        doctor = next((i for i, (_n, r) in enumerate(result.seats) if r == "doctor"), None)
        last: int | None = None
        for e in result.events or ():
            if isinstance(e, NightActionRecorded) and e.seat == doctor:
                nights += 1
                assert e.target != last
                last = e.target
    assert nights > 50


# --- one seat, controlled situations ----------------------------------------------------------


def _first_line_delay(table: Table, last_message_at: float) -> float | None:
    intent = table.policy.plan(sec(last_message_at))
    if intent is None:
        return None
    assert intent.kind == "say"
    return (intent.at - sec(last_message_at)).total_seconds()


def _den(seed: int, timing: BaselineTiming | None = None) -> Table:
    den = BaselineTiming(typed=False, den_cap=5)
    table = Table(seed, role="mafia", partners=("Blake",), timing=timing or den)
    table.phase("night", 0, 120)
    return table


def test_in_the_den_speaks_sooner_below_its_share_and_later_or_not_at_all_above() -> None:
    """At night the mafia talk as the LLMafia scheduler does: sooner while below a fair share
    of the den's lines, later (or not at all) above it. (By day, see the people's timing.)"""
    below: list[float] = []
    above: list[float] = []
    silent = 0
    for seed in range(80):
        quiet = _den(seed)
        for i in range(3):  # the partner spoke three times, this seat not yet: share 0 < 1/2
            quiet.say(1, f"hmm {i}", i + 1, place="den")
        delay = _first_line_delay(quiet, 3)
        assert delay is not None
        below.append(delay)

        loud = _den(seed)
        for i, seat in enumerate((0, 0, 1, 0)):  # this seat said 3 of 4: share 0.75 > 1/2
            loud.say(seat, f"line {i}", i + 1, place="den")
        delay = _first_line_delay(loud, 4)
        if delay is None:
            silent += 1
        else:
            above.append(delay)
    assert max(below) < 20
    assert statistics.mean(above) > 2 * statistics.mean(below)
    assert min(above) >= 15
    assert silent > 5  # above its share it sometimes keeps quiet for a while


def test_typing_time_grows_with_the_line() -> None:
    timing = BaselineTiming(short_delay=(5.0, 5.0), seconds_per_word=1.0, typed=False)
    seen: dict[int, list[float]] = defaultdict(list)
    for seed in range(60):
        table = _den(seed, timing)
        intent = table.policy.plan(sec(0))
        assert intent is not None and intent.text is not None
        seen[len(intent.text.split())].append((intent.at - sec(0)).total_seconds() - 5.0)
    for words, typing in seen.items():
        assert all(0.8 * words - 1e-9 <= t <= 1.25 * words + 1e-9 for t in typing)
    assert len(seen) > 2


def test_lines_per_phase_are_capped() -> None:
    timing = BaselineTiming(day_cap=3, skip_when_loud=0.0)
    table = Table(1, timing=timing)
    table.phase("day", 0, 3600)
    lines = 0
    now = sec(0)
    while (intent := table.policy.plan(now)) is not None:
        assert intent.kind == "say" and intent.text
        now = intent.at
        table.say(0, intent.text, (now - T0).total_seconds())
        table.policy.done(intent, None)
        lines += 1
        assert lines <= 3
    assert lines == 3


def test_plan_is_stable_and_a_busy_chat_never_postpones_it() -> None:
    table = Table(7)
    table.phase("day", 0, 120)
    first = table.policy.plan(sec(0))
    assert first is not None
    assert table.policy.plan(sec(1)) is first
    for i in range(30):  # a flood of chat before the planned moment
        t = (first.at - T0).total_seconds() * i / 31
        table.say(1 + i % 7, f"chatter number {i}", t)
        again = table.policy.plan(sec(t))
        assert again is not None and again.at <= first.at


def test_a_draft_someone_else_just_said_is_replaced_and_a_longer_one_is_typed_longer() -> None:
    spw = BaselineTiming().seconds_per_word
    longer = 0
    for seed in range(40):
        table = Table(seed)
        table.phase("day", 0, 120)
        first = table.policy.plan(sec(0))
        assert first is not None and first.text
        t = (first.at - T0).total_seconds() / 2
        table.say(1, first.text.upper(), t)  # word for word (case aside), before mine is out
        again = table.policy.plan(sec(t))
        if again is None:
            continue  # the longer replacement no longer fits before the deadline
        assert again.text and again.text.casefold() != first.text.casefold()
        extra = len(again.text.split()) - len(first.text.split())
        if extra > 0:
            longer += 1
            assert (again.at - first.at).total_seconds() == pytest.approx(extra * spw)
        else:
            assert again.at == first.at
    assert longer >= 5


def test_after_a_night_kill_lines_refer_to_the_victim() -> None:
    mentions = 0
    for seed in range(40):
        table = Table(seed)
        table.phase("night_vote", 0, 30)
        table.feed(NightResult(t=sec(20), victim=3, victim_name="Drew"))
        table.feed(
            PlayerEliminated(t=sec(20), seat=3, name="Drew", role="bystander", cause="night")
        )
        table.phase("day", 20, 120, number=2)
        intent = table.policy.plan(sec(20))
        assert intent is not None and intent.text
        mentions += "Drew" in intent.text
    assert mentions >= 15


def test_after_a_night_without_a_kill_only_a_game_with_a_doctor_credits_the_doctor() -> None:
    doc = re.compile(r"\bdoc(tor)?\b", re.IGNORECASE)
    credited = {}
    for roles in ((), ("doctor",)):
        credited[roles] = 0
        for seed in range(80):
            table = Table(seed, extra_roles=roles)
            table.phase("night_vote", 0, 30)
            table.feed(NightResult(t=sec(20), victim=None, victim_name=None))
            table.phase("day", 20, 120, number=2)
            intent = table.policy.plan(sec(20))
            assert intent is not None and intent.text
            credited[roles] += bool(doc.search(intent.text))
    assert credited[()] == 0
    assert credited[("doctor",)] >= 5


def test_after_a_day_vote_lines_name_the_eliminated_and_the_voters() -> None:
    both = 0
    for seed in range(60):
        table = Table(seed)
        table.phase("vote", 0, 45)
        for voter in (2, 3, 4):
            table.vote(voter, 5, 5 + voter)
        table.feed(PhaseEnded(t=sec(20), phase="vote", number=1, seq=table.seq, reason="x"))
        table.feed(
            PlayerEliminated(t=sec(20), seat=5, name="Finley", role="bystander", cause="vote")
        )
        table.phase("night", 20, 45)
        table.phase("night_vote", 65, 30)
        table.feed(NightResult(t=sec(95), victim=None, victim_name=None))
        table.phase("day", 95, 120, number=2)
        intent = table.policy.plan(sec(95))
        assert intent is not None and intent.text
        voters = ("Casey", "Drew", "Eden")
        both += "Finley" in intent.text and any(v in intent.text for v in voters)
    assert both >= 5


def _day_two_line(seed: int, role: str, voters: tuple[int, ...]) -> str:
    """Seat 0's first line on day 2, after Finley (``role``) was voted out by ``voters``."""
    table = Table(seed)
    table.phase("vote", 0, 45)
    for voter in voters:
        table.vote(voter, 5, 5 + voter)
    table.feed(PhaseEnded(t=sec(20), phase="vote", number=1, seq=table.seq, reason="x"))
    table.feed(PlayerEliminated(t=sec(20), seat=5, name="Finley", role=role, cause="vote"))
    table.phase("night", 20, 45)
    table.phase("night_vote", 65, 30)
    table.feed(NightResult(t=sec(95), victim=None, victim_name=None))
    table.phase("day", 95, 120, number=2)
    intent = table.policy.plan(sec(95))
    assert intent is not None and intent.text
    return intent.text


def test_a_revealed_doctor_is_called_a_doctor_not_a_bystander() -> None:
    lines = [_day_two_line(seed, "doctor", (2, 3, 4)) for seed in range(80)]
    assert not any("bystander" in line for line in lines)
    assert sum("doctor" in line for line in lines) >= 5


def test_who_voted_a_bystander_out_too_does_not_blame_the_others() -> None:
    for seed in range(80):
        line = _day_two_line(seed, "bystander", (0, 2, 3))
        if "Finley" in line:
            assert "Casey" not in line and "Drew" not in line, line


def _vote_phase_lines(twice_voted: int, seeds: int) -> list[str]:
    """Seat 0's first line in a vote where ``twice_voted`` has two votes and Gray one."""
    lines = []
    for seed in range(seeds):
        table = Table(seed)
        table.phase("vote", 0, 45)
        table.vote(2, twice_voted, 1)
        table.vote(3, twice_voted, 2)
        table.vote(5, 6, 3)
        intent = table.policy.plan(sec(3))
        if intent is not None and intent.kind == "say" and intent.text:
            lines.append(intent.text)
    return lines


def test_vote_phase_lines_can_quote_the_tally() -> None:
    assert sum("Eden 2" in line for line in _vote_phase_lines(4, 60)) >= 2


def test_a_tally_calls_the_speaker_me_not_by_name() -> None:
    lines = _vote_phase_lines(0, 200)
    assert not any(re.search(r"\bAri \d", line) for line in lines)
    assert any(re.search(r"\bme 2\b", line) for line in lines)


def test_bystander_votes_for_whoever_keeps_accusing_it() -> None:
    for seed in range(20):
        table = Table(seed)
        table.phase("day", 0, 120)
        for i in range(3):
            table.say(4, f"Ari is mafia, vote Ari {i}", 10 + i)
        table.phase("vote", 120, 45)
        now = sec(120)
        intent = table.policy.plan(now)
        while intent is not None and intent.kind != "vote":
            table.policy.done(intent, None)
            intent = table.policy.plan(intent.at)
        assert intent is not None and intent.target == "Eden"


def test_mafia_deflects_onto_a_bystander_and_proposes_a_kill_in_the_den() -> None:
    for seed in range(30):
        table = Table(seed, seat=0, role="mafia", partners=("Blake",))
        table.phase("day", 0, 120)
        table.say(3, "Blake is mafia. vote Blake", 5)
        table.say(3, "Ari is sus too", 6)
        table.phase("vote", 120, 45)
        intent = table.policy.plan(sec(120))
        while intent is not None and intent.kind != "vote":
            assert intent.text is not None and "Blake" not in intent.text
            table.policy.done(intent, None)
            intent = table.policy.plan(intent.at)
        assert intent is not None and intent.target not in ("Ari", "Blake")
        assert intent.target == "Drew"  # the one who suspects the mafia most
        table.phase("night", 200, 45)
        den = table.policy.plan(sec(200))
        assert den is not None and den.kind == "say" and den.text
        named = names_in_text(den.text, dict(enumerate(NAMES)))
        assert named and named[0] not in (0, 1)


def test_mafia_follow_the_first_proposal_in_the_den() -> None:
    for seed in range(20):
        table = Table(seed, seat=1, role="mafia", partners=("Ari",))
        table.phase("night", 0, 45)
        table.say(0, "lets get Gray", 3, place="den")
        table.phase("night_vote", 45, 30)
        intent = table.policy.plan(sec(45))
        while intent is not None and intent.kind != "vote":
            table.policy.done(intent, None)
            intent = table.policy.plan(intent.at)
        assert intent is not None and intent.target == "Gray"


def _next_vote(table: Table, at: float) -> Intent | None:
    """The seat's next vote intent from ``at`` on (its lines said and done on the way)."""
    intent = table.policy.plan(sec(at))
    while intent is not None and intent.kind != "vote":
        table.policy.done(intent, None)
        intent = table.policy.plan(intent.at)
    return intent


def _my_night_vote(table: Table, at: float) -> int:
    """Plan, cast and confirm this seat's night vote; the seat voted for."""
    intent = _next_vote(table, at)
    assert intent is not None and intent.target is not None
    mine = NAMES.index(intent.target)
    t = (intent.at - T0).total_seconds()
    table.vote(table.seat, mine, t, night=True)
    table.policy.done(intent, None)
    return mine


def test_a_partner_voting_otherwise_well_after_me_is_followed_whatever_the_seats() -> None:
    """A human partner does not know the agents' rule (follow the first vote): when they vote
    for someone else seconds later, the agent goes along, so the kill is not a tie."""
    for seed in range(20):
        table = Table(seed, seat=0, role="mafia", partners=("Blake",))
        table.phase("night_vote", 0, 60)
        mine = _my_night_vote(table, 0)
        theirs = next(s for s in range(2, 8) if s != mine)
        voted_at = (table.policy._my_vote_t - T0).total_seconds()  # type: ignore[operator]
        table.vote(1, theirs, voted_at + 5, night=True)
        change = _next_vote(table, voted_at + 5)
        assert change is not None and change.kind == "vote" and change.target == NAMES[theirs]


def test_two_votes_at_the_same_moment_are_settled_by_seat_not_swapped() -> None:
    for seat, partner, follows in ((0, 1, False), (1, 0, True)):
        for seed in range(10):
            table = Table(seed, seat=seat, role="mafia", partners=(NAMES[partner],))
            table.phase("night_vote", 0, 60)
            mine = _my_night_vote(table, 0)
            theirs = next(s for s in range(2, 8) if s != mine)
            voted_at = (table.policy._my_vote_t - T0).total_seconds()  # type: ignore[operator]
            table.vote(partner, theirs, voted_at + 0.3, night=True)
            change = _next_vote(table, voted_at + 0.3)
            changed = change is not None and change.kind == "vote"
            assert changed is follows
            if follows:
                assert change is not None and change.target == NAMES[theirs]


def test_an_agent_that_has_not_voted_follows_any_partner_who_has() -> None:
    for seed in range(10):
        table = Table(seed, seat=0, role="mafia", partners=("Blake",))
        table.phase("night_vote", 0, 60)
        table.vote(1, 6, 1, night=True)  # the higher seat voted first
        intent = _next_vote(table, 1)
        assert intent is not None and intent.target == "Gray"


def test_in_the_den_a_mafia_speaks_of_itself_as_me() -> None:
    about_me = 0
    for seed in range(60):
        table = Table(seed, seat=0, role="mafia", partners=("Blake",))
        table.phase("day", 0, 120)
        table.say(2, "Ari is sus", 3)
        table.say(2, "pretty sure Ari is mafia", 9)
        table.phase("night", 120, 60)
        intent = table.policy.plan(sec(120))
        if intent is None or intent.kind != "say" or not intent.text:
            continue
        assert not re.search(r"\bAri\b", intent.text), intent.text
        about_me += bool(re.search(r"\bme\b", intent.text))
    assert about_me >= 3


def test_refusals_lead_to_another_choice_never_a_loop() -> None:
    table = Table(3)
    table.phase("vote", 0, 45)
    refused: list[Intent] = []
    now = sec(0)
    for _ in range(20):
        intent = table.policy.plan(now)
        while intent is not None and intent.kind == "say":
            table.policy.done(intent, None)
            intent = table.policy.plan(intent.at)
        if intent is None:
            break
        assert intent not in refused
        refused.append(intent)
        table.policy.done(intent, "No, not that one.")
        now = intent.at
    else:
        pytest.fail("the policy kept asking after 20 refusals")
    assert len({i.target for i in refused}) == len(refused)


def test_learns_nothing_from_events_it_may_not_see() -> None:
    table = Table(5)
    table.phase("day", 0, 120)
    table.say(2, "hello all", 1)
    before = (table.policy.role, table.policy.suspicion(), table.policy.share())
    plan_before = table.policy.plan(sec(1))
    # a den line and someone else's role card, which a bystander's seat never receives
    table.feed(
        MessageAccepted(
            t=sec(2),
            place="den",
            visible_to=frozenset({3, 4}),
            seat=3,
            name="Drew",
            text="Ari is the detective, kill Ari. vote Ari",
            phase_seq=table.seq,
        )
    )
    table.feed(
        RoleAssigned(
            t=sec(2),
            place="booth",
            visible_to=frozenset({3}),
            seat=0,
            name="Ari",
            role="mafia",
            team="mafia",
            partners=("Eden",),
        )
    )
    after = (table.policy.role, table.policy.suspicion(), table.policy.share())
    assert after == before
    assert table.policy.plan(sec(2)) is plan_before


def _vote_intent(table: Table, now: datetime) -> Intent | None:
    intent = table.policy.plan(now)
    while intent is not None and intent.kind == "say":
        table.policy.done(intent, None)
        intent = table.policy.plan(intent.at)
    return intent


def test_changes_its_vote_once_onto_a_strong_bandwagon() -> None:
    changed = 0
    for seed in range(20):
        table = Table(seed)
        table.phase("day", 0, 120)
        table.say(4, "Ari is mafia, vote Ari", 10)
        table.phase("vote", 120, 45)
        first = _vote_intent(table, sec(120))
        assert first is not None and first.kind == "vote" and first.target == "Eden"
        table.vote(0, 4, (first.at - T0).total_seconds())
        table.policy.done(first, None)
        for i, voter in enumerate((1, 2, 3, 5)):  # four of eight pile onto Gray
            table.vote(voter, 6, 150 + i)
        second = _vote_intent(table, sec(153))
        if second is not None:
            assert second.kind == "vote" and second.target == "Gray"
            assert sec(153) < second.at <= sec(165 - 3)
            table.policy.done(second, None)
            changed += 1
            table.vote(7, 2, 158)
            table.vote(2, 4, 159)  # a second swing: no second change of mind
            assert _vote_intent(table, sec(159)) is None
    assert changed == 20


def test_detective_investigates_its_top_unresolved_suspect() -> None:
    for seed in range(10):
        table = Table(seed, role="detective")
        table.phase("day", 0, 120)
        for i in range(3):
            table.say(5, f"Ari is sus, vote Ari {i}", 10 + i)
        table.phase("night", 200, 45)
        intent = table.policy.plan(sec(200))
        assert intent is not None and intent.kind == "night_act" and intent.target == "Finley"
        assert sec(200) < intent.at < sec(245 - 3)


def test_a_quiet_persona_talks_less() -> None:
    def lines(persona: str | None) -> int:
        total = 0
        for seed in range(30):
            table = Table(seed)
            table.policy = BaselinePolicy(0, "Ari", random.Random(seed), persona=persona)
            table.feed(GameStarted(t=T0, players=NAMES, mafia_count=2, extra_roles=()))
            table.feed(
                RoleAssigned(
                    t=T0,
                    place="booth",
                    visible_to=frozenset({0}),
                    seat=0,
                    name="Ari",
                    role="bystander",
                    team="bystanders",
                    partners=(),
                )
            )
            table.phase("day", 0, 120)
            now = sec(0)
            other = 0
            while (intent := table.policy.plan(now)) is not None:
                now = intent.at
                table.say(0, intent.text or "", (now - T0).total_seconds())
                table.policy.done(intent, None)
                for _ in range(4):  # the others keep talking in between
                    other += 1
                    table.say(1 + other % 7, f"filler {other}", (now - T0).total_seconds())
                total += 1
        return total

    assert lines("a quiet, reserved retiree") < lines(None) < lines("chatty and loud")


# --- the fast paths read, score and plan exactly like the plain ones ---------------------------


def _reference_reading(text: str, names: tuple[str, ...]) -> tuple[object, ...]:
    """How the templates' patterns read ``text`` (what Lexicon.read's word-set path must match)."""
    named = names_in_text(text, dict(enumerate(names)))
    accuses = bool(ACCUSE_WORDS.search(text))
    defends = not accuses and bool(DEFEND_WORDS.search(text))
    claim = None
    if named and DETECTIVE_WORD.search(text):
        if IS_MAFIA.search(text):
            claim = "mafia"
        elif defends or re.search(r"\b(clean|not mafia)\b", text, re.IGNORECASE):
            claim = "clean"
    pointed = bool(named) and (accuses or claim is not None)
    return (tuple(named), accuses, defends, claim, text.casefold(), pointed)


def test_the_lexicon_reads_every_line_as_its_patterns_do() -> None:
    rng = random.Random(11)
    names = NAMES
    extra = [
        "Ari, Ari and Blake!",
        "not mafia: Casey",
        "Drew is not mafia, i'm the detective",
        "they're mafia, Eden. detective here",
        "Finley_sus is fine",
        "Gray's vote... SUS?!",
        "harley-is-clean (detective)",
        "blake2 vote ari",
        "\u00c9den is sus, Ari",  # not ASCII: the patterns read it
        "Ari   is\tsus",
        "",
        "Ziggy is mafia",  # a name that is not at this table
    ]
    lines: list[str] = list(extra)
    keys = sorted(TEMPLATES)
    for _ in range(600):
        template = rng.choice(TEMPLATES[rng.choice(keys)])
        slots = {k: rng.choice(names) for k in ("x", "a", "v", "p")} | {
            "role": rng.choice(("mafia", "detective", "bystander")),
            "r": rng.choice(("doctor", "detective", "bystander")),
            "n": "2",
            "alive": "6",
        }
        slots["voters"] = " and ".join(rng.sample(names, 2))
        slots["tally"] = f"{rng.choice(names)} 2, {rng.choice(names)} 1"
        line = template.format_map(slots)
        if rng.random() < 0.3:
            line = line.upper()
        if rng.random() < 0.2:
            line = rng.choice(("ok ", "hm ", "so ")) + line + rng.choice(("...", " tbh", "!!"))
        lines.append(line)
    lexicon = Lexicon(names)
    for line in lines:
        assert tuple(lexicon.read(line)) == _reference_reading(line, names), line


def test_the_fast_reader_knows_the_same_words_as_the_patterns() -> None:
    def alternatives(pattern: re.Pattern[str]) -> list[str]:
        return pattern.pattern.replace("\\b", "").strip("()").split("|")

    def words(pattern: re.Pattern[str]) -> set[bytes]:
        return {w.encode() for w in alternatives(pattern) if " " not in w}

    assert words(ACCUSE_WORDS) == templates._ACCUSE_SET
    assert words(DEFEND_WORDS) == templates._DEFEND_SET
    # a defence of two words holds an accusing word, which the reader checks first
    phrases = [w for w in alternatives(DEFEND_WORDS) if " " in w]
    assert phrases and all(ACCUSE_WORDS.search(w) for w in phrases)


def test_planned_lines_are_ordinary_intents() -> None:
    table = Table(4)
    table.phase("day", 0, 120)
    intent = table.policy.plan(sec(0))
    assert intent is not None and intent.kind == "say" and intent.text
    plain = Intent(intent.at, "say", text=intent.text)
    assert intent == plain and hash(intent) == hash(plain) and repr(intent) == repr(plain)
    with pytest.raises(FrozenInstanceError):
        intent.text = "something else"  # type: ignore[misc]


def test_rescoring_one_accuser_gives_the_scores_of_a_full_recount() -> None:
    for seed in range(10):
        for role, partners in (("bystander", ()), ("mafia", ("Blake",))):
            table = Table(seed, role=role, partners=partners)
            table.phase("day", 0, 120)
            table.say(3, "Gray is sus", 1)
            table.policy.suspicion(), table.policy.danger()  # cached from here on
            for i, accuser in enumerate((3, 5, 3, 3, 6)):
                target = "Ari" if i % 2 == 0 or not partners else "Blake"
                table.say(accuser, f"{target} is sus, vote {target} {i}", 2 + i)
                seen = (table.policy.suspicion(), table.policy.danger())
                table.policy._cache.clear()  # (forget the cache: count everything again)
                assert seen == (table.policy.suspicion(), table.policy.danger())


# --- coming back after a restart: the service replays the game to the seat ---------------------

GREETINGS = {t.casefold() for t in templates.TEMPLATES["greet"]}


def test_a_replayed_greeting_of_mine_is_not_said_again() -> None:
    """After a restart the seat is fed the game so far, its own lines among them (no ``done``
    ever reported those): it must not greet the table a second time."""
    greeted_again = 0
    for seed in range(60):
        table = Table(seed)
        table.phase("day", 0, 120)
        table.say(0, "hi all", 3)  # mine, from before the restart
        table.say(1, "hey", 5)
        intent = table.policy.plan(sec(20))
        if intent is not None and intent.text and intent.text.casefold() in GREETINGS:
            greeted_again += 1
    assert greeted_again == 0


def test_a_draft_made_before_the_replay_reached_my_own_line_is_rewritten() -> None:
    """The seat plans as soon as the replayed phase starts, before the rest of the replay
    tells it what it already said: a draft that repeats one of its own earlier lines is
    replaced by another line."""
    for seed in range(40):
        table = Table(seed)
        table.phase("day", 0, 120)
        first = table.policy.plan(sec(30))  # (the restart: now is well into the phase)
        assert first is not None and first.text
        table.say(0, first.text, 4)  # ... and the replay shows I said exactly that at 0:04
        again = table.policy.plan(sec(30))
        assert again is None or (again.text and again.text.casefold() != first.text.casefold())


def test_my_line_heard_back_before_done_is_counted_once() -> None:
    """Live, the event of a line can reach the seat before the port reports it done; the
    line counts once either way, so the per-phase cap is the same."""
    counts = []
    for event_first in (False, True):
        table = Table(7)
        table.phase("day", 0, 600)
        policy = table.policy
        now, said = 0.0, 0
        for step in range(60):
            table.say(1 + step % 5, f"line number {step} from the others", now)
            now += 1.0
            intent = policy.plan(sec(now))
            if intent is None or intent.kind != "say" or not intent.text:
                continue
            now = max(now, (intent.at - T0).total_seconds())
            if event_first:
                table.say(0, intent.text, now)
                policy.done(intent, None)
            else:
                policy.done(intent, None)
                table.say(0, intent.text, now)
            said += 1
            if said == 3:
                break
        assert said == 3
        counts.append(policy._lines)
    assert counts == [3, 3]


# --- detective claims: believed only when they can be true ---------------------------------------


def _vote_after_claim(seed: int, roles: tuple[str, ...], reveal: str | None = None) -> str | None:
    """Seat 0 (town) hears Drew claim "detective: Casey is mafia" and then votes. With
    ``reveal``, Finley was eliminated first and shown to be that role... after Drew had also
    claimed Finley was mafia."""
    table = Table(seed, extra_roles=roles)
    table.phase("day", 0, 120)
    if reveal is not None:
        table.say(3, "i'm the detective and Finley is mafia. trust me", 2)
        table.feed(PlayerEliminated(t=sec(3), seat=5, name="Finley", role=reveal, cause="vote"))
    table.say(3, "detective here. Casey is mafia, vote them", 4)
    table.phase("vote", 120, 60)
    intent = _vote_intent(table, sec(120))
    return None if intent is None else intent.target


def test_a_detective_claim_in_a_game_without_a_detective_is_a_lie() -> None:
    believed = [_vote_after_claim(seed, ("detective",)) for seed in range(20)]
    assert believed.count("Casey") >= 15  # a detective is in play: the claim counts
    lied = [_vote_after_claim(seed, ()) for seed in range(20)]
    assert lied.count("Casey") == 0
    assert lied.count("Drew") >= 15  # the liar is the suspect


def test_a_claimer_proved_wrong_by_a_reveal_is_not_believed_again() -> None:
    caught = [_vote_after_claim(seed, ("detective",), reveal="bystander") for seed in range(20)]
    assert caught.count("Casey") == 0
    assert caught.count("Drew") >= 15


def test_the_seat_record_scores_as_the_policy_does() -> None:
    """The LLM agent's SeatRecord gives the policy's very scores, without a policy."""
    from agent.baseline import SeatRecord

    checked = 0
    for seed in range(6):
        result = simulate_fast(GameConfig(roles=("detective", "doctor")), 8, seed, keep_events=True)
        assert result.events is not None
        for seat in range(8):
            policy = BaselinePolicy(seat, "x", random.Random(seed))
            record = SeatRecord(seat, random.Random(seed))
            for event in result.events:
                policy.observe(event)
                record.observe(event)
                if isinstance(event, PhaseStarted) and seat in record.alive:
                    assert record.suspicion() == policy.suspicion()
                    assert record.danger() == policy.danger()
                    checked += 1
    assert checked > 100


# --- people's timing and manners ---------------------------------------------------------------

QUESTION = "ari why do you think drew is mafia?"  # to Ari (seat 0), about Drew (seat 3)


def test_a_question_put_by_name_is_answered_within_a_persons_latency() -> None:
    """Asked by name, the seat answers the question (here: why Drew), not as if accused, and
    within a person's answer latency, even when it meant to say nothing more this day."""
    from agent.baseline.speech import BANK
    from agent.baseline.timing import ANSWER_S

    silent = BaselineTiming(typed=False, day_rate=0.0, silent_day=1.0)  # nothing of its own
    why = {t.format(x="Drew", a="Blake") for t in BANK["answer_why"]}
    delays = []
    for seed in range(40):
        table = Table(seed, timing=silent)
        table.phase("day", 0, 120)
        assert table.policy.plan(sec(0)) is None
        table.say(1, QUESTION, 30)
        intent = table.policy.plan(sec(30))
        assert intent is not None and intent.kind == "say" and intent.text in why, intent
        delays.append((intent.at - sec(30)).total_seconds())
    assert max(delays) <= ANSWER_S[-1] + 1e-9
    assert statistics.median(delays) <= 15.0  # people answer in about 8 s


def test_a_question_naming_two_players_accuses_neither() -> None:
    """ "ari why do you think drew is mafia?" asks Ari something: it is no accusation of Ari
    (who would defend itself, "me?? no") nor of Drew."""
    for seat, role, partners in ((0, "bystander", ()), (3, "mafia", ("Drew",))):
        asked, quiet = (
            Table(5, seat=seat, role=role, partners=partners),
            Table(5, seat=seat, role=role, partners=partners),
        )
        for table in (asked, quiet):
            table.phase("day", 0, 120)
        asked.say(1, QUESTION, 30)
        quiet.say(1, "hmm ok", 30)
        ledger = asked.policy._ledger
        assert ledger.accused_by.get(1) is None and ledger.phase_accusers == {}
        assert asked.policy.suspicion() == quiet.policy.suspicion()
        assert asked.policy.danger() == quiet.policy.danger()
    table = Table(5)
    table.phase("day", 0, 120)
    table.say(1, "drew is mafia?", 30)  # a question to nobody: an accusation of Drew
    assert table.policy._ledger.accused_by == {1: {3: 1}}


def test_greetings_and_first_impressions_only_early_in_the_day() -> None:
    from agent.baseline.speech import BANK

    early = {*BANK["greet"], *BANK["open"]}
    for seed in range(60):
        table = Table(seed)
        table.phase("day", 0, 120)
        table.say(2, "hi", 1)
        table.say(3, "hello", 2)
        late = table.policy.plan(sec(60))  # half the day gone: no "first impressions anyone?"
        assert late is not None
        assert late.text not in early, late.text


def test_silent_in_the_vote_once_it_is_under_way() -> None:
    """The lull before the result: a question late in the vote gets no answer, and a seat
    says nothing new after the vote's first fifth."""
    timing = BaselineTiming(typed=False)
    answered = 0
    for seed in range(40):
        table = Table(seed, timing=timing)
        table.phase("vote", 0, 45)
        table.say(1, "ari who do you suspect?", 2)  # early: answered, soon
        intent = table.policy.plan(sec(2))
        if intent is not None and intent.kind == "say":
            answered += 1
            assert (intent.at - sec(0)).total_seconds() <= 0.25 * 45
        late = Table(seed, timing=timing)
        late.phase("vote", 0, 45)
        late.say(1, "ari who do you suspect?", 20)
        again = late.policy.plan(sec(20))
        assert again is None or again.kind == "vote", again
    assert answered >= 20


def test_whole_games_keep_peoples_timing() -> None:
    """Over whole games by day: own-message gaps close to people's (KS), and most days end in
    a lull (no line in the 30 s before the vote's result), as with people (50-81% by game set)."""
    from agent.baseline.timing import OWN_GAP_S, draw
    from research.likeness import days_from_events, figures, ks_distance

    days = []
    for seed in range(30):
        result = simulate_fast(GameConfig(), 8, 700 + seed, keep_events=True)
        assert result.events is not None
        days += days_from_events(result.events, "baseline")
    people = [draw(OWN_GAP_S, (i + 0.5) / 400) for i in range(400)]
    f = figures(days, "baseline")
    gaps = [b.t - a.t for d in days for a, b in _own_pairs(d)]
    ks = ks_distance(gaps, people)
    assert ks is not None and ks <= 0.15
    assert 0.45 <= f["lull"] <= 0.85
    assert 0.8 <= f["rate"] <= 1.3


def _own_pairs(day: Any) -> list[tuple[Any, Any]]:
    last: dict[str, Any] = {}
    out = []
    for x in day.lines:
        if x.speaker in last:
            out.append((last[x.speaker], x))
        last[x.speaker] = x
    return out


def test_typing_like_a_person_keeps_names_and_questions_readable() -> None:
    """Case, commas, little words and typos change how a line looks, never whom it names,
    whether it accuses, or whom a question is put to."""
    from agent.baseline.ledger import addressed
    from agent.baseline.speech import humanize
    from agent.templates import read_line

    table = Table(1, timing=BaselineTiming(typo=0.5, wrap=0.5))
    seat_of = {n.casefold(): i for i, n in enumerate(NAMES)}
    lines = ("Drew what do you think?", "i think Casey is sus, honestly", "what about you Eden?")
    changed = 0
    for line in lines:
        before = read_line(line, NAMES)
        asked = addressed(line, 0, seat_of, set(range(8)))
        for _ in range(200):
            typed = humanize(line, table.policy.speech_view())
            changed += typed != line
            after = read_line(typed, NAMES)
            assert after.named == before.named and after.accuses == before.accuses, typed
            assert addressed(typed, 0, seat_of, set(range(8))) == asked, typed
    assert changed > 300


def test_an_answer_said_before_a_restart_is_not_said_again() -> None:
    """Resumed, the seat is shown the question and then its own answer to it: the answer it
    plans again from the question (the same words, due the same moment) is that very line."""
    for seed in range(20):
        table = Table(seed)
        table.phase("day", 0, 120)
        table.say(1, "ari are you mafia?", 30)
        answer = table.policy.plan(sec(30))
        assert answer is not None and answer.text
        at = (answer.at - T0).total_seconds()
        table.say(0, answer.text, at)  # the replay reaches the line said before the restart
        again = table.policy.plan(sec(at))
        assert again is None or again.text != answer.text


def _day_lines(seed: int, seconds: float, extend_at: float | None = None) -> int:
    """The seat's lines in a day of ``seconds``, others talking every 10 s; with
    ``extend_at``: the day is given ``seconds`` more at that moment (an outage given back)."""
    table = Table(seed, timing=BaselineTiming())
    table.phase("day", 0, seconds)
    end, lines, now, other = seconds, 0, sec(0), 10.0
    while True:
        intent = table.policy.plan(now)
        at = (intent.at - T0).total_seconds() if intent is not None else end
        if extend_at is not None and at >= extend_at:
            while other <= extend_at:
                table.say(1 + int(other) % 4, f"line {other}", other)
                other += 10.0
            end = seconds * 2
            table.feed(PhaseExtended(t=sec(extend_at), phase="day", number=1, seq=table.seq,
                                     deadline=sec(end), seconds=seconds))  # fmt: skip
            now = sec(max(extend_at, (now - T0).total_seconds()))
            extend_at = None
            continue
        if intent is None or at >= end:
            return lines
        while other <= at:
            table.say(1 + int(other) % 4, f"line {other}", other)
            other += 10.0
        assert intent.kind == "say" and intent.text
        now = intent.at
        table.say(0, intent.text, at)
        table.policy.done(intent, None)
        lines += 1


def test_a_day_given_time_back_is_talked_through_like_a_longer_day() -> None:
    """A day of 3 minutes given 3 more (its input was down: a restart) is talked through as
    a day of 6 minutes is: the seat does not fall quiet in the time given back. Fails on the
    code that kept the 3-minute day's count of lines: about half as many."""
    seeds = range(80)
    extended = sum(_day_lines(s, 180.0, extend_at=170.0) for s in seeds)
    longer = sum(_day_lines(s, 360.0) for s in seeds)
    shorter = sum(_day_lines(s, 180.0) for s in seeds)
    assert shorter < 0.75 * longer, (shorter, longer)
    assert 0.8 * longer <= extended <= 1.25 * longer, (extended, longer, shorter)


def _first_after_extension(seed: int) -> float | None:
    """Seconds from a day's extension (its input back after a restart) to the seat's next
    line, when the line it had planned came due while the input was down (never typed)."""
    table = Table(seed, timing=BaselineTiming())
    table.phase("day", 0, 180.0)
    for k in range(4):
        table.say(1 + k, f"line {k} hmm", 5.0 + k)
    intent = table.policy.plan(sec(10.0))
    if intent is None:
        return None
    back = (intent.at - T0).total_seconds() + 20.0  # it came due in the downtime
    table.feed(PhaseExtended(t=sec(back), phase="day", number=1, seq=table.seq,
                             deadline=sec(360.0), seconds=180.0))  # fmt: skip
    again = table.policy.plan(sec(back))
    return None if again is None else (again.at - T0).total_seconds() - back


def test_a_line_that_came_due_in_a_restart_is_drawn_again_from_the_resume() -> None:
    """A line that came due while the bot was down is not fired the moment the input is
    back (every agent's would come out together, a burst just after the catch-up): the seat
    waits one of people's gaps from then, as after a line of its own. Fails on the code that
    fired it at once (half a typing of it later: about 2 s at most)."""
    delays = [d for s in range(60) if (d := _first_after_extension(s)) is not None]
    assert len(delays) >= 40, delays
    delays.sort()
    assert delays[len(delays) // 2] >= 5.0, delays
    assert sum(d < 1.0 for d in delays) <= len(delays) // 10, delays


def _lines_after(seed: int, rebuild_at: float | None, day: float = 180.0) -> int:
    """The seat's lines after 0:60 of a day of ``day`` s, others talking every 10 s; with
    ``rebuild_at``: the seat is built anew then (a restart) and fed the day so far, its own
    lines among them, as the service replays a game to a resumed seat."""
    table = Table(seed, timing=BaselineTiming())
    table.phase("day", 0, day)
    said: list[tuple[int, str, float]] = []
    now, other, after = 0.0, 10.0, 0
    while True:
        if rebuild_at is not None and now >= rebuild_at:
            table = Table(seed + 10_000, timing=BaselineTiming())
            table.phase("day", 0, day)
            for seat, text, at in said:
                table.say(seat, text, at)
            rebuild_at = None
        intent = table.policy.plan(sec(now))
        at = (intent.at - T0).total_seconds() if intent is not None else day
        if other <= min(at, day) and (rebuild_at is None or other <= rebuild_at):
            said.append((1 + int(other) % 4, f"line {other:.0f} hmm", other))
            table.say(*said[-1])
            now, other = other, other + 10.0
            continue
        if rebuild_at is not None and at >= rebuild_at:
            now = rebuild_at
            continue
        if intent is None or at >= day:
            return after
        assert intent.kind == "say" and intent.text
        said.append((0, intent.text, at))
        table.say(0, intent.text, at)
        table.policy.done(intent, None)
        after += at >= 60.0
        now = at


def test_a_seat_rebuilt_after_a_restart_talks_as_much_as_one_that_went_on() -> None:
    """Rebuilt after a restart, a seat counts the lines it said before it towards its day's
    count: after the restart it says as much as a seat that was never rebuilt, not its whole
    count again (a seat louder after each restart, which a player could tell). Fails on the
    code that counted only a replayed line it had drafted again itself: about 40% more."""
    seeds = range(200)
    went_on = sum(_lines_after(s, None) for s in seeds)
    rebuilt = sum(_lines_after(s, 60.0) for s in seeds)
    assert went_on >= 150, went_on
    assert 0.85 * went_on <= rebuilt <= 1.15 * went_on, (rebuilt, went_on)
