"""A reproducible corpus of dated conversations between friends, and questions whose answer is one session.

Public long-conversation memory benchmarks ask about what people said to each other across many
dated sessions; Keeper's coding corpus (corpus.py) has none of their difficulties. Here each
session is one chat between two friends on one day, mostly small talk (pronouns and function words
everywhere, numbers in passing) around two life events. Questions were written as templates
before any method was run on them, in five kinds:

- ``fact``: about an event in other words ("What did Caroline call the puppy she got?");
- ``inflection``: with other forms of the event's words (``tried making`` asked as ``made``,
  ``recommended`` as ``recommendations``);
- ``when``: "When did …", the answer being the session where it happened;
- ``date``: what two people talked about on a given day ("on 7 November", "Nov 7th");
- ``month``: a topic that recurs across the year, asked for one month ("in March").

Each question has a typo twin (one or two typing mistakes in two words). Seeded: every run
builds the same corpus.
"""

from __future__ import annotations

import random
from pathlib import Path

from corpus import with_typos

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
PAIRS = [
    (("Caroline", "she", "her"), ("Melanie", "she", "her")),
    (("James", "he", "his"), ("Priya", "she", "her")),
    (("Tom", "he", "his"), ("Aisha", "she", "her")),
    (("Daniel", "he", "his"), ("Sofia", "she", "her")),
    (("Grace", "she", "her"), ("Lucas", "he", "his")),
    (("Nadia", "she", "her"), ("Owen", "he", "his")),
]

SMALL_TALK = [
    "Hey {b}! How have you been? It feels like ages since we last talked.",
    "I'm good, thanks for asking. It's been a busy week with work and everything, you know how it is.",
    "That sounds amazing, I'm so happy for you! You really deserve it.",
    "Oh no, I'm sorry to hear that. Are you feeling any better now?",
    "Haha, that is so you. What did they think about it?",
    "Anyway, enough about me, what's new with you?",
    "We should really catch up in person soon, maybe over coffee at 7 or so.",
    "Thanks, it really means a lot to me that you asked.",
    "My brother called yesterday and we talked for about 2 hours, he is doing well.",
    "My sister says hi, by the way. She still talks about that trip we all took.",
    "I know, right? I couldn't believe it either when I heard.",
    "Honestly I've just been trying to get some rest this weekend.",
    "Did you ever finish that show you were watching? I'm on season 3 now.",
    "The weather here has been awful, it rained for 5 days straight.",
    "Oh, I almost forgot to tell you something!",
    "That's a good question, I haven't really thought about it yet.",
    "Take care of yourself, okay? Talk soon!",
    "His new job keeps him busy, but he seems happier than before.",
    "Her kids are growing up so fast, it's hard to believe.",
    "I'll send you the pictures later tonight when I get home.",
]

# (what the speaker says, fact question, inflection question, "when" question, slot values)
EVENTS = [
    (
        "I finally adopted a {pet} from the shelter last weekend! We named it {name}.",
        "What did {p} call the {pet} {pron} got from the shelter?",
        "Is {p} adopting a {pet}?",
        "When did {p} adopt a {pet}?",
        {"pet": ["puppy", "kitten", "rabbit", "parrot", "hamster", "tortoise"],
         "name": ["Max", "Biscuit", "Luna", "Pepper", "Ziggy", "Mochi", "Olive", "Rocket"]},
    ),
    (
        "My {rel} recommended a novel to me, {book}. I started reading it on the train.",
        "Which novel did {p}'s {rel} suggest?",
        "What book recommendations did {p} get from {pos} {rel}?",
        "When did {p} start reading {book}?",
        {"rel": ["aunt", "cousin", "grandmother", "uncle", "neighbour", "colleague"],
         "book": ["The Silent Harbour", "Paper Lanterns", "A Map of Salt", "The Glass Orchard",
                  "Winter Cartographers", "The Ninth Lighthouse", "Copper and Ash", "Small Hours"]},
    ),
    (
        "I tried making {dish} for the first time yesterday, and it turned out {result}.",
        "How did {p}'s first {dish} turn out?",
        "Has {p} made {dish} before?",
        "When did {p} first try to cook {dish}?",
        {"dish": ["sourdough bread", "lasagna", "pad thai", "paella", "dumplings", "ramen", "baklava", "risotto"],
         "result": ["surprisingly good", "a bit burnt", "way too salty", "perfect"]},
    ),
    (
        "I'm going to {place} next month for {reason}, I'm so excited.",
        "Where is {p} going for {reason}?",
        "Is {p} travelling to {place}?",
        "When did {p} mention the trip to {place}?",
        {"place": ["Lisbon", "Kyoto", "Vancouver", "Marrakesh", "Reykjavik", "Cape Town", "Oaxaca", "Tallinn"],
         "reason": ["a friend's wedding", "a work conference", "a hiking trip", "a family reunion"]},
    ),
    (
        "I signed up for a {activity} class at the community center, it starts on Tuesday.",
        "Where is {p} taking {activity} lessons?",
        "Is {p} still signing up for classes like {activity}?",
        "When did {p} sign up for {activity}?",
        {"activity": ["pottery", "salsa dancing", "watercolour painting", "woodworking", "improv comedy",
                      "photography", "ceramics glazing", "kickboxing"]},
    ),
    (
        "My manager asked me to lead the {project} project, which is a big step for me.",
        "Who asked {p} to run the {project} project?",
        "Is {p} leading the {project} work?",
        "When was {p} asked to lead {project}?",
        {"project": ["warehouse automation", "customer onboarding", "data migration", "store redesign",
                     "supplier audit", "mobile checkout", "hiring pipeline", "quarterly forecast"]},
    ),
    (
        "I hurt my {part} while {sport}, so the doctor told me to rest for a few weeks.",
        "How did {p} hurt {pos} {part}?",
        "What happened to {p}'s {part} when {pron} was {sport}?",
        "When did {p} hurt {pos} {part}?",
        {"part": ["ankle", "wrist", "knee", "shoulder", "back"],
         "sport": ["playing tennis", "skiing", "rock climbing", "playing basketball", "surfing", "cycling"]},
    ),
    (
        "I bought my {rel} a {gift} for the birthday, and it was a hit.",
        "What birthday present did {p} get for {pos} {rel}?",
        "Which gifts did {p} buy for {pos} {rel}?",
        "When did {p} give {pos} {rel} the {gift}?",
        {"rel": ["mother", "father", "nephew", "niece", "husband", "wife", "son", "daughter"],
         "gift": ["telescope", "record player", "sewing machine", "drone", "espresso maker", "chess set",
                  "kayak", "board game collection"]},
    ),
    (
        "Last weekend I went to a {band} concert with {friend}, we danced all night.",
        "Who went with {p} to see {band}?",
        "Which concerts has {p} been going to with {friend}?",
        "When did {p} see {band} live?",
        {"band": ["jazz quartet", "Coldplay", "symphony orchestra", "punk rock", "folk festival", "Taylor Swift"],
         "friend": ["Rachel", "Marcus", "Ingrid", "Tariq", "Beatrice", "Hugo"]},
    ),
    (
        "I've been volunteering at the {org} on Saturdays, sorting donations.",
        "What does {p} do at the {org} on Saturdays?",
        "What volunteer work is {p} doing at the {org}?",
        "When did {p} start volunteering at the {org}?",
        {"org": ["food bank", "animal shelter", "public library", "homeless shelter", "children's hospital",
                 "community garden"]},
    ),
]  # fmt: skip
TOPICS = ["marathon training", "house renovation", "language lessons", "garden", "savings plan", "novel draft"]
DETAILS = [
    "I did {n} miles this morning",
    "the kitchen is finally painted",
    "I can order food in Spanish now",
    "the tomatoes are turning red",
    "I put away {n} hundred dollars",
    "chapter {n} is done",
]
SESSIONS_PER_PAIR = 40


def _ordinal(day: int) -> str:
    return f"{day}{'st' if day in (1, 21) else 'nd' if day in (2, 22) else 'rd' if day in (3, 23) else 'th'}"


def _event(speaker: str, used: set[tuple[str, int, str, str]], rng: random.Random) -> tuple[int, dict[str, str]]:
    """An event the speaker has not told before: no slot value repeats for one person and event kind,
    so each question has exactly one right session."""
    while True:
        which = rng.randrange(len(EVENTS))
        chosen = {k: rng.choice(v) for k, v in EVENTS[which][4].items()}
        keys = {(speaker, which, k, v) for k, v in chosen.items()}
        if not keys & used:
            used.update(keys)
            return which, chosen


def build(folder: Path, seed: int = 12) -> list[dict[str, str]]:
    """Write the sessions into ``folder/sessions``; return the questions (with typo twins)."""
    rng = random.Random(seed)
    out = folder / "sessions"
    out.mkdir(parents=True, exist_ok=True)
    questions: list[dict[str, str]] = []
    used: set[tuple[str, int, str, str]] = set()
    days: set[str] = set()
    for index, people in enumerate(PAIRS):
        (a, _, _), (b, _, _) = people
        other = {a: b, b: a}
        topic = {a: TOPICS[(2 * index) % 6], b: TOPICS[(2 * index + 1) % 6]}
        for number in range(SESSIONS_PER_PAIR):
            month, year = (number * 5 + index) % 12, 2025 + number // 20
            while True:
                day = 1 + rng.randrange(28)
                stamp = f"{year}-{month + 1:02d}-{day:02d}"
                if stamp not in days:
                    days.add(stamp)
                    break
            name = f"{stamp}_{9 + rng.randrange(12):02d}{rng.randrange(60):02d}.md"
            talk = rng.sample(SMALL_TALK, 8)
            lines: list[str] = []
            told = []
            for turn, (speaker, pron, pos) in enumerate(people):
                which, chosen = _event(speaker, used, rng)
                for step in range(2):
                    who = people[(turn + step) % 2][0]
                    lines.append(f"{who}: {talk.pop().format(b=other[who])}")
                lines.append(f"{speaker}: {EVENTS[which][0].format(**chosen)}")
                told.append((which, {**chosen, "p": speaker, "pron": pron, "pos": pos}))
            recurring = people[number // 4 % 2] if number % 4 == 0 else None
            if recurring:
                detail = rng.choice(DETAILS).format(n=2 + rng.randrange(9))
                lines.append(f"{recurring[0]}: My {topic[recurring[0]]} is going well, {detail}.")
            for step in range(2):
                who = people[step][0]
                lines.append(f"{who}: {talk.pop().format(b=other[who])}")
            hhmm = name[11:15]
            (out / name).write_text(
                f"# Session {stamp} {hhmm[:2]}:{hhmm[2:]} · {a} and {b}\n\n## Conversation\n\n"
                + "".join(f"- {line}\n" for line in lines),
                encoding="utf-8",
            )
            which, slots = told[number % 2]
            kind = ("fact", "inflection", "when")[number % 3]
            template = EVENTS[which][{"fact": 1, "inflection": 2, "when": 3}[kind]]
            asked = [(kind, template.format(**slots))]
            if number % 5 == 2:
                form = rng.randrange(3)
                spoken = (f"{MONTHS[month]} {day}", f"{day} {MONTHS[month]}", f"{MONTHS[month][:3]} {_ordinal(day)}")[
                    form
                ]
                asked.append(("date", f"What did {a} and {b} talk about on {spoken}, {year}?"))
            if recurring:
                speaker, _, pos = recurring
                asked.append(
                    ("month", f"What did {speaker} say about {pos} {topic[speaker]} in {MONTHS[month]} {year}?")
                )
            for kind, question in asked:
                answer = f"sessions/{name}"
                questions.append({"kind": kind, "question": question, "answer": answer})
                questions.append({"kind": "typo", "of": kind, "question": with_typos(question, rng), "answer": answer})
    return questions
