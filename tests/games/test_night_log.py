"""Night actions and their results read back from events: each role's action and result as a
sentence, and one row per actor a night with the result it learnt at dawn."""

from __future__ import annotations

from collections.abc import Mapping

from games.night_log import night_rows, night_sentence

NAMES = {0: "Kai", 1: "Avery", 2: "Blake", 3: "Lee", 4: "Sam"}
ROLES = {0: "escort", 1: "mafia", 2: "bystander", 3: "tracker", 4: "veteran"}


def act(seat: int, verb: str, target: int) -> tuple[str, Mapping[str, object]]:
    payload = {"seat": seat, "role": ROLES[seat], "verb": verb, "target": target}
    return "night_action", {**payload, "target_name": NAMES[target]}


def note(
    seat: int, verb: str, target: int, result: str, *seen: int
) -> tuple[str, Mapping[str, object]]:
    return "private_note", {
        "seat": seat,
        "verb": verb,
        "target": target,
        "target_name": NAMES[target],
        "result": result,
        "seats": list(seen),
        "names": [NAMES[s] for s in seen],
    }


def night(n: int) -> tuple[str, Mapping[str, object]]:
    return "phase_started", {"phase": "night", "number": n, "seq": 2 * n}


def say(event: tuple[str, Mapping[str, object]]) -> str:
    return night_sentence(event[0], event[1], NAMES, ROLES)


def test_each_role_s_action_reads_as_done() -> None:
    assert say(act(0, "block", 1)) == "Kai (escort) blocked Avery."
    assert say(act(3, "track", 1)) == "Lee (tracker) followed Avery."
    assert say(act(4, "alert", 4)) == "Sam (veteran) went on alert."
    roles = {0: "vigilante", 1: "bus_driver", 2: "lookout", 3: "survivor"}
    said = [
        night_sentence(
            "night_action", {"seat": s, "role": roles[s], "verb": v, "target_name": t}, NAMES
        )
        for s, v, t in (
            (0, "shoot", "Blake"),
            (1, "swap with", "Lee"),
            (2, "watch", "Kai"),
            (3, "vest", "Lee"),
        )
    ]
    assert said == [
        "Kai (vigilante) shot at Blake.",
        "Avery (bus_driver) swapped places with Lee.",
        "Blake (lookout) watched the house of Kai.",
        "Lee (survivor) put on a vest.",
    ]


def test_each_result_reads_as_what_its_actor_learnt() -> None:
    assert say(note(3, "track", 1, "visited", 2)) == "Lee (tracker) saw Avery visit Blake."
    assert say(note(3, "track", 1, "visited")) == "Lee (tracker) saw Avery go nowhere."
    assert (
        say(note(3, "watch", 2, "visitors", 1, 0)) == "Lee (tracker) saw Avery and Kai visit Blake."
    )
    assert say(note(3, "watch", 2, "visitors")) == "Lee (tracker) saw nobody visit Blake."
    assert (
        say(note(0, "investigate", 1, "escort")) == "Kai (escort) learned that Avery is an escort."
    )
    assert say(note(0, "investigate", 1, "mafia")) == "Kai (escort) learned that Avery is mafia."
    assert (
        say(note(1, "block", 2, "blocked"))
        == "Avery (mafia) was blocked: their action did nothing."
    )
    inspection = ("inspection_result", {"seat": 0, "target_name": "Avery", "is_mafia": True})
    assert say(inspection) == "Kai (escort) learned that Avery is mafia."


def test_rows_carry_the_last_choice_and_the_dawn_result_of_each_actor() -> None:
    events = [
        night(1),
        act(3, "track", 2),
        act(3, "track", 1),  # a changed mind: the last choice counts
        act(0, "block", 1),
        note(3, "track", 1, "visited", 2),
        ("phase_started", {"phase": "day", "number": 2, "seq": 3}),
        night(2),
        act(3, "track", 0),
        note(1, "attack", 2, "blocked"),  # a note for a seat without a row: no row made
        act(4, "alert", 4),
    ]
    rows = night_rows(events, NAMES)
    got = [(r.night, r.actor_name, r.role, r.verb, r.target_name, r.result) for r in rows]
    assert got == [
        (1, "Kai", "escort", "block", "Avery", ""),
        (1, "Lee", "tracker", "track", "Avery", "visited Blake"),
        (2, "Lee", "tracker", "track", "Kai", ""),
        (2, "Sam", "veteran", "alert", "Sam", ""),
    ]


def test_a_blocked_actor_s_row_says_so() -> None:
    rows = night_rows([night(1), act(3, "track", 1), note(3, "track", 1, "blocked")], NAMES)
    assert [r.result for r in rows] == ["blocked"]
