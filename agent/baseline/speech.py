"""What the baseline says: the situations worth a line now, and a fresh rendering of one.

Each ``opt_*`` function looks at a policy's view of the game and offers a kind of line
(weight, template, slots, the topic it settles) or nothing; :func:`compose` picks one by
weight and renders only that one, never a line this seat said or heard before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from importlib import resources

from agent.baseline.common import _DAY_K, _EMPTY, _NO_VOTE, _VOTE_K, MAFIA_ROLES, Option, span
from agent.baseline.view import Speaker, SpeechView
from agent.templates import PREFIXES, SUFFIXES, TEMPLATES, Reading
from games.names import display_list

__all__ = ["ANSWERS", "BANK", "compose", "humanize"]

_Option = Option
_GREETING = timedelta(0, 30.0)
_I = re.compile(r"\bi\b")
_SUS = re.compile(r"\bsus\b")
#: "sus" as people say it (each is one of the words the lexicon reads as accusing)
_SUS_SAID = ("sus", "suspicious", "mafia", "weird", "the mafia")
_OPENERS = ("ok ", "hm ", "hmm ", "so ", "well ", "tbh ", "honestly ", "ngl ", "guys ",
            "wait ", "yeah ", "ok so ", "lol ", "i mean ", "like ")  # fmt: skip
_CLOSERS = (" tbh", " lol", " imo", " ngl", " honestly", "..", " haha", " i think",
            " lmao", " tho", " fr", "!", " though", " guys")  # fmt: skip
_NO_READING = Reading((), False, False, None, "")
#: a line -> the line with a capital and "I" (humanize's memo)
_CAPITALISED: dict[str, str] = {}
_DENY = re.compile(r"\b(are you|r u|you|u) (the |a )?mafia|confess|defen[cs]e|save yourself")

#: answers to a question put to this seat by name, by what it asks
ANSWERS: dict[str, tuple[str, ...]] = {
    "answer_why": (
        "i dont know {x} just feels off", "{x} has been dodging everything",
        "just a vibe from {x} tbh",
        "{x} was weird earlier", "cause {x} keeps changing the subject", "{x} is too quiet",
        "gut feeling about {x}", "{x} voted weird", "dunno, {x} seems off",
        "the way {x} talks", "{x} keeps pushing random people", "{x} hasnt said anything real",
        "because {x} is acting weird", "{x} just seems off to me", "{x} dodged my q",
    ),
    "answer_deny": (
        "no lol", "nope", "no im not", "im not mafia", "not me i swear", "lol no",
        "nah im town", "why would i be", "no?? why", "definitely not", "no, bystander",
        "haha no", "nope just a bystander", "{a} no lol", "{a} im not", "no {a}, im town",
        "{a} nope", "{a} are YOU mafia?", "lol {a} no",
    ),
    "answer_who": (
        "{x} probably", "prob {x}", "{x} tbh", "im thinking {x}", "{x} maybe", "kinda {x}",
        "{x} i guess", "{x} for now", "leaning {x}", "{a} i think {x}", "{x} {a}, you?",
    ),
    "answer_quiet": (
        "just reading", "im here", "nothing to add yet", "just watching", "im listening",
        "here, reading", "still here lol", "{a} im here lol", "{a} just reading",
    ),
    "answer_any": (
        "no idea honestly", "not sure yet", "hmm good question", "i dont know yet", "nothing much",
        "just watching for now", "i have nothing to say", "same as everyone i guess", "dunno",
        "no idea tbh", "hmm not sure", "still thinking", "{a} not sure yet", "{a} not sure",
        "{a} hmm no idea", "{a} good question", "idk {a}, you?", "{a} nothing yet",
    ),
}  # fmt: skip


#: more lines for the hand-written situations, in the people's register
MORE: dict[str, tuple[str, ...]] = {
    "defend": (
        "wait what", "huh? why me", "bro i literally did nothing", "im a bystander lol",
        "not me guys", "ok thats random", "i swear im not", "come on", "wrong person",
        "nope not me", "why is everyone on me", "im just a normal bystander", "lol what",
        "i didnt even say anything", "seriously?", "ok but its not me", "no no no",
    ),
    "defend_back": (
        "{a} why me lol", "{a} thats so random", "{a} you came out of nowhere, sus",
        "{a} deflecting much? sus", "{a} what did i do to you", "{a} nope, look at yourself",
        "{a} i could say the same about you", "{a} thats exactly what mafia would say",
        "{a} ur pushing me way too hard, sus", "{a} no. why are you so sure",
    ),
    "filler": (
        "hmm", "true", "fair", "ok ok", "wait", "hmmm ok", "right", "good point", "yeah true",
        "i dont know man", "lmao", "makes sense", "not sure", "lets see", "ok then", "i see",
        "ya", "yep", "same", "ok fair", "hm", "wow", "damn", "oh ok", "sure",
        "this is hard lol", "no clue", "ok wait", "honestly no idea", "thats fair",
    ),
    "open": (
        "ok so who is it", "any ideas?", "no clue yet", "everyone says hi, classic",
        "lets find them", "who seems off so far", "so who do we suspect", "quiet start",
        "anyone have a feeling?", "ok lets think", "so... who", "anyone acting weird?",
        "lets just talk a bit first", "hard to tell yet", "good luck guys",
    ),
    "late": (
        "we need to vote soon", "time is almost up", "ok lets pick", "decide guys",
        "who are we voting", "running out of time", "lets go with someone", "clock guys",
        "vote soon pls", "so who is it then",
    ),
    "quiet": (
        "{x} you there?", "{x} is so quiet", "{x} hasnt said much", "{x} say something",
        "where is {x}", "{x}?", "{x} whats your take", "{x} too quiet, sus",
    ),
    "ask": (
        "{x} who do you think?", "{x} thoughts?", "{x} what do you think", "{x} any ideas?",
        "{x} who do you suspect", "{x} who are you voting", "what do you think {x}?",
        "{x} why so quiet?", "{x} anything?", "{x} are you mafia?",
    ),
    "accuse": (
        "{x} is sus ngl", "{x} kinda sus", "{x} is weird", "i dont trust {x}, sus",
        "{x} is acting sus", "{x} for sure, mafia", "its {x} guys, vote", "{x} is so sus",
        "lets vote {x}", "{x} seems sus to me", "i think its {x}, sus", "{x}... sus",
        "something off with {x}", "vote {x} i think", "{x} is lying",
    ),
    "vote_state": (
        "voted {x}", "{x}", "vote {x}", "going {x}", "{x} from me", "i voted {x}",
    ),
    "agree": (
        "{x} yeah agree with {a}, sus", "{a} is right, {x} is sus", "{x} yes, vote with {a}",
        "{x}, agree {a}. sus", "same as {a}, {x} sus",
    ),
}  # fmt: skip


def _people_lines() -> dict[str, tuple[str, ...]]:
    """People's lines from the LLMafia games (MIT; see the file's attribution)."""
    raw = resources.files("agent.baseline").joinpath("people_lines.json").read_text("utf-8")
    return {k: tuple(v) for k, v in json.loads(raw)["lines"].items()}


def _bank() -> dict[str, tuple[str, ...]]:
    people = _people_lines()
    # people's own lines count twice: they are what people say
    bank = {
        k: (*v, *MORE.get(k, ()), *people.get(k, ()), *people.get(k, ()))
        for k, v in TEMPLATES.items()
    }
    bank.update({k: (*v, *v) for k, v in people.items() if k not in bank})
    bank.update(ANSWERS)
    return bank


#: every line the baseline can say, by situation: the hand-written templates, people's lines
#: and the answers above
BANK: dict[str, tuple[str, ...]] = _bank()
#: the small changes that make a used line new
_VARIANTS = tuple((p, s) for p in PREFIXES for s in SUFFIXES if p or s)


def compose(p: SpeechView | Speaker, now: datetime) -> tuple[str, _Option] | None:
    """Pick a situation by weight, then build and render only that one (cheap). ``p``: the
    seat's view, or what makes one (a `BaselinePolicy`, as the LLM seat's shadow is)."""
    if not isinstance(p, SpeechView):
        p = p.speech_view()
    if p.night:
        ready: list[_Option] = den_options(p)
        while ready:
            opt = ready.pop(weighted_index(p, [o[0] for o in ready]))
            text = fresh(p, opt[1], opt[2])
            if text is not None:
                return text, opt
        return None
    if p.answer_from is not None:  # a question put to me comes first, if it can be answered
        weights, builders = [1.0], [_ANSWER]
    else:
        weights, builders = stage_choices(p, now)
    draw = p.rng.random
    while weights:
        # (weighted_index, inlined: the same draw and the same sums)
        pick = draw() * sum(weights)
        index, last = 0, len(weights) - 1
        while index < last:  # (the last one is taken whatever is left of the pick)
            pick -= weights[index]
            if pick <= 0:
                break
            index += 1
        del weights[index]
        built = builders.pop(index)(p)
        if built is None:
            continue
        text = fresh(p, built[1], built[2])
        if text is None:
            continue
        # typed as a person types it, and still never a line said or heard before
        if not p.timing.typed:
            return text, built
        for _ in range(3):
            typed = humanize(text, p)
            folded = typed.casefold()
            if folded not in p.said and folded not in p.ledger.heard:
                return typed, built
    return None


def weighted_index(p: SpeechView, weights: list[float]) -> int:
    pick = p.rng.random() * sum(weights)
    for index, w in enumerate(weights):
        pick -= w
        if pick <= 0:
            return index
    return len(weights) - 1


def fresh(p: SpeechView, key: str, slots: Mapping[str, str]) -> str | None:
    """A rendering of ``key`` this seat has never said nor heard."""
    mine, heard, den = p.said, p.ledger.heard, p.den_heard
    templates = BANK[key]
    n = len(templates)
    draw = p.rng.random
    first = int(draw() * n)  # (a uniform index, like randrange(n), at a fraction of the cost)
    for k in range(n):
        text = templates[(first + k) % n].format_map(slots)
        folded = text.casefold()
        if folded not in heard and folded not in mine and folded not in den:
            return text
    # all said: the same line with a small change, one of the unused changes at random
    # (drawn one at a time: the first new one of a shuffled list, without the shuffle)
    base = templates[int(draw() * n)].format_map(slots)
    variants = list(_VARIANTS)
    while variants:
        pre, post = variants.pop(int(draw() * len(variants)))
        text = f"{pre}{base}{post}"
        folded = text.casefold()
        if folded not in heard and folded not in mine and folded not in den:
            return text
    return None


def stage_choices(p: SpeechView, now: datetime) -> tuple[list[float], list[_Builder]]:
    """The situations worth a line now: weights, and for each the function that builds
    its line from this policy (only the one picked is built)."""
    day = p.day
    kind = p.kind
    weights: list[float] = []
    builders: list[_Builder] = []
    w = weights.append
    b = builders.append
    if p.accused_me:
        w(6.0)
        b(_DEFEND)
    if p.role == "detective":
        if p.reveal is not None and p.reveal in p.alive:
            w(8.0)
            b(_REVEAL)
        if kind is _VOTE_K and p.votes_now:
            w(6.0)
            b(_DET_CLEAN)
    # a greeting fits a day's first half minute, "first impressions" its first third
    if day == 1 and kind is _DAY_K and now < p.start + span(p.seconds / 3):
        if p.lines == 0 and now < p.start + _GREETING:
            w(6.0)
            b(_GREET)
        w(1.5)
        b(_OPEN)
    alive = len(p.alive)
    total = p.chat.total
    # news is news early in the day; two minutes later "rip X" sounds like a bot
    if day > 1 and kind is _DAY_K and total < 1.5 * alive and now < p.start + span(p.seconds / 2):
        topics = p.topics
        if ("night", day) not in topics:
            if p.night_victim is not None:
                w(5.0)
                b(_NIGHT_KILL)
            elif p.night_none:
                w(4.0)
                b(_NIGHT_NONE)
        elim = p.last_day_elim
        if elim is not None and day == elim[3] + 1 and ("elim", day) not in topics:
            w(2.5)
            b(_ELIM)
        if ("day", day) not in topics:
            w(0.8)
            b(_DAY_COUNT)
    w(3.0)
    b(_ACCUSE)
    if kind is _VOTE_K:
        w(3.0)
        b(_VOTE_STATE)
        if p.votes_now:
            w(1.0)
            b(_TALLY)
    if now >= p.late_at:  # (half the vote, or 70% of the discussion, is gone)
        w(0.8)
        b(_LATE)
    if total >= alive:
        w(1.2)
        b(_QUIET)
    weights += _TAIL_WEIGHTS
    builders += _TAIL_BUILDERS
    return weights, builders


def choose(p: SpeechView, options: list[_Option]) -> _Option | None:
    if not options:
        return None
    return options[weighted_index(p, [o[0] for o in options])]


def opt_defend(p: SpeechView) -> _Option | None:
    accusers = [a for a in p.accused_me if a in p.alive]
    if not accusers:
        return None
    a = accusers[-1]
    topic: tuple[object, ...] = ("defend", a, p.seq, len(accusers))
    opts: list[_Option] = [(3.0, "defend", {}, topic)]
    if a in p.others_set:
        name = p.names[a]
        opts.append((3.0, "defend_back", {"a": name}, topic))
        opts.append((1.5, "accuse_me", {"x": name}, topic))
    return choose(p, opts)


def opt_reveal(p: SpeechView) -> _Option | None:
    found = p.reveal
    if found is None or found not in p.alive or ("det", found) in p.topics:
        return None
    return (8.0, "det_mafia", {"x": p.names[found]}, ("det", found))


def opt_det_clean(p: SpeechView) -> _Option | None:
    """Save a player I know is clean from a forming lynch; a coin toss, once a day."""
    tally = p.tally_now
    for s, n in tally.most_common(1):
        gate = ("det-clean", s, p.day)
        if p.inspections.get(s) is False and n >= 2 and gate not in p.topics:
            if gate not in p.gates:
                p.gates[gate] = p.rng.random() < 0.5
            if p.gates[gate]:
                return (6.0, "det_clean", {"x": p.names[s]}, gate)
    return None


def opt_greet(p: SpeechView) -> _Option | None:
    return (6.0, "greet", {}, ("greet",))


def opt_open(p: SpeechView) -> _Option | None:
    return (1.5, "open", {}, None)


def opt_night_kill(p: SpeechView) -> _Option | None:
    if p.night_victim is None:
        return None
    v, role = p.night_victim
    topic = ("night", p.day)
    name = p.names[v]
    opts: list[_Option] = [(5.0, "night_kill", {"v": name, "role": role}, topic)]
    accused_by = p.ledger.accused_by.get(v, _EMPTY)
    others = p.others_set
    accused = [(n, b) for b, n in accused_by.items() if b in others]
    if accused:
        x = p.names[max(accused)[1]]
        opts.append((2.0, "night_kill_reason", {"v": name, "x": x}, topic))
    return choose(p, opts)


def opt_night_none(p: SpeechView) -> _Option | None:
    topic = ("night", p.day)
    if p.doctor_in_play:
        return choose(p, [(4.0, "night_none", {}, topic), (2.0, "night_saved", {}, topic)])
    return (4.0, "night_none", {}, topic)


def opt_elim(p: SpeechView) -> _Option | None:
    if p.last_day_elim is None:
        return None
    v, role, voters, _d = p.last_day_elim
    if p.mafia and v in p.partners:
        return None
    topic = ("elim", p.day)
    name = p.names[v]
    if role in MAFIA_ROLES:
        return (2.5, "elim_mafia", {"v": name}, topic)
    others = p.others_set
    shown = [p.names[s] for s in voters if s in others]
    if shown and p.seat not in voters:  # (who voted for it too blames nobody)
        slots = {"v": name, "voters": display_list(shown), "r": role}
        return (2.5, "elim_bystander", slots, topic)
    return (2.0, "elim_bystander_plain", {"v": name, "r": role}, topic)


def opt_day_count(p: SpeechView) -> _Option | None:
    slots = {"n": str(p.day), "alive": str(len(p.alive))}
    return (0.8, "day_count", slots, ("day", p.day))


def opt_accuse(p: SpeechView) -> _Option | None:
    """Point at the top suspect (town) or the deflection target (mafia), with a reason
    when the record gives one."""
    mine_now = p.voted
    # once I voted, the one I voted for is the one I point at
    top = mine_now if mine_now in p.others_set else p.day_target()
    if top is None:
        return None
    names = p.names
    ledger = p.ledger
    x = names[top]
    score = p.my_scores().get(top, 0.0)
    about: tuple[object, ...] = ("vote_state", top)  # (a line naming whom I vote out)
    opts: list[_Option] = [(2.5 if score >= 1.0 else 1.2, "accuse", {"x": x}, about)]
    revealed = p.revealed.get
    voted = p.voted_by.get(top)
    mine = p.voted_by.get(p.seat, _EMPTY)  # (who voted a bystander out blames nobody)
    if voted:
        for victim in voted:
            if revealed(victim, "mafia") not in MAFIA_ROLES:
                if victim not in p.partners and victim not in mine:
                    slots = {"x": x, "v": names[victim], "r": revealed(victim, "bystander")}
                    opts.append((2.5, "accuse_vote", slots, about))
                break
    accused = ledger.accused_by.get(top)
    if accused:
        for victim in accused:
            if revealed(victim, "mafia") not in MAFIA_ROLES:
                if victim != p.seat and victim not in p.partners and victim not in mine:
                    slots = {"x": x, "v": names[victim], "r": revealed(victim, "bystander")}
                    opts.append((2.0, "accuse_accused", slots, about))
                break
    # ("accuse_loud" is never offered: its test, _activity([top]) >= 0.2, compares the
    # player with itself and so never holds. Meant was "louder than the table"; turning
    # that on would change how the baseline plays, so it stays off until done on purpose)
    on_top = ledger.phase_accusers.get(top)
    if on_top:
        others = p.others_set
        agree = [a for a in on_top if a in others]
        if agree:
            opts.append((1.5, "agree", {"x": x, "a": names[agree[-1]]}, about))
    return choose(p, opts)


def opt_vote_state(p: SpeechView) -> _Option | None:
    if p.voted == _NO_VOTE:
        target = p.day_choice()
    else:
        target = p.change_to if p.change_to is not None else p.voted
    if target is None or target not in p.others_set:
        return None
    return (3.0, "vote_state", {"x": p.names[target]}, ("vote_state", target))


def opt_tally(p: SpeechView) -> _Option | None:
    tally = p.tally_now
    if not tally or (p.mafia and any(s in p.partners for s in tally)):
        return None
    # a player counting the votes calls their own "me" ("Drew 2" from Drew reads oddly)
    names, me = p.names, p.seat
    text = ", ".join(f"{'me' if s == me else names[s]} {n}" for s, n in tally.most_common(3))
    return (1.0, "tally", {"tally": text}, ("tally",))


def opt_late(p: SpeechView) -> _Option | None:
    return (0.8, "late", {}, None)


def opt_quiet(p: SpeechView) -> _Option | None:
    said = p.chat.msgs
    quiet = [s for s in p.others_now if s not in said]
    if not quiet:
        return None
    pick = quiet[int(p.rng.random() * len(quiet))]
    return (1.2, "quiet", {"x": p.names[pick]}, None)


def opt_ask(p: SpeechView) -> _Option | None:
    pool = p.others_now
    if not pool:
        return None
    pick = pool[int(p.rng.random() * len(pool))]
    return (1.0, "ask", {"x": p.names[pick]}, None)


def opt_filler(p: SpeechView) -> _Option | None:
    return (0.4, "filler", {}, None)


def opt_answer(p: SpeechView) -> _Option | None:
    """An answer to the question put to me by name, by what it asks."""
    asker = p.answer_from
    if asker is None:
        return None
    asked = p.asked.casefold()
    topic: tuple[object, ...] = ("answer", asker, p.seq, p.lines)
    a = p.names[asker]
    others = [
        n for n in p.ledger.readings.get(p.asked, _NO_READING).named
        if n != p.seat and n != asker and n in p.others_set
    ]  # fmt: skip
    if _DENY.search(asked):
        return (1.0, "answer_deny", {"a": a}, topic)
    if "why" in asked and others:
        return (1.0, "answer_why", {"x": p.names[others[0]], "a": a}, topic)
    if "who" in asked or "suspect" in asked or "vote" in asked:
        top = p.day_choice()
        if top is not None and top in p.others_set:
            return (1.0, "answer_who", {"x": p.names[top], "a": a}, topic)
    if "quiet" in asked or "there" in asked or "here" in asked:
        return (1.0, "answer_quiet", {"a": a}, topic)
    return (1.0, "answer_any", {"a": a}, topic)


def humanize(text: str, p: SpeechView) -> str:
    """A person's typing: half the lines all lowercase, the rest with a capital and "I";
    few commas, no full stop; the odd "ok" or "lol" around a line; "sus" said other ways;
    now and then two letters of a longer word swapped (never in a name: the table must
    still read it, nor around a name that opens or closes a line: "drew what do you
    think?" must stay a question put to drew)."""
    rng = p.rng.random
    timing = p.timing
    names = p.ledger.seat_of
    if rng() < timing.lowercase:
        text = text.lower()
    else:  # (a capital and "I": the lines come from a bank, so the same ones come again)
        capital = _CAPITALISED.get(text)
        if capital is None:
            if len(_CAPITALISED) >= 4096:
                _CAPITALISED.clear()
            capital = _CAPITALISED[text] = _I.sub("I", text[:1].upper() + text[1:])
        text = capital
    if rng() < 0.7:
        text = text.replace(",", "")
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1]
    if rng() < 0.5:
        text = text.replace(". ", " ")
    if rng() < 0.5 and "sus" in text:  # (no "sus": nothing to change, nothing drawn)
        text = _SUS.sub(lambda _m: _SUS_SAID[int(rng() * len(_SUS_SAID))], text)
    plain = text  # (its first and last words, looked at only when a word may go around it)
    if rng() < timing.wrap and plain.split(" ", 1)[0].casefold().strip(",") not in names:
        text = _OPENERS[int(rng() * len(_OPENERS))] + text
    if text.endswith("?"):
        if rng() < 0.2:
            text = text[:-1] + " ?"
    elif rng() < timing.wrap and plain.rsplit(" ", 1)[-1].casefold().strip("?!.,") not in names:
        text = text + _CLOSERS[int(rng() * len(_CLOSERS))]
    if rng() < timing.typo:
        words = text.split(" ")
        spots = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()
                 and w.casefold() not in names]  # fmt: skip
        if spots:
            i = spots[int(rng() * len(spots))]
            w = words[i]
            j = 1 + int(rng() * (len(w) - 2))
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
            typo = " ".join(words)
            lex = p.ledger.lex
            # not in a word the table reads ("weird" -> "wierd" would no longer accuse)
            if lex is None or lex.read(typo)[:4] == lex.read(text)[:4]:
                text = typo
    return text


def den_options(p: SpeechView) -> list[_Option]:
    """Night talk: propose a kill if nobody has, agree with the first proposal if a partner
    made it, otherwise plan tomorrow or chat."""
    names = p.names
    day = p.day
    target = p.night_target()
    first = p.first_prop
    settled = ("den-agree", day) in p.topics or ("den-prop", day) in p.topics
    if first is None and target is not None:
        topic = ("den-prop", day)
        x = names[target]
        proposals: list[_Option] = [(5.0, "den_propose", {"x": x}, topic)]
        if target in p.ledger.claims:
            proposals.append((6.0, "den_propose_claim", {"x": x}, topic))
        mafia = p.partners | {p.seat}
        hit = [b for b in p.ledger.accused_by.get(target, _EMPTY) if b in mafia]
        if hit:
            # the one under suspicion is "me" when it is the speaker ("X is onto Drew",
            # said by Drew, reads oddly)
            who = "me" if hit[0] == p.seat else names[hit[0]]
            slots = {"x": x, "p": who}
            proposals.append((3.0, "den_propose_reason", slots, topic))
        return proposals
    if first is not None and first in p.alive and not settled:
        return [(6.0, "den_agree", {"x": names[first]}, ("den-agree", day))]
    night = ("den", day)
    opts: list[_Option] = [(0.8, "den_small", {}, night)]
    danger = p.scores("danger")
    later = [s for s in danger if s != target]
    if later:
        push = min(later, key=lambda s: danger[s])  # pin it on someone unthreatening
        opts.append((1.2, "den_plan", {"x": names[push]}, night))
    return opts


#: builds one kind of line for a policy (None: nothing to say of that kind now)
_Builder = Callable[[SpeechView], _Option | None]
_DEFEND: _Builder = opt_defend
_REVEAL: _Builder = opt_reveal
_DET_CLEAN: _Builder = opt_det_clean
_GREET: _Builder = opt_greet
_OPEN: _Builder = opt_open
_NIGHT_KILL: _Builder = opt_night_kill
_NIGHT_NONE: _Builder = opt_night_none
_ELIM: _Builder = opt_elim
_DAY_COUNT: _Builder = opt_day_count
_ACCUSE: _Builder = opt_accuse
_VOTE_STATE: _Builder = opt_vote_state
_TALLY: _Builder = opt_tally
_LATE: _Builder = opt_late
_QUIET: _Builder = opt_quiet
_ANSWER: _Builder = opt_answer
#: always on offer, last: a question to someone, a filler
_TAIL_WEIGHTS = (1.0, 0.4)
_TAIL_BUILDERS: tuple[_Builder, ...] = (opt_ask, opt_filler)
