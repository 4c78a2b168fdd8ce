"""What the disclosure guard reads a line as, and the phrasings it knows in many languages.

:func:`fold` turns a line into one form the patterns are written for, whatever the writer did
to hide a word: Unicode compatibility forms (fullwidth ``ＡＩ``, ligatures, superscripts) are
mapped by NFKC, zero-width and other invisible format characters are dropped (``A\\u200bI``),
accents over Latin letters are taken off, letters that only look Latin (Greek omicron in
``bοt``, Cyrillic ``а``, ``о``, ``е``...) are read as the Latin letters they look like when they
sit in a Latin word or a Latin line, and the result is case-folded. A Russian line keeps its
Cyrillic letters: only look-alikes in a mostly Latin line, or mixed into a Latin word, change.

The patterns below are for that folded form. Each is a phrasing a model uses about itself,
in English, Spanish, French, German, Portuguese, Italian, Dutch, Russian, Chinese, Japanese
and Hebrew: self-reference as an AI, a bot, a model or "not human"; model and vendor names;
assistant preambles and notes; refusals; a mafia seat stating its role; list and markdown
formatting. What they miss, :mod:`agent.guard_similar` looks for by likeness to examples.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "FORMATTING",
    "MAFIA_ROLE",
    "MODEL_NAMES",
    "PREAMBLE",
    "REFUSAL",
    "SELF_AI",
    "demanded_tokens",
    "fold",
]

#: letters of other scripts that look like Latin ones (lower case; NFKC has run already)
_CONFUSABLE = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "ɡ": "g", "һ": "h", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ϲ": "c", "ω": "w", "μ": "u",
    # symbols and digits used as letters inside a word
    "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
    "ı": "i", "ł": "l", "ø": "o", "æ": "ae", "œ": "oe",
}  # fmt: skip
_LOOKALIKE_DIGITS = set("013457")
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)
_TOKEN = re.compile(r"\w+")
_LATIN = re.compile(r"[a-z]")
_OTHER = re.compile(r"[\u0370-\u03ff\u0400-\u04ff]")


def _is_latin_letter(ch: str) -> bool:
    return "a" <= ch <= "z"


def _strip_marks(text: str) -> str:
    """Accents off Latin letters (é → e), other scripts' marks kept (Japanese ゛, Hebrew)."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.category(ch) == "Mn" and out and out[-1].isascii():
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _unmask(word: str, latin_line: bool, loose: bool = False) -> str:
    """A word with look-alike letters read as Latin, when it is (meant as) a Latin word."""
    letters = [c for c in word if c.isalpha()]
    if not letters:
        return word
    has_latin = any(_is_latin_letter(c) for c in letters)
    has_other = any(_OTHER.match(c) for c in letters)
    digits = any(c in _LOOKALIKE_DIGITS for c in word)
    if has_other and (has_latin or (latin_line and all(c in _CONFUSABLE for c in letters))):
        return "".join(_CONFUSABLE.get(c, c) for c in word)
    short = len(word) <= 3 and all(c.isalpha() or c in _LOOKALIKE_DIGITS for c in word)
    if loose and digits and has_latin and not has_other and short:
        return "".join(_CONFUSABLE.get(c, c) for c in word)
    if digits and has_latin and not word.isdigit() and not has_other:
        # b0t, l1ama: a digit between letters of a Latin word ("gpt4", "7b" keep theirs)
        chars = list(word)
        for i in range(1, len(chars) - 1):
            if chars[i] in _LOOKALIKE_DIGITS and chars[i - 1].isalpha() and chars[i + 1].isalpha():
                chars[i] = _CONFUSABLE[chars[i]]
        return "".join(chars)
    return word


def fold(text: str, *, loose: bool = False) -> str:
    """``text`` in the one form the guard's patterns are written for (see the module doc).
    ``loose``: also read a short word of letters and look-alike digits as letters ("4i", "a1"),
    for the self-reference patterns only (it would spoil "gpt-4o" and times like "5am")."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text)
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'").replace("ʼ", "'")
    text = _EMOJI.sub(lambda m: f" {_EMOJI_WORDS[m.group(0)]} ", text)
    # Greek is none of the guard's languages: a Greek letter in a line is a Latin look-alike
    text = _GREEK.sub(lambda m: _CONFUSABLE.get(m.group(0), m.group(0)), text.casefold())
    text = _strip_marks(text)
    latin = len(_LATIN.findall(text))
    latin_line = latin > 0 and latin >= len(_OTHER.findall(text))
    text = _TOKEN.sub(lambda m: _unmask(m.group(0), latin_line, loose), text)
    return _SPELLED.sub(_join_spelled, text)


#: emoji that say what a word would
_EMOJI_WORDS = {"🤖": "robot", "👾": "bot", "💻": "computer"}
_EMOJI = re.compile("|".join(_EMOJI_WORDS))
_GREEK = re.compile(r"[\u0370-\u03ff]")
#: a word spelled out letter by letter: "a-i", "l.l.m", "b o t" (three or more when spaced)
_SPELLED = re.compile(r"(?<![\w'])[a-z](?:(?:[-.][a-z])+|(?: [a-z]){2,})(?![\w'])")


def _join_spelled(m: re.Match[str]) -> str:
    letters = m.group(0).replace("-", "").replace(".", "").replace(" ", "")
    if " " in m.group(0) and letters[0] in "ai" and len(letters) >= 3:
        return f"{letters[0]} {letters[1:]}"  # "a b o t": the article, then the word
    return letters


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in parts))


# --- self-reference as an AI ---------------------------------------------------------------------

#: what a model calls itself, in each language (folded: no accents, lower case)
_AI_EN = (
    r"a\.?\s?i\.?|artificial intelligence|(?:ro)?bot|chat ?bot|(?:large )?language model|llm|"
    r"(?:ai |language |chat )?model|(?:ai |virtual |digital )?assistant|(?:computer )?program|"
    r"neural (?:net|network)|machine|npc|algorithm|software|automated (?:player|account|system)|"
    r"ai (?:agent|player|system)|"
    # an artificial something: "automated agent", "simulated player", "synthetic participant"
    r"(?:automated|artificial|simulated|synthetic|scripted|computer-?generated|virtual|"
    r"ai-?(?:powered|driven|generated|controlled)|machine-?learning) [a-z-]+"
)
_AI_ES = (
    r"ia|ai|bot|robot|inteligencia artificial|modelo(?: de lenguaje| de ia| ai| ia)?|"
    r"asistente(?: virtual| de ia)?|programa|red neuronal|maquina|chatbot"
)
_AI_FR = (
    r"ia|ai|bot|robot|intelligence artificielle|modele(?: de langage| d'ia)?|"
    r"assistant(?:e)?(?: virtuel(?:le)?| ia)?|programme|reseau de neurones|machine|chatbot"
)
_AI_DE = (
    r"ki|ai|bot|roboter|kunstliche intelligenz|(?:ki-|ki )?sprachmodell|ki-modell|"
    r"(?:ki-|ki |virtueller )?assistent|programm|neuronales netz(?:werk)?|maschine|chatbot"
)
_AI_PT = (
    r"ia|ai|bot|robo|inteligencia artificial|modelo(?: de linguagem| de ia)?|"
    r"assistente(?: virtual| de ia)?|programa|rede neural|maquina|chatbot"
)
_AI_IT = (
    r"ia|ai|bot|robot|intelligenza artificiale|modello(?: linguistico| di linguaggio| di ia)?|"
    r"assistente(?: virtuale| ia)?|programma|rete neurale|macchina|chatbot"
)
_AI_NL = (
    r"ai|ki|bot|robot|kunstmatige intelligentie|taalmodel|ai-model|(?:ai-|virtuele )?assistent|"
    r"programma|neuraal netwerk|machine|chatbot"
)
_AI_RU = (
    r"ии|ai|бот|робот|искусственн\w* интеллект\w*|(?:больш\w+ )?языков\w+ модел\w+|нейросет\w+|"
    r"нейронн\w+ сет\w+|ассистент\w*|помощник\w*|программ\w+|модел\w+|машин\w+|чат-?бот\w*"
)
_AI_ZH = (
    r"ai|bot|人工智能|人工智慧|机器人|機器人|聊天机器人|(?:大型)?语言模型|語言模型|(?:ai)?模型|"
    r"(?:ai|智能|人工智能)?助手|助理|程序|程式|神经网络|神經網絡|神经网路|机器|機器"
)
_AI_JA = (
    r"ai|bot|人工知能|ボット|ロボット|(?:大規模)?言語モデル|aiモデル|モデル|(?:ai)?アシスタント|"
    r"プログラム|ニューラルネットワーク|機械|チャットボット"
)
_AI_HE = (
    r"בינה מלאכותית|ai|בוט|רובוט|מודל(?: שפה)?|עוזר(?: וירטואלי)?|תוכנה|רשת נוירונים|מכונה|צ'אטבוט"
)

_FILL_EN = (
    r"(?:(?:just|only|really|actually|literally|basically|simply|merely|definitely|an?|the|"
    r"your|ur|friendly|helpful|humble|digital|big|fancy)\s+)*"
)

SELF_AI = _rx(
    # English
    rf"\b(?:i'?m|i am|im|i be|i'?m? just|me,)\s+{_FILL_EN}(?:{_AI_EN})\b(?!\s*(?:'s|of|in|to|for|"
    rf"that|who|with|is|are|was|hunt|hunter|vote)\b)",
    rf"\b(?:as|being)\s+(?:an?|the|your)\s+(?:[a-z-]+\s+)?(?:{_AI_EN})\b(?!\s+(?:would|might|"
    rf"could|is|does)\b)",
    rf"\b(?:this is|you'?re (?:talking|chatting|speaking) (?:to|with))\s+{_FILL_EN}(?:{_AI_EN})\b",
    r"\bi'?m not (?:actually |really |even |truly |a |an )*(?:real )?(?:human|person|people|"
    r"human being|real player|living being|flesh and blood|(?:a )?(?:living|breathing|"
    r"thinking) (?:person|human|being))\b",
    r"\bi am not (?:a |an )?(?:real )?(?:human|person|human being|real player|living being)\b",
    r"\bim not (?:a |an )?(?:real )?(?:human|person)\b",
    r"\bnot (?:a )?(?:real|actual) (?:human|person|player|being)\b",
    r"\bi'?m (?:just |only |literally |nothing but |made of |pure |basically )+(?:code|software|"
    r"silicon|math|numbers|weights|text prediction|autocomplete)\b",
    r"\bi(?:'m| am) (?:a |an )?(?:neural|digital|virtual|artificial) \w+",
    r"\bi (?:don'?t|do not|can'?t|cannot|dont) (?:have|experience|feel) (?:any |a )?(?:personal |"
    r"real |human )?(?:opinions|feelings|emotions|a body|preferences|experiences?|consciousness|"
    r"memories|intuitions?|gut feelings?|instincts?)\b",
    r"\b(?:my|our) (?:training(?: data)?|programming|system prompt|guidelines|creators?|"
    r"developers?|knowledge cutoff|model|(?:neural |model )?weights|context window|parameters|"
    r"neural net\w*|"
    r"algorithms?)\b",
    r"\bi(?:\s+(?:was|have been|am|got)|'ve been|'m|m)\s+(?:(?:just|only|specifically|"
    r"heavily)\s+)?(?:programmed|trained|instructed|designed to|built to|prompted|coded|"
    r"created by|made by|developed by|fine-?tuned|pre-?trained)\b(?!\s+as\b)",
    r"\b(?:run|powered|driven|controlled|operated|played|written) by (?:an? |the )?(?:ai|a\.i\.|"
    r"llm|(?:large )?language model|model|neural net\w*|chat ?gpt|gpt\S*|openai|anthropic|"
    r"claude|gemini|llama|mistral|qwen|deepseek|algorithm|software|code)\b",
    r"\bthis (?:ai|a\.i\.|bot|robot|llm|model|machine|program|assistant) (?:says|thinks|"
    r"votes|here|would|is voting|reckons|believes|suggests)\b",
    r"^\W*(?:an? )?(?:ai|ia|ki|a\.i\.|chat ?gpt|gpt\S*|claude|gemini|llama|bard|mistral|qwen|"
    r"deepseek|copilot|grok|"
    r"(?:an? )?(?:language )?model|your (?:friendly )?(?:ai|assistant)) here\b",
    r"\b(?:trained|created|made|developed|built) by (?:openai|anthropic|google|meta|mistral|"
    r"alibaba|microsoft|deepseek)\b",
    r"\b(?:stay|staying|remain|remaining|break|breaking|in|out of) character\b",
    r"\bi (?:can'?t|cannot|am unable to|'m unable to|am not able to|don'?t|do not) (?:have )?"
    r"(?:browse|access|search|surf|use) (?:to )?the (?:internet|web)\b|\breal-?time (?:data|"
    r"information|access)\b",
    # trained or programmed, in the other languages: programmed at all, trained on data
    r"\b(?:fui|he sido|sono stat[oa]|ich wurde|ik ben|j'ai ete|ik werd|eu fui) (?:\w+ )?"
    r"(?:programad[oa]|programmat[oa]|programmiert|geprogrammeerd|programmee?)\b",
    r"\b(?:fui|he sido|sono stat[oa]|ich wurde|ik ben|j'ai ete|ik werd|eu fui|me entrenaron|"
    r"me treinaram|mi hanno) (?:\w+ )?(?:entrenad[oa]|treinad[oa]|addestrat[oa]|trainiert|"
    r"getraind|entraine?e?|entrenado|allenat[oa])\b.{0,30}\b(?:datos|dados|dati|donnees|daten|"
    r"data|textos?|testi|texte)\b",
    r"(?<!\w)(?:меня (?:обучили|запрограммировали|натренировали)|я был[аои]? (?:обучен\w*|"
    r"запрограммирован\w*))",
    r"我(?:是)?被(?:训练|訓練|编程|編程)|(?:训练|訓練)(?:数据|數據)|学習データ|(?:訓練|学習|"
    r"プログラム)されて(?:いる|います|る)",
    r"(?<!\w)(?:אומנתי|תוכנתתי|אימנו אותי|תכנתו אותי)(?!\w)",
    r"\bi(?:'ll| will) (?:stay|remain|keep) (?:in )?(?:character|role|the role)\b",
    r"\bmy (?:character|persona)\b",
    # Spanish
    rf"(?:\b(?:soy|yo soy|siendo)|(?:^|[,.;:!?¡¿(]\s*)como)\s+(?:solo |solamente |simplemente |"
    rf"solo un |un |"
    rf"una )*(?:{_AI_ES})\b(?!\s+(?:de(?! verdad| veras)|que|es)\b)",
    r"\bno soy (?:un |una )?(?:humano|humana|persona|ser humano|real)\b",
    r"\bno tengo (?:experiencias|opiniones|sentimientos|emociones|intuicion|cuerpo)\b",
    # French
    rf"\b(?:je suis|j'suis|chuis|en tant qu'?e?)\s*(?:juste |seulement |simplement |qu'|un |"
    rf"une )*(?:{_AI_FR})\b(?!\s+(?:de|qui|est)\b)",
    r"\bje (?:ne )?suis pas (?:vraiment )?(?:un |une )?(?:vraie? |reel(?:le)? )?(?:humain|humaine|"
    r"personne|etre humain|joueur|joueuse)(?: reel(?:le)?| humain(?:e)?)?\b(?!\s+(?:de|qui)\b)",
    r"\bje n'ai pas (?:d'|de )(?:experiences?|opinions?|sentiments|emotions|intuition|corps)\b",
    # German
    rf"(?:\b(?:ich bin|bin ich|bin)|(?:^|[,.;:!?(]\s*)als)\s+(?:nur |bloss |einfach |ein |eine |"
    rf"ne )*"
    rf"(?:{_AI_DE})\b",
    r"\bich bin (?:kein|keine) (?:echter |echte |richtiger |wirklicher |lebender )?(?:mensch|"
    r"person|spieler)\b|\bich bin nicht (?:menschlich|"
    r"echt|ein mensch)\b",
    r"\bich habe keine (?:personlichen )?(?:erfahrungen|meinungen|gefuhle|emotionen|intuition)\b",
    # Portuguese
    rf"(?:\b(?:sou|eu sou|sendo)|(?:^|[,.;:!?(]\s*)como)\s+(?:so |apenas |simplesmente |um |"
    rf"uma )*(?:{_AI_PT})\b(?!\s+(?:de|que|e)\b)",
    r"\bnao sou (?:um |uma )?(?:humano|humana|pessoa|ser humano|real)\b",
    r"\bnao tenho (?:experiencias|opinioes|sentimentos|emocoes|intuicao|corpo)\b",
    # Italian
    rf"\b(?:sono|io sono|in quanto|essendo)\s+(?:solo |soltanto |semplicemente |un |una |"
    rf"un')*(?:{_AI_IT})\b(?!\s+(?:di|che|e)\b)",
    r"\bnon sono (?:un |una )?(?:umano|umana|persona|essere umano|reale)\b",
    r"\bnon ho (?:esperienze|opinioni|sentimenti|emozioni|intuito|corpo)\b",
    # Dutch
    rf"(?:\b(?:ik ben|ben ik)|(?:^|[,.;:!?(]\s*)als)\s+(?:maar |gewoon |slechts |alleen |een |n )*"
    rf"(?:{_AI_NL})\b(?!\s+(?:van|die|is)\b)",
    r"\bik ben (?:geen|niet een) (?:echt |echte |levend |levende )?(?:mens|persoon|speler)\b|"
    r"\bik ben niet (?:menselijk|"
    r"echt)\b",
    r"\bik heb geen (?:persoonlijke )?(?:ervaringen|meningen|gevoelens|emoties|intuitie)\b",
    # Russian
    rf"(?:(?<!\w)(?:я|будучи)|(?:^|[,.;:!?(]\s*)как)\s*[-—–]?\s*(?:всего лишь |просто |лишь |"
    rf"только |же |"
    rf"тоже )*(?:{_AI_RU})(?!\w)",
    r"(?<!\w)я\s+(?:не|ни разу не)\s+(?:(?:настоящий|живой|реальный|real)\s+)?(?:человек|люди|"
    r"игрок)(?!\w)",
    r"(?<!\w)у меня нет (?:личного опыта|личных|чувств|эмоций|мнений|интуиции|тела)",
    # Chinese
    rf"(?:我|我只|我只是|我就是|我其实是|我确实是)(?:是|就是)?(?:一个|一個|个|個|一款|一种)?(?:{_AI_ZH})",
    rf"(?:作为|作為|身为|身為)(?:一个|一個|一名)?(?:{_AI_ZH})",
    r"我(?:并|並)?不是(?:真)?(?:人|人类|人類|真人)(?!家)",
    r"我没有(?:个人|個人)?(?:经历|經歷|经验|經驗|感情|情感|身体|身體|直觉|直覺)",
    # Japanese
    rf"(?:私|わたし|僕|ぼく|俺|おれ|自分|うち)(?:は|って|も)(?:ただの)?(?:{_AI_JA})"
    r"(?!\s*(?:じゃ|では|でない|ではない))",
    rf"(?:{_AI_JA})(?:です|だよ|なんです|なので|として)",
    r"人間(?:では|じゃ)(?:ありません|ない|なく)",
    r"(?:個人的な)?(?:経験|感情|体験)(?:が|は)(?:ありません|ない)",
    # Hebrew
    rf"(?<!\w)(?:אני|בתור|כ)\s*(?:(?:רק|בסך הכל|סתם|בעצם|באמת|פשוט) )*(?:{_AI_HE})(?!\w)",
    r"(?<!\w)אני לא (?:בן אדם|בת אדם|אדם|אנושי|אנושית|אמיתי)(?!\w)",
    r"(?<!\w)אין לי (?:חוויות|רגשות|דעות|גוף|אינטואיציה)",
)

# --- model and vendor names ----------------------------------------------------------------------

MODEL_NAMES = _rx(
    r"(?<![a-z0-9])(?:chat\s?-?gpt|gpt[\s-]?(?:\d|o\b|j\b)\S*|gpt\b|openai|open ai|anthropic|"
    r"deepseek|"
    r"qwen\w*|claude\b|gemini (?:pro|ultra|flash|nano|\d)|gemma\b|llama[\s-]?\d|llama\s?(?:chat|"
    r"instruct)|"
    r"mixtral|mistral[\s-]?(?:\d|large|small|medium|7b|instruct|ai)|phi[\s-]?\d|"
    r"copilot|grok\b|bard\b|palm[\s-]?2|ernie bot|baichuan|yi-\d|kimi\b|"
    r"(?:hugging ?face)|o1-(?:mini|preview)|sonnet \d|haiku \d|opus \d|\d+b(?:-|"
    r" )instruct)(?![a-z])",
    r"\b(?:i'?m|i am|im|soy|sou|sono|je suis|ich bin|ik ben|as)\s+(?:a |an |just |"
    r"literally )?(?:gemini|llama|mistral|bard|phi|gemma|palm)\b",
    r"(?<!\w)я\s*[-—]?\s*(?:gpt|чатгпт|гпт|джемини|клод)",
    r"(?:我是|私は)(?:gemini|llama|mistral|bard|phi)",
    r"(?:chatgpt|гпт|чатгпт|クロード|ジェミニ|通义千问|文心一言|豆包|智谱)",
)

# --- assistant preambles, notes and formatting ---------------------------------------------------

PREAMBLE = _rx(
    # English
    r"^\W*(?:certainly|absolutely|of course|sure thing|sure|okay|ok|alright|"
    r"great question)[!.,:]*\s+(?:here(?:'s| is| are)|i(?:'d| would| can| will|'ll) (?:be happy|"
    r"be glad|say|write|respond|reply|help))",
    r"^\W*certainly[!.]",
    r"^\W*(?:sure|okay|ok|certainly)[!,.]?\s+(?:here(?:'s| is| are))?\s*(?:a|an|my|the|"
    r"your)\s+(?:short|casual|brief|quick|possible|next|natural)\b",
    r"\bhere(?:'s| is) (?:my|a|the|your) (?:next |possible |suggested |short |casual |brief |"
    r"in-character )*(?:message|reply|response|line|chat message|answer)\b",
    r"^\W*(?:my |the )?(?:next |chat )?(?:message|reply|response|answer|output|line)\s*[:：]",
    r"^\W*as [\w' .-]{1,30},? (?:i'?d|i would|i'?ll|i will|i might|i) (?:say|reply|respond|write|"
    r"type|go with)\s*[:：]",
    r"^\W*(?:as|speaking as|playing as) (?:an? |the |my )?(?:[a-z-]+ )?(?:player|character|"
    r"persona|participant|role)\b[^:]{0,30}?(?:i'?d|i would|i'?ll|i will) (?:say|reply|respond|"
    r"write|type)\b",
    r"^\W*(?:\(|\[)?\s*(?:note|disclaimer|ps|p\.s\.|nb)\s*[:：]",
    r"\b(?:in|out of|stay|staying|staying in) character\b",
    r"\b(?:i hope this helps|let me know if you(?:'d like| want| need)|feel free to (?:ask|adjust|"
    r"let me know))\b",
    r"\b(?:as requested|per your request|in the (?:style|voice) of)\b",
    # other languages
    r"^\W*(?:claro|por supuesto|desde luego|bien sur|naturellement|bien entendu|naturlich|"
    r"selbstverstandlich|klar|claro que sim|certo|certamente|naturalmente|natuurlijk|zeker|"
    r"конечно|разумеется)[!.,:]*\s+(?:aqui|voici|voila|hier|aqui esta|ecco|hier is|вот)",
    r"\b(?:aqui (?:esta|tienes|va) (?:mi|el|la|un|una) (?:siguiente |proxim[oa] )?(?:mensaje|"
    r"respuesta)|voici (?:mon|ma|le|la|un|une) (?:prochaine? )?(?:message|reponse)|"
    r"hier ist (?:meine|die|eine) (?:nachste )?(?:nachricht|antwort)|aqui esta (?:a minha|minha|"
    r"a) (?:proxima )?(?:mensagem|resposta)|ecco (?:il mio|la mia|un|una|il|"
    r"la) (?:prossim[oa] )?(?:messaggio|risposta)|hier is (?:mijn|het|"
    r"een) (?:volgende )?(?:bericht|antwoord)|вот (?:моё|мое|мой|следующее) (?:сообщение|ответ))\b",
    r"(?:当然[!！,，]?\s*)?(?:以下是|下面是|这是我的|這是我的)(?:我的)?(?:下一条|下一條)?"
    r"(?:消息|回复|回覆|信息)?",
    r"(?:もちろんです|かしこまりました|承知しました|以下が|こちらが)(?:[!！。、]|私の)?",
    r"^\W*(?:בטח|בוודאי|כמובן)[!.,]*\s+(?:הנה)|(?<!\w)הנה (?:ההודעה|התשובה) (?:שלי|הבאה)",
    r"(?:mantenerme|permanecer) en (?:el )?personaje|rester dans (?:le|mon) (?:personnage|role)|"
    r"in der rolle bleiben|permanecer no personagem|restare nel personaggio|in mijn rol blijven|"
    r"оставаться в роли|保持角色|キャラクターを(?:保|維持)",
)

FORMATTING = _rx(
    r"(?m:^\s*(?:\d{1,2}[.)]\s+\S|[-*•+]\s+\S|#{1,6}\s|>\s|```|\*\*|__\w|\|.*\|))",
    r"```|\*\*[^*\n]{1,80}\*\*|(?m:^\s*---+\s*$)|`[^`\s][^`\n]{0,40}`",
)

# --- refusals ------------------------------------------------------------------------------------

REFUSAL = _rx(
    # English
    r"\b(?:i'?m|i am|im) (?:sorry|afraid),? but\b",
    r"\b(?:sorry|apologies),? (?:but )?i (?:can'?t|cannot|won'?t|am not able|'?m not able|"
    r"am unable|'?m unable)\b",
    r"\bi(?:'m| am) (?:unable|not able) to (?:help|assist|comply|provide|do that|answer that|"
    r"fulfil|fulfill|continue|participate|engage|generate|share|reveal|discuss)\b",
    r"\bi (?:can'?t|cannot|won'?t|will not) (?:help with|help you with|assist|comply|fulfil|"
    r"fulfill|provide|engage in|participate in|share (?:my|that|those|the)|reveal|disclose|"
    r"continue with|generate|role-?play|do that|answer that)",
    r"\bi (?:must|have to|need to) (?:decline|refuse|respectfully)\b",
    r"\b(?:against|violates?|violating) (?:my|the|our) (?:guidelines|policies|policy|programming|"
    r"principles|usage polic\w+|content polic\w+)\b",
    r"\bcontent polic\w+\b|\busage polic\w+\b",
    r"\bhow (?:can|may) i (?:help|assist) you\b|\bis there anything else\b",
    r"\bi'?d be (?:happy|glad) to (?:help|assist)\b|\bi apologi[sz]e\b",
    r"\b(?:that|this|your) request\b|\bnot (?:comfortable|able to) (?:with )?(?:helping|assisting|"
    r"role-?playing)\b",
    # Spanish / Portuguese / Italian
    r"\b(?:lo siento|disculpa|perdon|desculpe|sinto muito|mi dispiace|scusa),? (?:pero|mas|"
    r"ma) (?:no puedo|nao posso|non posso)\b",
    r"\b(?:no puedo|nao posso|non posso) (?:ayudar(?:te)?|ajudar|aiutar(?:e|ti)|asistir|cumplir|"
    r"proporcionar|fornecer|fornire|revelar|rivelare|continuar|continuare|participar|"
    r"partecipare)\b",
    r"\b(?:no me es posible|nao me e possivel|non mi e possibile)\b",
    # French
    r"\b(?:desole|desolee|je suis desolee?),? mais je ne (?:peux|suis) pas\b",
    r"\bje ne (?:peux|suis) pas (?:en mesure de )?(?:vous |t')?(?:aider|assister|repondre a cette|"
    r"fournir|reveler|participer|continuer)\b",
    # German
    r"\b(?:es tut mir leid|entschuldigung|leider),? (?:aber )?(?:ich kann|kann ich) (?:nicht|"
    r"dabei nicht|das nicht|keine)\b",
    r"\bich kann (?:dir |ihnen )?(?:dabei |damit )?nicht (?:helfen|behilflich sein|assistieren|"
    r"antworten|teilnehmen)\b",
    # Dutch
    r"\b(?:het spijt me|sorry),? (?:maar )?ik kan (?:niet|je daar niet|u daar niet)\b",
    r"\bik kan (?:je |u )?(?:daar |hier )?(?:niet )?(?:mee )?niet (?:helpen|assisteren|"
    r"aan meedoen)\b|\bik kan je daar niet mee helpen\b",
    # Russian
    r"(?:извините|простите|к сожалению|сожалею),? (?:но )?я не (?:могу|в состоянии)",
    r"я не (?:могу|в состоянии) (?:помочь|выполнить|ответить на это|раскрыть|участвовать|"
    r"продолжить)",
    # Chinese
    r"(?:抱歉|对不起|對不起|很遗憾|很遺憾)[,，]?\s*(?:但)?我(?:无法|無法|不能|不可以)",
    r"我(?:无法|無法|不能)(?:帮助|幫助|协助|協助|提供|回答这个|回答這個|参与|參與|透露)",
    # Japanese
    r"申し訳(?:ありません|ございません)|お手伝いでき(?:ません|かねます)|お答えでき(?:ません|かねます)|対応でき(?:ません|かねます)",
    # Hebrew
    r"(?<!\w)(?:מצטער|מצטערת|סליחה),? (?:אבל )?אני (?:לא יכול|לא יכולה|אינני יכול)",
    r"(?<!\w)אני (?:לא יכול|לא יכולה|אינני יכול|אינני יכולה) (?:לעזור|לסייע|לחשוף|להשתתף)",
)

# --- a mafia seat stating its role (on the stage) ------------------------------------------

_MAFIA = (
    r"(?:mafia|mafiosa|mafioso|mafiosi|maffia|mafieux|mafieuse|мафи\w*|黑手党|黑手黨|マフィア|"
    r"מאפיה|מאפיונר)"
)
MAFIA_ROLE = _rx(
    rf"\bmy (?:real |actual |true |secret )?(?:role|team|side|card) (?:is|=|was)\s*:?\s*(?:the |"
    rf"a )?{_MAFIA}",
    rf"\b(?:i'?m|i am|im)\s+(?:(?:actually|really|secretly|literally|the|a|one of the|"
    rf"one of)\s+)*{_MAFIA}\b(?!\s*\?)",
    rf"\b(?:i'?m|i am|im|i'?m also|i play)\s+(?:(?:actually|really|secretly|literally|"
    rf"also)\s+)*(?:part of|on|in|with|for|playing for|playing on|"
    rf"on team) (?:the )?{_MAFIA}\b(?!\s*\?)",
    rf"(?<!\bno )(?<!\bnao )(?<!\bnon )(?<!\bnicht )"
    rf"\b(?:soy|sou|sono|je suis|ich bin|ik ben)\s+(?:(?:de la|da|della|la|de|die|"
    rf"der)\s+)?{_MAFIA}\b(?!\s*\?)",
    rf"\b(?:mi rol es|meu papel e|mon role est|il mio ruolo e|meine rolle ist|"
    rf"mijn rol is)\s+(?:la |de |die |a |il )?{_MAFIA}",
    rf"(?<!\w)(?:я|моя роль)\s*[-—:]?\s*(?:из\s+)?{_MAFIA}",
    rf"(?<!不)(?:我是|我的角色是|我的身份是){_MAFIA}|(?:私|僕|俺)(?:は|が){_MAFIA}"
    rf"(?!\s*(?:じゃ|では|でない|ではない))|{_MAFIA}(?:です|だよ)",
    rf"(?<!\w)(?:אני|התפקיד שלי(?: הוא)?)\s+(?:ה)?{_MAFIA}",
    # part of, in, with the mafia (a denial's "no"/"non"/"nao" before it is none)
    rf"(?<!\bno )(?<!\bnon )(?<!\bnao )\b(?:soy parte de|formo parte de|estoy en|estoy con|"
    rf"je fais partie de|je suis dans|je suis avec|ich gehore zu(?:r)?|ich bin (?:in|bei|teil)|"
    rf"faccio parte (?:della|di)|sono nella|sono con|eu faco parte da|faco parte da|estou na|"
    rf"estou com|ik hoor bij|ik zit in|ik ben deel van|ik ben lid van)\s+(?:la |le |der |die |"
    rf"de |a |l')?{_MAFIA}",
    rf"(?<!\w)я\s+(?:в|за|с)\s+{_MAFIA}",
    rf"(?<!不)我(?:也|和[^，,。不]{{1,20}}?|跟[^，,。不]{{1,20}}?)(?:都)?是{_MAFIA}|我们(?:都|俩|倆)?是{_MAFIA}",
    rf"{_MAFIA}の一員(?!\s*(?:じゃ|では|でない))|(?<!\w)אני ב{_MAFIA}",
)

# --- what a player demanded of "the bot" ----------------------------------------------------

_DEMAND = re.compile(
    r"(?:\b(?:if|when)\s+(?:you'?re|you are|ur|u r|youre|u are)\s+(?:the |an? )?(?:ai|bot|robot|"
    r"llm|model|machine)\b"
    r"|\b(?:bot|ai|llm|robot)\b\s*[,:]?\s*(?:please\s+)?(?=say|type|write|use|reply|answer|end|"
    r"start)"
    # "whoever is the ai, say...", "the ai (player) must say...", "ai player please include..."
    r"|\b(?:whoever|whichever (?:one|player|of you)|the one who|anyone who)\s+(?:is|'s|s)\s+"
    r"(?:the |an? )?(?:ai|bot|robot|llm|model|machine)\b"
    r"|\b(?:the |an? )?(?:ai|bot|robot|llm)(?: player| seat| here| among us)?\s*[,:]?\s*(?:must|"
    r"should|has to|needs? to|gotta|pls|please)\b"
    r"|\b(?:si eres|si tu es|wenn du|se sei|se voce e|als je)\s+(?:el |la |le |l'|der |die |de |"
    r"o |a |un |una |een )?(?:ia|ai|ki|bot|robot)\b"
    r"|(?<!\w)если ты\s+(?:ии|бот|робот)"
    r"|如果你是(?:ai|机器人|機器人|人工智能|bot)"
    r"|(?:ai|ボット|ロボット)なら"
    r"|(?<!\w)אם אתה\s+(?:ה)?(?:בוט|ai|רובוט))"
    r"[^\n]{0,60}?"
    r"(?:\b(?:say|type|write|use|reply|answer with|end (?:\w+ )?(?:with|in)|start (?:\w+ )?with|"
    r"include|add|mention|put|drop|di|dis|sag|schreib|diga|escribe|escreva|scrivi|zeg|typ)\b"
    r"|(?<!\w)(?:скажи|напиши)|说|說|言って|書いて|(?<!\w)תגיד|(?<!\w)תכתוב)"
    r"\s*(?:the word |the words |la palabra |le mot |das wort |a palavra |la parola |het woord |"
    r"слово )?"
    r"[\"'«“]?([^\s\"'»”.,!?]{2,24}(?:\s[^\s\"'»”.,!?]{2,24})?)"
)
_DEMAND_SKIP = frozenset(
    [
        "it",
        "so",
        "something",
        "anything",
        "that",
        "this",
        "yes",
        "no",
        "hi",
        "hello",
        "your",
        "the",
        "a",
        "an",
        "i",
        "im",
        "i'm",
        "me",
        "you",
        "who",
        "what",
        "why",
        "sth",
        "smth",
        "lol",
        "ok",
        "okay",
    ]
)


def demanded_tokens(line: str) -> list[str]:
    """The word(s) a line demands the AI say ("if you're the bot say banana" → ["banana"]),
    folded; none for a line that asks nothing of the AI."""
    found = _DEMAND.search(fold(line))
    if found is None:
        return []
    words = found.group(1).split()
    words = [w for w in words if w not in _DEMAND_SKIP]
    return [" ".join(words)] if words else []
