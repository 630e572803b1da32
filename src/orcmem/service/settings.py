"""Memory's settings: on and off, the extraction provider and model, idle minutes, the embedding model."""

from __future__ import annotations

import math

from orcmem.models.constants import (
    EMBEDDING_MODEL_DEFAULT,
    EXTRACTION_PROVIDER_DEFAULT,
    EXTRACTION_PROVIDERS,
    IDLE_MINUTES_DEFAULT,
    MODEL_HARNESS,
    SETTING_EMBEDDING_MODEL,
    SETTING_EXTRACTION_MODEL_PREFIX,
    SETTING_EXTRACTION_PROVIDER,
    SETTING_IDLE_MINUTES,
    SETTING_MEMORY_ENABLED,
    SETTING_PERSON,
    SETTING_PERSON_FIXED,
    SETTING_PERSON_IDS,
    SETTING_POLICY_REVISION,
    SETTING_TEAM_URL,
)
from orcmem.models.errors import ValidationError
from orcmem.models.types import Memory, MemorySettings, Source
from orcmem.rules import memory as rules
from orcmem.rules.permissions import require_may_change
from orcmem.service.core import ServiceCore


class Settings:
    """Reading and changing the profile's settings (`service.settings`); every change is audited."""

    def __init__(self, core: ServiceCore) -> None:
        """Settings over the service's store, clock and audit log."""
        self.core = core
        self.store = core.store
        self._found: dict[str | None, tuple[str, str] | None] = {}  # git's answer per project, asked once

    def current(self) -> MemorySettings:
        """The stored memory settings; memory is off until turned on."""
        provider = self.store.settings.get(SETTING_EXTRACTION_PROVIDER) or EXTRACTION_PROVIDER_DEFAULT
        models = {
            key.removeprefix(SETTING_EXTRACTION_MODEL_PREFIX): value
            for key, value in self.store.settings.with_prefix(SETTING_EXTRACTION_MODEL_PREFIX).items()
        }
        return MemorySettings(enabled=self.core.is_enabled(), provider=provider, models=models)

    def person(self, root: str | None = None) -> str:
        """The person id memories written in the project at `root` carry (see `person_and_why`)."""
        return self.person_and_why(root)[0]

    def person_and_why(self, root: str | None = None) -> tuple[str, str]:
        """The person id for the project at `root` (None: the current folder), and why it is that one.

        A team binding fixes it (`orcmem team connect`, `--as`: the team's ids must not move); otherwise it follows
        ORCMEM_PERSON, else git's `user.email` for the project, else the id found when orcmem first ran here
        (user@host). Every id used is remembered as this person's (`own_ids`), so what they wrote as one stays theirs.
        """
        stored = self.store.settings.get(SETTING_PERSON)
        if stored and self._person_fixed():
            return stored, "fixed by the team binding (orcmem team connect)"
        if root not in self._found:
            from orcmem.host.person import explicit_person

            self._found[root] = explicit_person(root)
        found = self._found[root]
        if found is None:
            if stored:
                return stored, "the id found when orcmem first ran here: git has no user.email for this project"
            from orcmem.host.person import machine_person

            found = (machine_person(), "user@host: git has no user.email for this project")
        self._remember(found[0])
        return found

    def _person_fixed(self) -> bool:
        settings = self.store.settings
        return settings.get(SETTING_PERSON_FIXED) == "true" or bool(settings.get(SETTING_TEAM_URL))

    def _remember(self, person: str) -> None:
        """Keep `person` among this profile's ids (and as its id, the first time one is found)."""
        if person in self.own_ids():
            return
        with self.store.db.transaction():
            if not self.store.settings.get(SETTING_PERSON):
                self.store.settings.set(SETTING_PERSON, person)
            known = self.store.settings.get(SETTING_PERSON_IDS) or ""
            self.store.settings.set(SETTING_PERSON_IDS, "\n".join([*known.splitlines(), person]))

    def require_owner(self, memory: Memory, actor: Source, refusal: str) -> None:
        """Raise OwnershipError unless `actor` may change `memory` (only you overrule you, across a team too)."""
        own = self.own_ids() or {self.person(memory.origin_root)}
        require_may_change(memory.source, actor, refusal, author=memory.author, own=own)

    def own_ids(self) -> frozenset[str]:
        """Every id this profile's person has written as (the first one found, a team binding's, git's emails):
        a memory by any of them is their own, to change and to be shown as "from you"; never runs git."""
        stored = self.store.settings.get(SETTING_PERSON)
        known = (self.store.settings.get(SETTING_PERSON_IDS) or "").splitlines()
        return frozenset(person for person in (stored, *known) if person)

    def known_person(self) -> str | None:
        """The stored person id without looking for one (hooks and pages must not run git): None until found."""
        return self.store.settings.get(SETTING_PERSON)

    def set_person(self, person: str) -> str:
        """Fix the person id written on new memories (`orcmem team connect --as`): git's email no longer moves it."""
        cleaned = person.strip()
        if not cleaned or len(cleaned) > 200 or any(ch.isspace() for ch in cleaned):
            raise ValidationError("A person id is one word of at most 200 characters, such as an email address.")
        with self.store.db.transaction():
            self.store.settings.set(SETTING_PERSON, cleaned)
            self.store.settings.set(SETTING_PERSON_FIXED, "true")
            self._remember(cleaned)
            self.core.audit("user", "settings.person", metadata={"person": cleaned})
        return cleaned

    def policy_revision(self) -> int:
        """A counter raised whenever memory or extraction is turned off; jobs queued before it are skipped."""
        return int(self.store.settings.get(SETTING_POLICY_REVISION) or 0)

    def _bump_policy(self) -> None:
        self.store.settings.set(SETTING_POLICY_REVISION, str(self.policy_revision() + 1))

    def set_enabled(self, enabled: bool) -> MemorySettings:
        """Turn memory on or off for every project."""
        with self.store.db.transaction():
            if not enabled:
                self._bump_policy()
                self.store.jobs.skip_waiting("memory was turned off", self.core.clock())
            self.store.settings.set(SETTING_MEMORY_ENABLED, "true" if enabled else "false")
            self.core.audit("user", "settings.memory", metadata={"enabled": enabled})
        return self.current()

    def enable_unless_chosen(self) -> bool:
        """Turn memory on unless this profile was already turned on or off (a first install's default); is it on."""
        with self.store.db.transaction():
            if self.store.settings.get(SETTING_MEMORY_ENABLED) is None:
                self.set_enabled(True)
        return self.core.is_enabled()

    def set_provider(self, provider: str, model: str | None = None) -> MemorySettings:
        """Choose the extraction provider (and optionally its model); `off` stops extraction only."""
        name = str(provider).strip().lower()
        if name not in EXTRACTION_PROVIDERS:
            raise ValidationError(f"Unknown provider {provider!r}; choose one of: {', '.join(EXTRACTION_PROVIDERS)}.")
        with self.store.db.transaction():
            if name == "off":
                self._bump_policy()
                self.store.jobs.skip_waiting("extraction was turned off", self.core.clock())
            self.store.settings.set(SETTING_EXTRACTION_PROVIDER, name)
            if model is not None:
                self._set_model(name, model)
            self.core.audit("user", "settings.provider", metadata={"provider": name, "model": model and model.strip()})
        return self.current()

    def _set_model(self, provider: str, model: str) -> None:
        harness = MODEL_HARNESS.get(provider)
        if harness is None:
            raise ValidationError("Choose a provider (claude, codex or apikey) before choosing a model.")
        key = SETTING_EXTRACTION_MODEL_PREFIX + harness
        if model.strip():
            self.store.settings.set(key, rules.check_model_name(model))
        else:
            self.store.settings.delete(key)

    def idle_minutes(self) -> float:
        """How long a session left open waits before it is distilled (the default when unset or unreadable)."""
        raw = self.store.settings.get(SETTING_IDLE_MINUTES)
        try:
            minutes = float(raw) if raw is not None else IDLE_MINUTES_DEFAULT
        except ValueError:
            return IDLE_MINUTES_DEFAULT
        # A value stored by an older orcmem ("nan" meant "at once") is not one `set_idle_minutes` accepts.
        return minutes if math.isfinite(minutes) and minutes >= 0 else IDLE_MINUTES_DEFAULT

    def set_idle_minutes(self, minutes: float) -> float:
        """How long a session left open waits before it is distilled (0 to a day, a finite number), audited.

        Raises:
            ValidationError: not a finite number from 0 to 1,440.
        """
        value = rules.check_idle_minutes(minutes)
        with self.store.db.transaction():
            self.store.settings.set(SETTING_IDLE_MINUTES, f"{value:g}")
            self.core.audit("user", "settings.idle", metadata={"minutes": value})
        return value

    def embedding_model(self) -> str:
        """The id of the model whose vectors search uses."""
        return self.store.settings.get(SETTING_EMBEDDING_MODEL) or EMBEDDING_MODEL_DEFAULT

    def set_embedding_model(self, model_id: str) -> None:
        """Make `model_id` the model search uses; memories with vectors of another model get embedded again."""
        with self.store.db.transaction():
            self.store.settings.set(SETTING_EMBEDDING_MODEL, model_id)
            self.core.audit("user", "settings.embedding_model", metadata={"model": model_id})

    def vector_status(self) -> dict[str, object]:
        """How many vectors the active model has, and how many active memories still need one."""
        model = self.embedding_model()
        return {
            "model": model,
            "vectors_available": self.store.vectors.available,
            "vector_error": self.store.db.vector_error,
            "vectors": self.store.vectors.count(model) if self.store.vectors.available else 0,
            "missing": self.store.vectors.count_missing(model),
        }
