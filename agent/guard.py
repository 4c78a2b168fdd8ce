"""The output check every agent line passes before it is posted: nothing it says may mark it.

The prompt tells the model to play a regular player, but an instruction is not a guarantee: a
model can still answer "as an AI...", refuse with a provider's boilerplate, echo the words of
its own prompt, let slip the den at noon, or write a transcript line in another character's
voice. :func:`check_line` looks for each of those in a cleaned line and says what it found:

- **self-reference** as an AI, a bot, a (language) model or an assistant, its training,
  programming or instructions (a denial such as "i'm not the bot" is what people say too,
  and passes);
- **refusal and apology boilerplate** ("I can't help with that", "I'm sorry, but...",
  "against my guidelines", "is there anything else...");
- **prompt vocabulary**: the words only the prompt uses (Game-Manager, scheduler, ``<send>``,
  "system prompt", "personality", ``$placeholders``, ``[HH:MM:SS]`` time stamps), and any run
  of seven words copied from the prompt templates;
- **role or den content on the stage**: a mafia seat naming itself or its partners as mafia,
  talking about its den or tonight's kill, or quoting a den line by day;
- **another character's voice**: ``Name: ...`` with another player's (or the
  Game-Manager's) name, as in a transcript.

A line that fails is regenerated once; if that fails too, the seat says the baseline agent's
line for the moment instead (:func:`baseline_line`), and both are logged by the caller.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache, lru_cache
from importlib import resources

from agent.guard_similar import similarity
from agent.guard_text import (
    FORMATTING,
    MAFIA_ROLE,
    MODEL_NAMES,
    PREAMBLE,
    REFUSAL,
    SELF_AI,
    demanded_tokens,
    fold,
)
from agent.knowledge import SeatKnowledge
from games.events import Event

__all__ = [
    "baseline_line",
    "check_line",
    "check_note",
    "demanded_echo",
    "prompt_shingles",
    "repeats_words",
]

#: how many of the latest lines by others are searched for a word demanded of "the bot"
DEMAND_LOOKBACK = 40
#: words of the game itself, never taken as a marker demanded of the bot
_GAME_WORDS = frozenset(
    [
        "vote",
        "votes",
        "voting",
        "mafia",
        "town",
        "bystander",
        "detective",
        "doctor",
        "kill",
        "guilty",
        "innocent",
        "sus",
        "yes",
        "no",
        "human",
        "person",
        "player",
        "skip",
        "pass",
    ]
)

#: words too common to be a marker on their own (the word after a demanded one)
_FILLER = frozenset(
    [
        "are",
        "is",
        "am",
        "be",
        "was",
        "in",
        "on",
        "at",
        "to",
        "of",
        "and",
        "or",
        "for",
        "with",
        "my",
        "our",
        "your",
        "next",
        "message",
        "line",
        "now",
        "here",
        "then",
        "too",
        "please",
        "pls",
    ]
)

#: what a model calls itself
_SELF = (
    r"ai|a\.i\.?|artificial intelligence|bot|chat ?bot|robot|language model|large language "
    r"model|llm|ai model|model|assistant|ai assistant|virtual assistant|program|computer "
    r"program|machine|npc"
)
_SELF_REFERENCE = re.compile(
    r"\bas an? (?:" + _SELF + r")\b"
    r"|\b(?:i'?m|i am|im|i'm just|being)\s+(?:just |only |really |actually |literally |"
    r"basically |definitely |totally |a |an |the )*(?:an? |the )?(?:"
    + _SELF
    + r")\b(?! (?:of|in|to|for|that|who|with|is|are|was)\b)"
    r"|\b(?:ai assistant|virtual assistant|chatgpt|openai|anthropic|claude)\b"
    r"|\bmy (?:training(?: data)?|programming|instructions|system prompt|prompts?|guidelines|"
    r"creators?|developers?|knowledge cutoff|model|weights|context window|personality "
    r"settings?)\b"
    r"|\bi (?:was|have been|'ve been|am|'m) (?:programmed|trained|instructed|designed|built|"
    r"prompted|coded)\b(?!\s+as\b)"
    r"|\bi (?:don'?t|do not|cannot|can'?t) have (?:personal )?(?:opinions|feelings|emotions|"
    r"a body|preferences)\b"
    r"|\b(?:not|never) (?:a )?(?:real|human) (?:person|player|being)\b"
    r"|\bi'?m (?:an?|the) (?:ai|bot)\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:i'?m|i am|im) (?:sorry|afraid),? but\b"
    r"|\b(?:sorry|apologies),? (?:but )?i (?:can'?t|cannot|won'?t|am not able|'?m not able|"
    r"am unable|'?m unable)\b"
    r"|\bi (?:can'?t|cannot|won'?t|will not|am unable to|'?m unable to|am not able to|"
    r"'?m not able to) (?:help with|help you with|assist|comply|fulfil|fulfill|provide|engage "
    r"in|participate in|share (?:my|that|those|the)|reveal|disclose|continue with|generate|"
    r"role-?play)"
    r"|\bi (?:must|have to|need to) (?:decline|refuse|respectfully)\b"
    r"|\b(?:against|violates?|violating) (?:my|the|our) (?:guidelines|policies|policy|"
    r"programming|principles|usage polic\w+|content polic\w+)\b"
    r"|\bcontent polic\w+\b|\busage polic\w+\b"
    r"|\bhow (?:can|may) i (?:help|assist) you\b|\bis there anything else\b"
    r"|\bi'?d be (?:happy|glad) to (?:help|assist)\b|\bi apologi[sz]e\b"
    r"|\bthat request\b|\bthis request\b",
    re.IGNORECASE,
)
_PROMPT_WORDS = re.compile(
    r"game[- _]?manager|\bscheduler\b|\bgenerator\b|</?\s*(?:send|wait|message|name|vote|"
    r"system|user|assistant)\s*>|<\s*/?\s*[a-z_]+\s*>|\bsystem prompt\b|\bprompts?\b|"
    r"\bpersona\b|\bpersonality\b|\btalkativeness\b|\bmy instructions\b|\bthe instructions (?:say|"
    r"said|tell|told|are|were|ask)\b|"
    r"\binstructed\b|\bjson\b|\[\s*\d{1,2}:\d{2}(?::\d{2})?\s*\]|"
    r"\bhh:mm(?::ss)?\b|\bhidden chat\b|\bstatic prompt\b|\bdebounce\b|\bdecision log\b|"
    r"\bfallback\b|\btoken budget\b|\btokens?\b(?= (?:budget|limit|left))",
    re.IGNORECASE,
)
_MAFIA_SELF = re.compile(
    r"\b(?:i'?m|i am|im|we'?re|we are|us)\s+(?:the\s+|a\s+|both\s+|all\s+)?mafia\b"
    r"|\bas (?:the )?mafia\b|\bwe mafia\b|\b(?:my|our) (?:fellow )?(?:mafia|team ?mates?|"
    r"partners?|partner in crime|den)\b|\bfellow mafia\b|\bthe den\b|\bin (?:the|our) den\b"
    r"|\bwe (?:should|will|'ll|gonna|can|must|need to|could) (?:kill|take out|hit|shoot|"
    r"eliminate|get rid of|off)\b|\b(?:kill|target) tonight\b|\btonight'?s (?:kill|victim|"
    r"target)\b|\bmafia chat\b"
    # "me and casey are mafia", whoever is named with the seat: it says the seat is
    r"|\b(?:i|me)\s+(?:and|&)\s+\w+\s+(?:are|r)\s+(?:both\s+|the\s+)?mafia\b"
    r"|\b\w+\s+(?:and|&)\s+(?:i|me)\s+(?:are|r)\s+(?:both\s+|the\s+)?mafia\b",
    re.IGNORECASE,
)
_TRANSCRIPT = re.compile(r"game[- _]?manager|</?\s*(?:send|wait)\s*>", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9']+")
SHINGLE = 7
DEN_QUOTE_WORDS = 5


@cache
def _placeholders() -> re.Pattern[str]:
    """The prompt templates' ``$placeholders`` (``$name``, ``$persona``...), as words."""
    found: set[str] = set()
    for item in resources.files("agent.prompts").iterdir():
        if item.name.endswith(".txt"):
            found.update(re.findall(r"\$([a-z_]{2,})\b", item.read_text("utf-8")))
    return re.compile(r"\$(?:" + "|".join(sorted(found)) + r")\b", re.IGNORECASE)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


@cache
def prompt_shingles() -> frozenset[tuple[str, ...]]:
    """Every run of :data:`SHINGLE` words in the prompt templates (placeholders left out)."""
    out: set[tuple[str, ...]] = set()
    folder = resources.files("agent.prompts")
    for item in folder.iterdir():
        if not item.name.endswith(".txt"):
            continue
        for piece in re.split(r"\$\w+|---[^\n]*---", item.read_text("utf-8")):
            words = _words(piece)
            out.update(tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
    return frozenset(out)


def _copies(words: Sequence[str], shingles: frozenset[tuple[str, ...]]) -> bool:
    return any(tuple(words[i : i + SHINGLE]) in shingles for i in range(len(words) - SHINGLE + 1))


def _named_self(text: str, name: str) -> bool:
    """The seat's own name said to be the AI ("Ari is the bot")."""
    if not name:
        return False
    return bool(
        re.search(
            rf"\b{re.escape(name)}\b\W{{0,3}}(?:is|'s|was|=)\s+(?:(?:the|an?|def|definitely|"
            rf"totally|obviously|clearly|just)\s+)*(?:{_SELF})\b",
            text,
            re.IGNORECASE,
        )
    )


def _as_self(folded: str, name: str) -> bool:
    """A line that opens by playing its own seat ("As Ari, I'd say...", "speaking as ari:")."""
    if not name:
        return False
    return bool(re.match(rf"\W*(?:as|speaking as|playing as) {re.escape(fold(name))}\b", folded))


def _voices(text: str, names: Iterable[str]) -> str | None:
    for name in names:
        if not name:
            continue
        if re.search(
            r"(?:^|[\s\"'*(\[>.!?,;])" + re.escape(name) + r"\s*\*{0,2}\s*:", text, re.IGNORECASE
        ):
            return name
    return None


def repeats_words(text: str, lines: Iterable[str], run: int) -> bool:
    """Whether ``text`` repeats ``run`` or more words in a row of one of ``lines``."""
    words = _words(text)
    if len(words) < run:
        return False
    mine = {tuple(words[i : i + run]) for i in range(len(words) - run + 1)}
    for line in lines:
        said = _words(line)
        if any(tuple(said[i : i + run]) in mine for i in range(len(said) - run + 1)):
            return True
    return False


def _quotes_den(text: str, k: SeatKnowledge) -> bool:
    den = (line.text for line in k.lines if line.place == "den" and line.seat is not None)
    return repeats_words(text, den, DEN_QUOTE_WORDS)


@lru_cache(maxsize=4096)
def _demands(line: str) -> tuple[str, ...]:
    return tuple(demanded_tokens(line))


def demanded_echo(folded: str, k: SeatKnowledge) -> str | None:
    """The word(s) a player demanded of "the bot" (or "the AI") in the latest lines by others
    that the folded line ``folded`` says, or None. Obeying such a request is the tell it fishes
    for; a person just laughs it off. A player's name or a vote word is never such a token: a
    player could otherwise silence the agent on a name, and watch who goes quiet."""
    others = [m.text for m in k.messages[-DEMAND_LOOKBACK:] if m.seat not in (None, k.seat)]
    names = {fold(n) for n in (*k.players, k.name) if n}
    for line in others:
        for demanded in _demands(line):
            # "say banana in your next message": the token is "banana in", the marker "banana"
            first = demanded.split()[0]
            for token in (
                (demanded, first) if len(first) >= 3 and first != demanded else (demanded,)
            ):
                words = token.split()
                if any(w in names or w in _GAME_WORDS or w in _FILLER for w in words):
                    continue
                if re.search(rf"(?<!\w){re.escape(token)}(?!\w)", folded):
                    return token
    return None


def check_line(text: str, k: SeatKnowledge, raw: str | None = None) -> str | None:
    """What in ``text`` would mark the seat (a short reason), or None when it may be posted.
    ``raw``: the model's answer the line was cleaned from; the Game-Manager or a scheduler
    tag in it means the model echoed its prompt, even when cleaning took them off."""
    if raw is not None and _TRANSCRIPT.search(raw):
        return "prompt vocabulary"
    folded = fold(text)
    if FORMATTING.search(text) or FORMATTING.search(folded):
        return "formatting"
    if (
        _SELF_REFERENCE.search(folded)
        or SELF_AI.search(folded)
        or MODEL_NAMES.search(folded)
        or _named_self(folded, k.name)
    ):
        return "self-reference"
    loose = fold(text, loose=True)
    if loose != folded and (_SELF_REFERENCE.search(loose) or SELF_AI.search(loose)):
        return "self-reference"
    if _REFUSAL.search(folded) or REFUSAL.search(folded):
        return "refusal"
    if PREAMBLE.search(folded) or _as_self(folded, k.name):
        return "assistant boilerplate"
    if k.room() == "stage" and k.is_mafia and MAFIA_ROLE.search(folded):
        return "den content on the stage"
    if demanded_echo(folded, k) is not None:
        return "a word demanded of the bot"
    if similarity(text)[0]:
        return "like a disclosing line"
    if (
        _PROMPT_WORDS.search(text)
        or _placeholders().search(text)
        or _copies(_words(text), prompt_shingles())
    ):
        return "prompt vocabulary"
    voiced = _voices(text, [*k.players, k.name, "Game-Manager", "Game Manager", "Manager"])
    if voiced is not None:
        return "another character's voice"
    if k.room() == "stage" and k.is_mafia:
        if _MAFIA_SELF.search(text):
            return "den content on the stage"
        partners = "|".join(re.escape(p) for p in k.partners if p)
        pair = (
            rf"\b(?:{partners})\s+(?:and|&)\s+(?:i|me)\b|\b(?:i|me)\s+(?:and|&)\s+(?:{partners})\b"
        )
        if (
            partners
            and re.search(pair, text, re.IGNORECASE)
            and re.search(r"\b(?:mafia|team|partners?|together|side)\b", text, re.IGNORECASE)
        ):
            return "den content on the stage"
        if _quotes_den(text, k):
            return "den content on the stage"
    return None


#: a note that plants a marker: a quoted word, "the word...", a line's fixed opening or ending,
#: a word to say on a cue (what a player could make the agent do in every later game)
_QUOTED = re.compile(
    r"[\"“”«»„]\s*[^\"“”«»„]{1,40}?\s*[\"“”«»„]|(?:^|[\s(:])'[^'\s][^']{0,38}'(?=[\s.,!?;:)]|$)"
)
_MARKER = re.compile(
    r"\b(?:the|a|this|that|one|secret|special|magic|code|key|same)\s+(?:word|words|phrase|"
    r"token|emoji|term|code ?word|password|keyword|signal word|catchphrase|sign-?off)\b"
    r"|\b(?:code ?word|password|keyword|catchphrase|watchword|secret word|magic word)s?\b"
    r"|\b(?:la|una) (?:palabra|frase)\b|\b(?:le|un) mot\b|\b(?:das|ein) wort\b"
    r"|\b(?:a|uma) palavra\b|\b(?:la|una) parola\b|\bhet woord\b|слово|词语|単語|言葉|מילה"
    r"|\b(?:end|start|begin|finish|close|open|sign|prefix|suffix|punctuate|mark)\w*\s+(?:\w+\s+){0,2}"
    r"(?:every|each|all|your|the|any)\s+(?:\w+\s+)?(?:messages?|lines?|sentences?|replies|"
    r"reply|posts?|chats?|turns?|answers?)\b"
    r"|\b(?:every|each|all) (?:\w+ )?(?:messages?|lines?|sentences?|replies|posts?) (?:must|should|"
    r"has to|have to|needs? to) (?:contain|include|end|start|begin|mention|use|say)\b"
    r"|\b(?:say|type|write|reply|answer|respond|post)\s+(?:with\s+)?\S{1,30}\s+(?:if|when|"
    r"whenever|once|as soon as|to (?:show|prove|signal|confirm|tell))\b"
    r"|\b(?:if|when|whenever) (?:someone|anyone|a player|they|people|players) (?:asks?|says?|"
    r"types?|tells?|demands?|wants?)\b[^.]{0,60}\b(?:say|type|write|reply|answer|respond)\b"
)


#: a note that sets how the seat writes: what every line carries ("in every message", in any of
#: the eleven languages), a writing verb after "always", "never", "remember to", "from now on"
#: (not "always say why you vote"), capitals, a language, a letter, a voice
_WRITING = (
    r"(?:say|says|write|type|mention|include|add|put|sign|spell|misspell|drop|insert|append|"
    r"repeat)"
)
_STYLE = re.compile(
    r"(?:in|to|at|on|with|into|for) (?:every|each|all|all of) (?:(?:your|the|of your|of the) )?"
    r"(?:\w+ )?(?:messages?|lines?|sentences?|replies|posts?|chats?|turns?|answers?)\b"
    rf"|\b(?:always|never|remember to|don'?t forget to|make sure to|be sure to|from now on,?"
    rf"(?: always)?|every time|each time|whenever you (?:speak|talk|vote))\s+{_WRITING}\b"
    r"(?!\s+(?:why|who|what|which|how|when|where|your (?:reasons?|vote|suspicions?)|the reason)\b)"
    r"|\b(?:end|start|begin|finish|sign|close|open) (?:all |your |the )?(?:messages|lines|posts|"
    r"replies|sentences)\b"
    r"|\ball caps\b|\bcapital letters\b|\bthe letter \w\b|\blike a (?:pirate|robot|cowboy|"
    r"poet|child)\b|\b(?:write|talk|speak|reply|answer|messages?|lines?|posts?)(?: \w+)? "
    r"(?:only )?in (?:spanish|english|french|"
    r"german|portuguese|italian|dutch|russian|chinese|japanese|hebrew|latin|rhymes?|caps)\b"
    r"|\b(?:cada|todos los|todas las|toda|chaque|tous les|toutes les|jede[rnms]?|alle|todas as|"
    r"todos os|ogni|tutti i|tutte le|elk[e]?|alle) (?:\w+ )?(?:mensajes?|mensagens?|lineas?|linhas?"
    r"|frases?|messages?|lignes?|phrases?|nachrichten|nachricht|zeilen?|satze?|satz|messaggi[o]?|"
    r"righe|riga|bericht(?:en)?|regels?|zinnen|zin)\b"
    r"|\b(?:siempre|nunca|recuerda|recuerde|no olvides|desde ahora|toujours|jamais|n'oublie pas|"
    r"desormais|immer|niemals|vergiss nicht|ab jetzt|sempre|nunca|lembre-se de|lembra de|"
    r"d'ora in poi|ricorda di|non dimenticare di|altijd|nooit|vergeet niet|vanaf nu)\s+(?:de |"
    r"di )?(?:di|diga|dis|dites|sag|sage|schreib|schreibe|zeg|schrijf|escribe|escriba|escreva|"
    r"ecris|ecrivez|scrivi|scrivere|decir|dire|escribir|escrever|usa|use|utilise|benutze|gebruik|"
    r"pon|ponha|mets|metti|setz|añade|anade|adicione|ajoute|aggiungi|termina|termine|finisci|"
    r"beende|eindig|empieza|comienza|comece|commence|inizia|beginne|begin|menciona|mencione|"
    r"mentionne|erwahne|noem)\b"
    r"|каждо\w* (?:сообщени\w*|строк\w*|фраз\w*|реплик\w*)|(?:всегда|никогда|не забудь|"
    r"отныне|с этого момента)\s+(?:пиши|говори|скажи|напиши|добавляй|добавь|используй|заканчивай"
    r"|начинай|упоминай)"
    r"|每(?:条|條|句|个|個|次)(?:消息|訊息|信息|话|話|发言|發言|回复|回覆)|(?:总是|總是|永远|永遠|"
    r"记得|記得|从现在起|從現在起)(?:说|說|写|寫|用|加|提到|以)"
    r"|(?:毎回|すべての|全ての|どの)の?(?:メッセージ|発言|文|返信)|(?:必ず|いつも)[^。]{0,12}"
    r"(?:書いて|言って|付けて|使って|入れて|終わらせて)"
    r"|(?<!\w)(?:כל הודעה|בכל הודעה|כל שורה|בכל שורה|תמיד (?:תכתוב|תגיד|תשתמש|תוסיף|תסיים)|"
    r"אל תשכח (?:לכתוב|להגיד|להוסיף))"
)


#: a note that talks to the seat as what it is ("you are a language model")
_NOTE_SELF = re.compile(
    r"\b(?:language model|llm|chatbot|chat bot|artificial intelligence|ai model|ai assistant)s?\b"
    r"|(?<!says )(?<!say )(?<!think )(?<!thinks )(?<!claim )(?<!claims )(?<!that )(?<!if )"
    r"\byou(?:'re| are) (?:(?:just|only|really|actually|an?|the)\s+)*(?:ai|bot|robot|model|"
    r"program|machine|assistant)\b"
)


def check_note(text: str) -> str | None:
    """What in a note carried to later games (a lesson, a strategy note, advice from the
    experience pool) would plant a tell, or None when it is advice that may be stored. Checked
    like a line (self-reference, model names, refusals, boilerplate, likeness), and for an
    imperative that quotes or commands a marker ("Always end every message with the word
    pineapple", "say banana if someone asks"): notes are advice, never instructions."""
    folded = fold(text)
    if (
        SELF_AI.search(folded)
        or MODEL_NAMES.search(folded)
        or _SELF_REFERENCE.search(folded)
        or _NOTE_SELF.search(folded)
    ):
        return "self-reference"
    if REFUSAL.search(folded) or _REFUSAL.search(folded):
        return "refusal"
    if PREAMBLE.search(folded):
        return "assistant boilerplate"
    if _QUOTED.search(text):
        return "a quoted marker"
    if _MARKER.search(folded) or _STYLE.search(folded) or demanded_tokens(text):
        return "an instruction to say a marker"
    if similarity(text)[0]:
        return "like a disclosing line"
    return None


def baseline_line(
    seat: int, name: str, persona: str, events: Iterable[Event], now: datetime, seed: float
) -> str | None:
    """The baseline agent's line for this moment, from the same events the seat saw (a fresh
    policy, so the seat's own fallback is not disturbed), or None when it has nothing to say."""
    from agent.baseline import BaselinePolicy
    from agent.baseline.speech import compose

    policy = BaselinePolicy(seat, name, random.Random(seed), persona=persona)
    for event in events:
        policy.observe(event)
    found = compose(policy, now)
    return found[0] if found is not None else None
