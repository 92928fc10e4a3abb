"""English word forms to one stem, so "making", "makes" and "made" find each other.

The Porter2 ("Snowball English") algorithm, the stemmer search engines use, written out here in
plain string code (no ``re``: recall runs inside hooks) plus a short table of irregular verb
forms, which no suffix rule can join ("made" → "make", "went" → "go"). Only lower-case ASCII
letters are stemmed; anything else is returned as it is.
"""

from __future__ import annotations

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_LI_ENDINGS = frozenset("cdeghkmnrt")
EXCEPTIONS = {
    "skis": "ski", "skies": "sky", "idly": "idl",
    "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl",
    "sky": "sky", "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos",
    "bias": "bias", "andes": "andes",
}  # fmt: skip
_PREFIXES = ("arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers")  # R1 after these
_KEEP_BEFORE_ING = frozenset(("even", "cann", "inn", "earr", "herr", "out"))
# Irregular verb forms, to their base word (which is then stemmed as usual).
IRREGULAR = {
    "made": "make", "went": "go", "gone": "go", "did": "do", "done": "do", "said": "say", "told": "tell",
    "gave": "give", "given": "give", "took": "take", "taken": "take", "found": "find", "thought": "think",
    "bought": "buy", "brought": "bring", "wrote": "write", "written": "write", "ran": "run", "began": "begin",
    "begun": "begin", "broke": "break", "broken": "break", "chose": "choose", "chosen": "choose",
    "drove": "drive", "driven": "drive", "ate": "eat", "eaten": "eat", "fell": "fall", "fallen": "fall",
    "felt": "feel", "got": "get", "gotten": "get", "knew": "know", "known": "know", "left": "leave",
    "lost": "lose", "meant": "mean", "met": "meet", "paid": "pay", "sent": "send", "sold": "sell",
    "spoke": "speak", "spoken": "speak", "spent": "spend", "stood": "stand", "taught": "teach",
    "understood": "understand", "won": "win", "built": "build", "caught": "catch", "kept": "keep",
    "led": "lead", "sat": "sit", "slept": "sleep", "held": "hold", "heard": "hear", "hid": "hide",
    "hidden": "hide", "shook": "shake", "shaken": "shake", "sang": "sing", "sung": "sing", "swam": "swim",
    "threw": "throw", "thrown": "throw", "woke": "wake", "woken": "wake", "wore": "wear", "worn": "wear",
    "forgot": "forget", "forgotten": "forget", "drew": "draw", "drawn": "draw", "grew": "grow",
    "grown": "grow", "flew": "fly", "flown": "fly", "fought": "fight", "saw": "see", "seen": "see",
    "came": "come", "became": "become", "rode": "ride", "ridden": "ride", "rose": "rise", "risen": "rise",
    "froze": "freeze", "frozen": "freeze", "stole": "steal", "stolen": "steal", "sought": "seek",
    "struck": "strike", "swore": "swear", "sworn": "swear", "tore": "tear", "torn": "tear",
    "bent": "bend", "bound": "bind", "dealt": "deal", "dug": "dig", "fed": "feed", "fled": "flee",
    "hung": "hang", "lent": "lend", "lit": "light", "slid": "slide", "spun": "spin", "stuck": "stick",
    "stung": "sting", "swung": "swing", "wept": "weep", "wound": "wind", "men": "man", "women": "woman",
    "children": "child", "people": "person", "feet": "foot", "teeth": "tooth", "mice": "mouse",
}  # fmt: skip


def _region(word: str, start: int = 0) -> int:
    """Where R1 (or, from R1's start, R2) begins: after the first non-vowel that follows a vowel."""
    for i in range(start + 1, len(word)):
        if word[i] not in _VOWELS and word[i - 1] in _VOWELS:
            return i + 1
    return len(word)


def _short_syllable_end(word: str) -> bool:
    """Whether ``word`` ends in a short syllable (``hop``; a whole ``at``; ``past``)."""
    if len(word) == 2:
        return word[0] in _VOWELS and word[1] not in _VOWELS
    return word.endswith("past") or (
        len(word) >= 3
        and word[-3] not in _VOWELS
        and word[-2] in _VOWELS
        and word[-1] not in _VOWELS
        and word[-1] not in "wxY"
    )


def _has_vowel(text: str) -> bool:
    return any(c in _VOWELS for c in text)


_STEP1B_ENDINGS = ("eedly", "eed", "ingly", "edly", "ing", "ed")


def _step1a(word: str) -> str:
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith(("ied", "ies")):
        return word[:-2] if len(word) > 4 else word[:-1]
    if word.endswith(("us", "ss")):
        return word
    if word.endswith("s") and _has_vowel(word[:-2]):
        return word[:-1]
    return word


def _step1b(word: str, r1: int) -> str:
    if not word.endswith(_STEP1B_ENDINGS):
        return word
    for suffix in ("eedly", "eed"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + "ee" if len(stem) >= r1 and stem not in ("succ", "proc", "exc") else word
    for suffix in ("ingly", "edly", "ing", "ed"):
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix == "ing" and len(stem) == 2 and stem[1] == "y" and stem[0] not in _VOWELS:
                return stem[0] + "ie"  # dying, lying
            if suffix == "ing" and stem in _KEEP_BEFORE_ING:
                return word
            if not _has_vowel(stem):
                return word
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if stem.endswith(_DOUBLES):
                return stem if len(stem) == 3 and stem[0] in "aeo" else stem[:-1]  # added, ebbed, erred
            if r1 == len(stem) and _short_syllable_end(stem):
                return stem + "e"
            return stem
    return word


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("abli", "able"),
    ("entli", "ent"), ("ization", "ize"), ("izer", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("aliti", "al"), ("alli", "al"), ("fulness", "ful"), ("ousli", "ous"),
    ("ousness", "ous"), ("iveness", "ive"), ("iviti", "ive"), ("biliti", "ble"), ("bli", "ble"),
    ("fulli", "ful"), ("lessli", "less"), ("ogist", "og"),
)  # fmt: skip
_STEP3 = (
    ("ational", "ate"), ("tional", "tion"), ("alize", "al"), ("icate", "ic"), ("iciti", "ic"),
    ("ical", "ic"), ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize",
    "al", "er", "ic",
)  # fmt: skip


# Every ending a step looks for, in one tuple: most words have none, and one ``endswith`` says so.
_STEP2_ENDINGS = (*(suffix for suffix, _ in _STEP2), "ogi", "li")
_STEP3_ENDINGS = (*(suffix for suffix, _ in _STEP3), "ative")
_STEP4_ENDINGS = (*_STEP4, "ion")


def _step2(word: str, r1: int) -> str:
    if not word.endswith(_STEP2_ENDINGS):
        return word
    for suffix, repl in _STEP2:
        if word.endswith(suffix):
            return word[: -len(suffix)] + repl if len(word) - len(suffix) >= r1 else word
    if word.endswith("ogi"):
        return word[:-1] if len(word) - 3 >= r1 and word[-4:-3] == "l" else word
    if word.endswith("li"):
        return word[:-2] if len(word) - 2 >= r1 and word[-3:-2] in _LI_ENDINGS else word
    return word


def _step3(word: str, r1: int, r2: int) -> str:
    if not word.endswith(_STEP3_ENDINGS):
        return word
    for suffix, repl in _STEP3:
        if word.endswith(suffix):
            return word[: -len(suffix)] + repl if len(word) - len(suffix) >= r1 else word
    if word.endswith("ative"):
        return word[:-5] if len(word) - 5 >= r2 else word
    return word


def _step4(word: str, r2: int) -> str:
    if not word.endswith(_STEP4_ENDINGS):
        return word
    for suffix in _STEP4:
        if word.endswith(suffix):
            return word[: -len(suffix)] if len(word) - len(suffix) >= r2 else word
    if word.endswith("ion") and len(word) - 3 >= r2 and word[-4:-3] in ("s", "t"):
        return word[:-3]
    return word


def _step5(word: str, r1: int, r2: int) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        if len(stem) >= r2 or (len(stem) >= r1 and not _short_syllable_end(stem)):
            return stem
    elif word.endswith("ll") and len(word) - 1 >= r2:
        return word[:-1]
    return word


def stem(word: str) -> str:
    """The Porter2 stem of a lower-case English word; other words unchanged."""
    if word in IRREGULAR:
        word = IRREGULAR[word]
    if len(word) <= 2 or not (word.isascii() and word.isalpha() and word.islower()):
        return word
    if word in EXCEPTIONS:
        return EXCEPTIONS[word]
    if word[0] == "y":
        word = "Y" + word[1:]
    if "y" in word:
        word = word[0] + "".join("Y" if c == "y" and p in _VOWELS else c for p, c in zip(word, word[1:]))
    prefix = next((p for p in _PREFIXES if word.startswith(p)), "") if word.startswith(_PREFIXES) else ""
    r1 = len(prefix) if prefix else _region(word)
    r2 = _region(word, r1)
    word = _step1b(_step1a(word), r1)
    if len(word) > 2 and word[-1] in "yY" and word[-2] not in _VOWELS:
        word = word[:-1] + "i"
    word = _step5(_step4(_step3(_step2(word, r1), r1, r2), r2), r1, r2)
    return word.replace("Y", "y")
