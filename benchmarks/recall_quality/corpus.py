"""A reproducible corpus of coding-session memory and questions whose answer is one session.

Each session is a Keeper session file for one piece of work on one component of a fictional web
shop: a save (summary, decision, state, maybe an issue) and the transcript digest (prompts, files
changed, commands). Each question asks for one session in one of three ways:

- ``paraphrase``: about the work in other words (synonyms, other word forms, other order);
- ``identifier``: by a function, class or file the work touched, written the way people type it
  (``apply_discount`` asked as "applyDiscount", ``cart_service.py`` as "cart service");
- ``typo``: a paraphrase or identifier question with one or two typing mistakes in two words.

The generator is seeded, so every run builds the same corpus.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

COMPONENTS = [
    ("checkout", "src/checkout/cart_service.py", "apply_discount", "CartService"),
    ("payments", "src/payments/stripe_gateway.py", "capture_payment", "StripeGateway"),
    ("invoices", "src/billing/invoice_renderer.py", "render_invoice_pdf", "InvoiceRenderer"),
    ("search", "src/search/query_parser.py", "parse_query", "QueryParser"),
    ("auth", "src/auth/session_store.py", "refresh_token", "SessionStore"),
    ("notifications", "src/notify/email_sender.py", "send_digest", "EmailSender"),
    ("inventory", "src/stock/inventory_sync.py", "reserve_stock", "InventorySync"),
    ("shipping", "src/shipping/rate_calculator.py", "quote_rates", "RateCalculator"),
    ("catalog", "src/catalog/product_importer.py", "import_products", "ProductImporter"),
    ("reviews", "src/reviews/moderation_queue.py", "flag_review", "ModerationQueue"),
    ("analytics", "src/analytics/event_pipeline.py", "flush_events", "EventPipeline"),
    ("admin", "src/admin/role_editor.py", "grant_role", "RoleEditor"),
    ("uploads", "src/media/thumbnail_worker.py", "make_thumbnail", "ThumbnailWorker"),
    ("webhooks", "src/hooks/webhook_dispatcher.py", "retry_delivery", "WebhookDispatcher"),
    ("i18n", "src/i18n/locale_loader.py", "load_catalog", "LocaleLoader"),
    ("api gateway", "src/gateway/rate_limiter.py", "check_quota", "RateLimiter"),
]

# (detail as written in the session, the same detail as a person would ask about it)
DETAILS = [
    ("race condition when two tabs submit the same order", "two browser tabs placing one order twice at the same time"),
    ("N+1 query on the orders page", "too many database queries loading the orders list"),
    ("timezone offset in invoice dates", "wrong time zone on dates printed in invoices"),
    ("memory leak in the worker pool", "workers slowly using more and more RAM"),
    ("flaky test caused by unordered dict iteration", "test failing at random because of dictionary ordering"),
    ("deadlock between stock reservation and payment capture", "two transactions waiting on each other forever"),
    ("Unicode normalisation of product names", "accented characters in product titles not matching"),
    ("retry storm after the upstream timeout", "too many repeated requests once the remote service timed out"),
    ("cache stampede on the home page", "everyone recomputing the front page cache at once"),
    ("rounding error on tax totals", "cents off when adding up VAT"),
    ("CSV export truncating long descriptions", "spreadsheet download cutting text short"),
    ("pagination skipping the last item", "last entry missing when paging through results"),
    ("slow cold start of the lambda", "first request after idle taking seconds"),
    ("missing index on customer email", "lookup by email address doing a full table scan"),
    ("JWT expiry not enforced", "expired login tokens still accepted"),
    ("duplicate emails sent on retry", "customers receiving the same mail twice"),
    ("image upload failing over 10 MB", "large pictures rejected when uploading"),
    ("webhook signature check skipped in tests", "unverified callback signatures during testing"),
    ("locale fallback to English broken", "untranslated strings not falling back to the default language"),
    ("quota counter reset at the wrong hour", "usage limits resetting at an unexpected time of day"),
]

ACTIVITIES = [
    ("Fixed", "fix", "Added a regression test and guarded the code path."),
    ("Investigated", "investigate", "Wrote down findings; root cause still open."),
    ("Refactored the code around", "refactor", "Split the function and removed the shared global."),
    ("Added monitoring for", "monitor", "New metric and an alert at the 95th percentile."),
]

DECISIONS = [
    "Use a database advisory lock instead of an in-process mutex",
    "Keep money as integer cents end to end",
    "Prefer idempotency keys over client-side de-duplication",
    "Store all timestamps in UTC and convert only when rendering",
    "Run the slow integration suite nightly, not on every push",
    "Retry with exponential backoff and jitter, at most five times",
    "Put expensive renders behind a queue with a single worker",
    "Validate input at the API boundary with one schema per endpoint",
]

SYNONYMS = {
    "fixed": "resolved",
    "investigated": "looked into",
    "refactored": "restructured",
    "monitoring": "observability",
    "added": "put in",
}


def _case_variant(identifier: str, rng: random.Random) -> str:
    """How a person types an identifier they half remember."""
    parts = identifier.split("_")
    choice = rng.randrange(3)
    if choice == 0:
        return parts[0] + "".join(p.title() for p in parts[1:])  # apply_discount -> applyDiscount
    if choice == 1:
        return " ".join(parts)  # apply discount
    return "".join(p.title() for p in parts)  # ApplyDiscount


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(4)
    letters = "abcdefghijklmnopqrstuvwxyz"
    if kind == 0:
        return word[:i] + word[i + 1 :]  # deletion
    if kind == 1:
        return word[:i] + rng.choice(letters) + word[i:]  # insertion
    if kind == 2:
        return word[:i] + rng.choice(letters) + word[i + 1 :]  # substitution
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]  # transposition


def with_typos(question: str, rng: random.Random) -> str:
    """One or two character mistakes in each of two of the question's longer words."""
    words = question.split()
    long_ones = [i for i, w in enumerate(words) if len(re.sub(r"\W", "", w)) >= 5]
    for i in rng.sample(long_ones, min(2, len(long_ones))):
        for _ in range(rng.choice((1, 2))):
            words[i] = _typo(words[i], rng)
    return " ".join(words)


def build(folder: Path, questions_for: int = 240, seed: int = 7) -> list[dict[str, str]]:
    """Write one session per (component, detail) pair into ``folder/sessions``; return the questions.

    The first ``questions_for`` sessions get a question each (paraphrase and identifier in turn),
    and every question a typo twin.
    """
    rng = random.Random(seed)
    out = folder / "sessions"
    out.mkdir(parents=True, exist_ok=True)
    questions: list[dict[str, str]] = []
    pairs = [(c, d) for c in range(len(COMPONENTS)) for d in range(len(DETAILS))]
    rng.shuffle(pairs)
    for number, (c, d) in enumerate(pairs):
        component, path, function, cls = COMPONENTS[c]
        detail, asked = DETAILS[d]
        verb, short_verb, outcome = ACTIVITIES[rng.randrange(len(ACTIVITIES))]
        day = f"2026-{1 + number % 10:02d}-{1 + number % 28:02d}"
        name = f"{day}_{1000 + number}.md"
        text = (
            f"# Session {day} 10:00 · shop-api\n\n"
            f"- Session id: s{number:04d}\n- Started: {day} 10:00\n"
            f"- Branch: {short_verb}/{component.replace(' ', '-')}-{number}\n\n"
            f"## Saves\n\n### 11:30 save\n\n"
            f"{verb} the {detail} in {component} ({cls}.{function}). {outcome}\n\n"
            f"- Decision: {rng.choice(DECISIONS)}\n- State: {component} work continues\n\n"
            f"## Activity\n\n- Prompts (2):\n  1. look at the {detail}\n  2. run the {component} tests again\n"
            f"- Files changed (2):\n  - {path} (edited)\n  - tests/test_{function}.py (written)\n"
            f"- Commands (2 most recent):\n  - `pytest tests/test_{function}.py -q`\n  - `git diff --stat`\n"
        )
        (out / name).write_text(text, encoding="utf-8")
        if number >= questions_for:
            continue
        answer = f"sessions/{name}"
        if number % 2 == 0:
            how = SYNONYMS.get(verb.split()[0].lower(), verb.split()[0].lower())
            kind, question = "paraphrase", f"when we {how} the {asked} problem in {component}"
        else:
            where = cls if rng.random() < 0.5 else component
            start = rng.randrange(max(1, len(detail.split()) - 1))
            hint = " ".join(detail.split()[start : start + 2])  # a fragment of the words actually used
            kind, question = (
                "identifier",
                f"which session changed {_case_variant(function, rng)} in {where} about {hint}",
            )
        questions.append({"kind": kind, "question": question, "answer": answer})
        questions.append({"kind": "typo", "of": kind, "question": with_typos(question, rng), "answer": answer})
    return questions
