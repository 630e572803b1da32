"""The page's labels come from the vocabularies: a new word without a label fails here, not on a user's page."""

from enum import StrEnum

import pytest

from orcmem.models.constants import EXTRACTION_PROVIDERS, MODEL_HARNESS
from orcmem.models.types import MemoryType, Provenance, Source, Status
from orcmem.models.vocabulary import JobState
from orcmem.web import views


@pytest.mark.parametrize(
    ("labels", "vocabulary"),
    [
        (views.TYPE_LABELS, MemoryType),
        (views.SOURCE_LABELS, Source),
        (views.PROVENANCE_LABELS, Provenance),
        (views.STATUS_LABELS, Status),
        (views.JOB_STATE_LABELS, JobState),
    ],
)
def test_every_word_has_exactly_one_label(labels: dict[str, str], vocabulary: type[StrEnum]) -> None:
    assert sorted(labels) == sorted(member.value for member in vocabulary)
    assert all(label.strip() for label in labels.values())


def test_the_provider_choices_are_the_providers() -> None:
    assert tuple(value for value, _label, _note in views.PROVIDER_OPTIONS) == EXTRACTION_PROVIDERS
    assert set(MODEL_HARNESS.values()) == set(views.MODEL_DEFAULT_LABELS)


def test_relative_times_use_whole_units() -> None:
    now = 10 * 365 * 86_400_000
    assert views.relative_time(now - 30_000, now) == "just now"
    assert views.relative_time(now - 5 * 60_000, now) == "5 min ago"
    assert views.relative_time(now - 3 * 3_600_000, now) == "3 h ago"
    assert views.relative_time(now - 86_400_000, now) == "yesterday"
    assert views.relative_time(now - 4 * 86_400_000, now) == "4 days ago"
