"""When two memories say the same thing: normalised words, and the facts a lesson hinges on."""

from __future__ import annotations

import pytest

from orcmem.text.duplicates import differing_facts, same_text_key
from orcmem.text.facts import facts


def test_the_same_words_fold_case_punctuation_spacing_and_width() -> None:
    assert same_text_key("Use the FORKS pool!", "vitest  threads crash.") == same_text_key(
        "use the forks pool", "Vitest threads crash"
    )
    assert same_text_key("Ｕse the forks pool", "x") == same_text_key("Use the forks pool", "x")  # NFKC
    assert same_text_key("Use the forks pool", "x") != same_text_key("Use the threads pool", "x")
    for one, other in (("retries to -1", "retries to 1"), ("C++", "C"), ("x != y", "x == y"), ("MY_VAR", "MY-VAR")):
        assert same_text_key(one, "") != same_text_key(other, ""), (one, other)  # signs and operators stay


def test_facts_are_the_identifiers_a_lesson_names() -> None:
    found = facts("Run `pytest -x` with --maxfail=2 on Python 3.12; see src/app/cache.py and APP_DATABASE_URL.")
    assert {"pytest -x", "maxfail", "3.12", "src/app/cache.py", "app_database_url"} <= found
    assert "run" not in found and "python" not in found


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Postgres listens on 5432 in dev", "Postgres listens on 5433 in dev"),
        ("Pass algorithms=['ES256'] to jwt.decode", "Pass algorithms=['RS256'] to jwt.decode"),
        ("Set vitest pool: 'forks' in CI", "Set vitest pool: 'threads' in CI"),
        ("Run `alembic upgrade heads` on deploy", "Run `alembic upgrade head` on deploy"),
        ("Pin node to 20.11", "Pin node to 22.1"),
        ("Always use yarn, never npm", "Always use npm, never yarn"),
        ("Run the tests before committing", "Do not run the tests before committing"),
        ("Use tabs for indentation in the Makefile", "Use spaces for indentation in the Makefile"),
        ("Deploys go to staging first, then production", "Deploys go to production first, then staging"),
        # identifiers of different shapes in the very same sentence (found by the load test: a number against a hash)
        ("Print with echo 123456789012", "Print with echo 3f2a9b1c0d4e"),
        ("Deploy build 20240101 to staging", "Deploy build rc-7f3e to staging"),
    ],
)
def test_texts_that_state_another_lesson_are_kept_apart(one: str, other: str) -> None:
    assert differing_facts(one, other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Use the forks pool: threads crash on CI", "Vitest threads crash on CI runners; forks works"),
        ("Run tests with `uv run pytest`", "`uv run pytest` is how the suite runs; plain pytest misses deps"),
        ("Postgres listens on 5432", "The dev database is Postgres on port 5432, started by docker compose"),
    ],
)
def test_reworded_lessons_with_the_same_facts_do_not_differ(one: str, other: str) -> None:
    assert not differing_facts(one, other)
