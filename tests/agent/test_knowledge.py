"""SeatKnowledge learns only what its seat was shown, counts this phase's talk, knows the legal
targets, and keeps the prompt window bounded however long the game runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent.knowledge import SeatKnowledge
from games import GameConfig, GameState, apply, new_game
from games.actions import Action, NightAct, Say, Tick, Vote
from games.events import Event, MessageAccepted, visible
from games.state import PhaseKind

T0 = datetime(2025, 2, 10, 20, 0, 0, tzinfo=UTC)
NAMES = ["Ari", "Ariel", "Blake", "Casey", "Drew", "Eden", "Finley"]
DEAL = ("bystander", "bystander", "mafia", "mafia", "detective", "doctor", "bystander")
CONFIG = GameConfig(
    deal=DEAL,
    roles=("detective", "doctor"),
    day_seconds=60,
    vote_seconds=30,
    night_seconds=30,
    night_vote_seconds=20,
)


class Game:
    def __init__(self) -> None:
        self.t = T0
        self.state: GameState
        self.state, self.events = new_game(CONFIG, NAMES, 3, T0)

    def do(self, action: Action) -> list[Event]:
        self.state, events = apply(self.state, action)
        self.events.extend(events)
        return events

    def at(self, seconds: float) -> datetime:
        self.t = self.t + timedelta(seconds=seconds)
        return self.t

    def end_phase(self) -> None:
        assert self.state.phase.deadline is not None
        self.t = self.state.phase.deadline
        self.do(Tick(self.t))


def seen_by(seat: int, events: list[Event]) -> SeatKnowledge:
    k = SeatKnowledge(seat, NAMES[seat])
    for e in events:
        if visible(e, seat):
            k.observe(e)
    return k


def test_events_for_other_seats_are_refused_and_learn_nothing() -> None:
    g = Game()
    g.end_phase()  # vote
    g.end_phase()  # night
    g.do(Say(2, "kill finley", g.at(1)))
    k = SeatKnowledge(0, "Ari")
    for e in g.events:
        k.observe(e)  # handed everything, as a buggy caller might
    assert k.role == "bystander" and k.partners == ()
    assert all("finley" not in line.text for line in k.lines if line.place == "den")
    assert not any(e.place == "den" for e in k.lines)
    mafia = seen_by(2, g.events)
    assert mafia.partners == ("Casey",) and mafia.is_mafia
    assert any(line.text == "kill finley" for line in mafia.lines)


def test_phase_counts_are_own_and_all_player_messages_without_vote_lines() -> None:
    g = Game()
    g.do(Say(0, "hi", g.at(1)))
    g.do(Say(1, "hello", g.at(1)))
    g.do(Say(2, "hey", g.at(1)))
    k = seen_by(0, g.events)
    assert (k.phase_own, k.phase_total) == (1, 3)
    g.end_phase()
    g.do(Vote(1, 2, g.at(1)))  # a Game-Manager vote line, not a player message
    g.do(Say(3, "i vote blake too", g.at(1)))
    k = seen_by(0, g.events)
    assert (k.phase_own, k.phase_total) == (0, 1)
    assert k.current_votes == {"Ariel": "Blake"}
    assert any(line.text == "Ariel voted for Blake" and line.is_manager for line in k.lines)
    assert k.below_share()  # 0 of 1 < 1/7


def test_share_threshold_is_one_over_the_players_in_the_room() -> None:
    g = Game()
    g.do(Say(0, "one", g.at(1)))
    for i in range(6):
        g.do(Say(1 + i % 6, f"line {i}", g.at(1)))
    k = seen_by(0, g.events)
    assert (k.phase_own, k.phase_total, k.room_size()) == (1, 7, 7)
    assert not k.below_share()  # exactly 1/7 is a fair share: listen
    g.do(Say(3, "another", g.at(1)))
    assert seen_by(0, g.events).below_share()


def test_legal_targets_follow_the_rules() -> None:
    g = Game()
    g.end_phase()
    k = seen_by(0, g.events)
    assert k.phase is PhaseKind.VOTE and k.votes_now()
    assert list(k.vote_targets().values()) == NAMES[1:]
    g.do(Vote(0, 1, g.at(1)))
    g.end_phase()  # Ariel voted out by one vote
    mafia = seen_by(2, g.events)
    assert mafia.phase is PhaseKind.NIGHT and mafia.room() == "den"
    assert seen_by(0, g.events).room() is None  # a bystander is silent at night
    doctor = seen_by(5, g.events)
    assert doctor.acts_tonight() and "Eden" in doctor.night_targets_now().values()
    detective = seen_by(4, g.events)
    assert "Drew" not in detective.night_targets_now().values()
    g.do(NightAct(5, 5, g.at(1)))  # the doctor protects herself
    g.do(NightAct(4, 3, g.at(1)))  # the detective checks Casey
    g.end_phase()
    night_vote = seen_by(2, g.events)
    assert night_vote.votes_now()
    assert list(night_vote.vote_targets().values()) == ["Ari", "Drew", "Eden", "Finley"]
    assert not seen_by(0, g.events).votes_now()
    g.end_phase()  # no kill; day 2
    g.end_phase()
    g.end_phase()  # night 2
    doctor = seen_by(5, g.events)
    assert doctor.phase is PhaseKind.NIGHT and doctor.phase_number == 2
    assert "Eden" not in doctor.night_targets_now().values()  # not twice running
    detective = seen_by(4, g.events)
    assert detective.inspections == {"Casey": True}
    assert "Your investigations: Casey IS mafia." in detective.status()
    assert "Ariel (bystander, voted out on day 1)" in detective.status()


def test_the_window_is_bounded_and_flat_as_the_game_grows() -> None:
    g = Game()
    sizes = []
    for i in range(600):
        g.do(Say(1 + i % 6, f"message number {i} with some ordinary words in it", g.at(0.05)))
        if i in (20, 100, 599):
            k = seen_by(0, g.events)
            window = k.window(max_lines=30, max_chars=2400)
            sizes.append(sum(len(x) + 1 for x in window))
            assert len(window) <= 30 and sizes[-1] <= 2400
            assert window[-1].endswith(f"message number {i} with some ordinary words in it")
    assert abs(sizes[2] - sizes[1]) <= 0.05 * sizes[1]  # once full, it stays the same size
    status = len(seen_by(0, g.events).status())
    assert status < 400


def test_a_huge_line_is_cut_rather_than_evicting_the_window() -> None:
    g = Game()
    for i in range(5):
        g.do(Say(1, f"short {i}", g.at(1)))
    g.do(Say(2, "x" * 900, g.at(1)))
    window = seen_by(0, g.events).window(max_lines=30, max_chars=2400)
    assert len(window) == 8  # two manager lines and six messages
    assert len(window[-1]) < 330


def test_chat_lines_render_like_the_research_logs() -> None:
    g = Game()
    g.do(Say(3, "im not it", g.at(10)))
    k = seen_by(0, g.events)
    window = k.window(10, 2000)
    assert window[0].startswith("[20:00:00] Game-Manager: The game begins with 7 players")
    assert window[-1] == "[20:00:10] Casey: im not it"
    assert k.chat_opened == T0


def test_addressed_means_someone_else_used_the_whole_name() -> None:
    g = Game()
    g.do(Say(2, "ariel what do you think", g.at(1)))
    k = seen_by(0, g.events)
    msgs = [e for e in k.messages]
    assert not k.addressed_in(msgs)  # "Ariel" is not "Ari"
    g.do(Say(3, "and ARI?", g.at(1)))
    k = seen_by(0, g.events)
    assert k.addressed_in(k.messages_by_others_since(1))
    assert isinstance(g.events[-1], MessageAccepted)
