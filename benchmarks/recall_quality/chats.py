"""A reproducible corpus shaped like real chat between friends, and questions whose evidence may
lie in several sessions.

conversations.py is tidy prose; real multi-week chats are not. Here each session is one day of
messages between two friends: short lines, slang ("ngl", "u", "rn"), typing slips, friends'
names spelled several ways (Katherine, Kathryn; Mohammed, Mohamed; Jon, John), and dates in
whatever form the writer likes ("the 14th", "14/02", "Feb 14th", "2025-02-14", "yesterday").
Questions were written as templates before any method ran on them, in eight kinds:

- ``fact``: about one event, naming the friend as the text does;
- ``name``: the same, naming the friend in another spelling than the text's;
- ``date``: what two people talked about on a day written as numbers (``19.01.2025``,
  ``1/19/2025``, ``2025/01/19``, ``19/01``);
- ``month-name``: the same with the month's name (``Jan 19th, 2025``, ``19 January``);
- ``relative``: the same asked relative to the day of asking ("yesterday", "3 days ago", "last
  Friday", "two weeks ago"; each question carries its ``today``);
- ``mentioned``: a day named in a chat before it came ("Zoe's wedding is on 14/02"), asked in
  another form;
- ``count``: "how many times…": every session it happened in is evidence;
- ``sequence``: "what happened after…", "first or last…", "which … more": the two or three
  sessions of a story or a comparison are evidence.

A question's ``answers`` are its evidence sessions: MRR counts the first one found, R@5 the share
of them in the top five. Each question has a typo twin. Seeded: ``build(folder, seed)`` builds
the same corpus every time; run.py reports the development seed and a held-out one apart.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from corpus import _typo as typo

MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
PAIRS = [("Maya", "Theo"), ("Rosa", "Dev"), ("Ines", "Kofi"), ("Lena", "Marco"), ("Yuki", "Sam"), ("Priti", "Olly")]
FRIENDS = [  # spellings of one friend's name that people really mix up
    ["Katherine", "Kathryn", "Katharine"],
    ["Mohammed", "Mohamed", "Muhammad"],
    ["Jon", "John"],
    ["Sean", "Shaun", "Shawn"],
    ["Zoe", "Zoey"],
    ["Isabel", "Isabelle", "Isobel"],
    ["Stephen", "Steven"],
    ["Caitlin", "Kaitlyn", "Katelyn"],
    ["Aleksandr", "Alexander", "Aleksander"],
    ["Ana", "Anna"],
    ["Leah", "Lea"],
    ["Bryan", "Brian"],
]
CHATTER = [
    "heyy", "hey whats up", "not much u?", "lol same", "omg", "haha no way", "ngl thats kinda wild",
    "tbh idk", "gonna crash soon, long day", "ugh mondays", "k talk later", "thx!!", "np", "brb",
    "wanna grab food this wk?", "cant, swamped rn", "lmao", "ok ok", "so tired today", "sry late reply",
    "all good", "nice!!", "miss u", "same tbh", "did u watch the game", "yeah it was mad", "hahaha",
    "wait what", "for real??", "ya", "nah", "cool cool", "ttyl", "on my way", "rain again smh",
]  # fmt: skip
# one-off events: what is said, the question, its slots
EVENTS = [
    ("{f} got a job at {company}!! starts next month", "Where did {f} get a job?",
     {"company": ["Spotify", "the bakery", "Lidl", "a law firm", "the museum", "Deloitte", "a startup", "the zoo"]}),
    ("{f} is moving to {city} :( gonna miss her", "Which city is {f} moving to?",
     {"city": ["Glasgow", "Lisbon", "Denver", "Hanoi", "Perth", "Bergen", "Tucson", "Porto"]}),
    ("had dinner w {f} at {place}, the {dish} was unreal", "Where did {p} have dinner with {f}?",
     {"place": ["Nandos", "Dishoom", "the noodle bar", "Wagamama", "Zizzi", "the taco truck"],
      "dish": ["ramen", "curry", "tacos", "carbonara", "dumplings", "brisket"]}),
    ("{f} broke their {part} skateboarding lol", "What did {f} break?",
     {"part": ["wrist", "ankle", "collarbone", "finger", "toe", "elbow"]}),
    ("lent {f} my {item}, never seeing that again lmao", "What did {p} lend {f}?",
     {"item": ["tent", "drill", "projector", "bike pump", "camera", "hair straightener", "ladder", "kayak"]}),
    ("{f} adopted a {pet}, its sooo cute", "What pet did {f} adopt?",
     {"pet": ["greyhound", "ferret", "cockatiel", "tortoise", "chinchilla", "axolotl"]}),
]  # fmt: skip
# days named before they come: what is said (a date form), the question (another form)
PLANS = [
    ("{f}s wedding is on {when}!!", "Whose wedding is on {when}?"),
    ("{f}s leaving party {when}, u coming?", "Who has a leaving party on {when}?"),
    ("dentist {when} ugh", "When does {p} see the dentist, {when}?"),
    ("{f} n me are doing the pub quiz {when}", "Who is doing the pub quiz with {p} on {when}?"),
]
# things done again and again with one friend: "how many times…"
HABITS = ["bouldering", "karaoke", "parkrun", "board games night", "pottery class", "open mic", "salsa", "fishing"]
HABIT_LINES = ["went {h} w {f} again", "{h} w {f} tonight, so fun", "{f} dragged me to {h} lol", "{h} with {f}!!"]
# stories told over sessions in order, "what happened after…": (its steps, the question, the first
# step that is evidence: the question names the step before it)
STORIES = [
    (["applied at {x}", "interview at {x} went ok i think", "got the offer from {x}!!!"],
     "What happened after {p}'s interview at {x}?", 1),
    (["viewed a flat in {x}, kinda tiny", "put an offer in on the {x} flat", "got the keys to the {x} flat omg"],
     "Did {p} get the {x} flat in the end, after the offer?", 1),
    (["signed up for the {x} half marathon", "did 18k for the {x} half training, dead", "finished the {x} half!! 1:52"],
     "How did {p}'s {x} half marathon go, from signing up to the race?", 0),
]  # fmt: skip
STORY_SLOTS = ["Camden", "Leith", "Brixton", "Didsbury", "Clifton", "Headingley", "Jesmond", "Roath"]
CAFES = ["Blue Door", "Kiln", "Sable", "Pavilion", "Fig and Olive", "Moth", "Tamarind", "Grindhouse"]
OPINIONS = ["10/10 would go again", "meh, overpriced", "best brunch ever", "kinda mid tbh"]
DAYS_BACK = {1: "yesterday", 3: "3 days ago", 14: "two weeks ago"}  # a relative question's words for them
SESSIONS_PER_PAIR = 40


def _typos(question: str, rng: random.Random) -> str:
    """As ``corpus.with_typos``, but dates and numbers stay as written: a mistyped date is another date."""
    words = question.split()
    long_ones = [i for i, w in enumerate(words) if sum(c.isalpha() for c in w) >= 5 and not any(c.isdigit() for c in w)]
    for i in rng.sample(long_ones, min(2, len(long_ones))):
        for _ in range(rng.choice((1, 2))):
            words[i] = typo(words[i], rng)
    return " ".join(words)


def _ordinal(day: int) -> str:
    return f"{day}{'st' if day in (1, 21, 31) else 'nd' if day in (2, 22) else 'rd' if day in (3, 23) else 'th'}"


def numeric_form(day: date, rng: random.Random, year: bool = True) -> str:
    d, m, y = day.day, day.month, day.year
    forms = [f"{d:02d}.{m:02d}.{y}", f"{d}/{m}/{y}", f"{y}/{m:02d}/{d:02d}", f"{d:02d}-{m:02d}-{y}"]
    if d > 12:
        forms += [f"{m}/{d}/{y}", f"{m:02d}/{d:02d}/{y % 100}"]
    if not year:
        forms = [f"{d}/{m}", f"{d:02d}.{m:02d}"] + ([f"{m}/{d}"] if d > 12 else [])
    return rng.choice(forms)


def spoken_form(day: date, rng: random.Random, year: bool = True) -> str:
    month, short, d = MONTHS[day.month - 1], MONTHS[day.month - 1][:3], day.day
    forms = [f"{month} {d}", f"{d} {month}", f"{short} {_ordinal(d)}", f"the {_ordinal(d)} of {month}"]
    form = rng.choice(forms)
    return f"{form}, {day.year}" if year else form


def _days(rng: random.Random, count: int) -> list[date]:
    """Distinct days over 2025-2026 whose month and day also differ (a day without its year is one session)."""
    taken: set[tuple[int, int]] = set()
    out = []
    while len(out) < count:
        day = date(2025, 1, 1) + timedelta(days=rng.randrange(660))
        if (day.month, day.day) not in taken:
            taken.add((day.month, day.day))
            out.append(day)
    return sorted(out)


def build(folder: Path, seed: int = 24) -> list[dict]:
    """Write the sessions into ``folder/sessions``; return the questions (with typo twins)."""
    rng = random.Random(seed)
    out = folder / "sessions"
    out.mkdir(parents=True, exist_ok=True)
    all_days = _days(rng, SESSIONS_PER_PAIR * len(PAIRS))
    rng.shuffle(all_days)
    questions: list[dict] = []
    friends = FRIENDS[:]
    for index, (a, b) in enumerate(PAIRS):
        chat = _Chat(a, b, sorted(all_days[index * SESSIONS_PER_PAIR : (index + 1) * SESSIONS_PER_PAIR]))
        rng.shuffle(friends)
        mine = {a: friends[:4], b: friends[4:8]}  # each speaker's friends: their names' spellings
        for speaker in (a, b):
            _tell_events(chat, speaker, mine[speaker], rng)
            _tell_plans(chat, speaker, mine[speaker], rng)
            _tell_habits(chat, speaker, mine[speaker], rng)
            _tell_story(chat, speaker, rng)
            _compare_cafes(chat, speaker, rng)
        _ask_by_date(chat, rng)
        files = _write_sessions(out, chat, rng)
        questions += _questions(chat, files, rng)
    return questions


@dataclass
class _Chat:
    """One pair's sessions while they are made: what each session tells, and what is asked of them."""

    a: str
    b: str
    days: list[date]
    talk: dict[int, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))  # session -> lines
    # what is asked: (kind, question, the sessions that are its evidence, the day it is asked on)
    asked: list[tuple[str, str, list[int], date | None]] = field(default_factory=list)

    def ask(self, kind: str, question: str, sessions: list[int], today: date | None = None) -> None:
        self.asked.append((kind, question, sessions, today))


def _tell_events(chat: _Chat, speaker: str, friend_of: list[list[str]], rng: random.Random) -> None:
    """One-off events, each told in one session (an event told twice with the same detail is dropped),
    asked about naming the friend as written or in another spelling."""
    slots_used: set[tuple[int, str]] = set()
    for number in rng.sample(range(len(chat.days)), 6):
        which = rng.randrange(len(EVENTS))
        line, question, options = EVENTS[which]
        chosen = {k: rng.choice(v) for k, v in options.items()}
        key = (which, next(iter(chosen.values())))
        if key in slots_used:
            continue
        slots_used.add(key)
        spellings = rng.choice(friend_of)
        written = rng.choice(spellings)
        chat.talk[number].append((speaker, line.format(f=written, **chosen)))
        other = [s for s in spellings if s != written]
        kind, named = ("fact", written) if rng.random() < 0.5 else ("name", rng.choice(other))
        chat.ask(kind, question.format(f=named, p=speaker, **chosen), [number])


def _tell_plans(chat: _Chat, speaker: str, friend_of: list[list[str]], rng: random.Random) -> None:
    """Plans for days still to come, the day written one way and asked another."""
    for number, (plan, plan_question) in zip(rng.sample(range(len(chat.days) - 1), 3), rng.sample(PLANS, 3)):
        when_day = chat.days[number] + timedelta(days=3 + rng.randrange(20))
        said = rng.choice([numeric_form(when_day, rng, year=False), spoken_form(when_day, rng, year=False)])
        if rng.random() < 0.3:
            said = f"the {_ordinal(when_day.day)}"
        chat.talk[number].append((speaker, plan.format(f=rng.choice(rng.choice(friend_of)), when=said)))
        form = rng.choice([numeric_form(when_day, rng), spoken_form(when_day, rng)])
        chat.ask("mentioned", plan_question.format(p=speaker, when=form), [number])


def _tell_habits(chat: _Chat, speaker: str, friend_of: list[list[str]], rng: random.Random) -> None:
    """Two habits with one friend, three or four times each: "how many times…"."""
    for habit in rng.sample(HABITS, 2):
        pal = rng.choice(friend_of)
        times = sorted(rng.sample(range(len(chat.days)), 3 + rng.randrange(2)))
        for number in times:
            chat.talk[number].append((speaker, rng.choice(HABIT_LINES).format(h=habit, f=rng.choice(pal))))
        chat.ask("count", f"How many times did {speaker} go to {habit} with {rng.choice(pal)}?", times)


def _tell_story(chat: _Chat, speaker: str, rng: random.Random) -> None:
    """A story in three steps, in three sessions in order."""
    story, place = rng.randrange(len(STORIES)), rng.choice(STORY_SLOTS)
    told, question, first = STORIES[story]
    steps = sorted(rng.sample(range(len(chat.days)), 3))
    for step, number in zip(told, steps):
        chat.talk[number].append((speaker, step.format(x=place)))
    chat.ask("sequence", question.format(p=speaker, x=place), steps[first:])


def _compare_cafes(chat: _Chat, speaker: str, rng: random.Random) -> None:
    """Two cafes tried in two sessions: "which … more"."""
    cafes = rng.sample(CAFES, 2)
    visits = sorted(rng.sample(range(len(chat.days)), 2))
    for cafe, number in zip(cafes, visits):
        chat.talk[number].append((speaker, f"tried {cafe} today, {rng.choice(OPINIONS)}"))
    chat.ask("sequence", f"Which did {speaker} like more, {cafes[0]} or {cafes[1]}?", visits)


def _ask_by_date(chat: _Chat, rng: random.Random) -> None:
    """A question about most days by their date: a third as numbers, a third with the month's name,
    one in six relative to a later day of asking."""
    for number, day in enumerate(chat.days):
        about = f"what did {chat.a} and {chat.b} chat about on"
        if number % 3 == 0:
            chat.ask("date", f"{about} {numeric_form(day, rng)}?", [number])
        elif number % 3 == 1:
            chat.ask("month-name", f"{about} {spoken_form(day, rng)}?", [number])
        elif number % 6 == 2:
            back, when = _days_back(day, rng)
            chat.ask("relative", f"what did {chat.a} tell {chat.b} {when}?", [number], day + timedelta(days=back))


def _days_back(day: date, rng: random.Random) -> tuple[int, str]:
    """How many days before the day of asking ``day`` was, and how a question says it."""
    back = rng.choice([1, 3, 14, 0])
    if back == 0:
        return 1 + rng.randrange(6), f"last {WEEKDAYS[day.weekday()]}"
    return back, DAYS_BACK[back]


def _write_sessions(out: Path, chat: _Chat, rng: random.Random) -> list[str]:
    """Write each day's session, what it tells among chatter; the session files' names, by day."""
    a, b = chat.a, chat.b
    files = []
    for number, day in enumerate(chat.days):
        lines = [(rng.choice((a, b)), rng.choice(CHATTER)) for _ in range(3 + rng.randrange(4))]
        for said in chat.talk[number]:
            lines.insert(rng.randrange(len(lines) + 1), said)
        lines += [(rng.choice((a, b)), rng.choice(CHATTER)) for _ in range(1 + rng.randrange(3))]
        hhmm = f"{8 + rng.randrange(14):02d}{rng.randrange(60):02d}"
        name = f"{day.isoformat()}_{hhmm}.md"
        (out / name).write_text(
            f"# Session {day.isoformat()} {hhmm[:2]}:{hhmm[2:]} · {a} and {b}\n\n## Chat\n\n"
            + "".join(f"- {who}: {text}\n" for who, text in lines),
            encoding="utf-8",
        )
        files.append(name)
    return files


def _questions(chat: _Chat, files: list[str], rng: random.Random) -> list[dict]:
    """Each question asked, its evidence as session files, then its typo twin."""
    questions = []
    for kind, question, numbers, today in chat.asked:
        answers = [f"sessions/{files[n]}" for n in numbers]
        item = {"kind": kind, "question": question, "answers": answers, "answer": answers[0]}
        if today is not None:
            item["today"] = today.isoformat()
        questions.append(item)
        questions.append({**item, "kind": "typo", "of": kind, "question": _typos(question, rng)})
    return questions
