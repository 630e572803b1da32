"""The word query: built as the reference says, and no user text can ever break FTS5."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orcmem.models.types import Project
from orcmem.retrieve.query import fts_query, query_terms
from orcmem.service.memory_service import MemoryService
from tests.helpers import user_memory


def test_reference_example() -> None:
    assert fts_query("vitest --pool=forks") == '"vitest" OR "pool" OR "forks"*'


def test_lowercase_dedupe_short_words_and_edges() -> None:
    assert query_terms("A Vitest vitest ./src/app.ts/ -x x y2 __init__") == ["vitest", "src/app.ts", "y2", "__init__"]


def test_only_twelve_terms() -> None:
    assert len(query_terms(" ".join(f"word{i}" for i in range(30)))) == 12


def test_nothing_usable_gives_none() -> None:
    for text in ("", "   ", "a b c", '"*" () : -- __ ..', "NEAR("[:1]):
        assert fts_query(text) is None


def test_operators_become_plain_words() -> None:
    assert fts_query('foo AND bar NOT "baz" NEAR(x y)') == '"foo" OR "bar" OR "baz" OR "near"*'
    assert fts_query("AND OR NOT") == '"and" OR "or" OR "not"*'


def test_function_words_are_dropped_when_better_words_exist() -> None:
    assert query_terms("how do we fix the flaky login test") == ["fix", "flaky", "login", "test"]
    assert query_terms("what is it") == ["what", "is", "it"]
    assert query_terms("how do we", drop_function_words=False) == ["how", "do", "we"]


def test_twelve_terms_are_counted_after_dropping_function_words() -> None:
    text = " ".join(f"the word{i}" for i in range(20))
    assert query_terms(text) == [f"word{i}" for i in range(12)]


def test_search_matches_stems_and_prefixes(service: MemoryService, project: Project) -> None:
    memory = service.record(project, user_memory("Running migrations", "apply them with alembic upgrade")).memory
    assert [h.memory.id for h in service.search.hits(project, "migration")] == [memory.id]  # stemming
    assert [h.memory.id for h in service.search.hits(project, "alemb")] == [memory.id]  # last word is a prefix


def test_title_weighs_more_than_body(service: MemoryService, project: Project) -> None:
    in_body = service.record(project, user_memory("Something else", "the cache needs warming")).memory
    in_title = service.record(project, user_memory("Cache warming", "something else entirely")).memory
    assert [h.memory.id for h in service.search.hits(project, "cache")] == [in_title.id, in_body.id]


SPECIAL = st.sampled_from(['"', "'", "*", "NEAR", "near/3", ":", "(", ")", "^", "-", "+", "AND", "OR", "NOT", "{", "}"])
ANY_TEXT = st.one_of(st.text(max_size=200), st.lists(st.one_of(SPECIAL, st.text(max_size=8))).map(" ".join))


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(text=ANY_TEXT)
def test_any_text_searches_without_error(service: MemoryService, project: Project, text: str) -> None:
    if service.count(project) == 0:
        service.record(project, user_memory("Near the column", 'quotes " and * stars: (parens) AND or NOT'))
    hits = service.search.hits(project, text)
    assert isinstance(hits, list)
    query = fts_query(text)
    assert query is None or query.count('"') % 2 == 0
