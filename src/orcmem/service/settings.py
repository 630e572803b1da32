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
    SETTING_POLICY_REVISION,
)
from orcmem.models.errors import ValidationError
from orcmem.models.types import (
    MemorySettings,
)
from orcmem.rules import memory as rules
from orcmem.service.core import ServiceCore


class Settings:
    """Reading and changing the profile's settings (`service.settings`); every change is audited."""

    def __init__(self, core: ServiceCore) -> None:
        """Settings over the service's store, clock and audit log."""
        self.core = core
        self.store = core.store

    def current(self) -> MemorySettings:
        """The stored memory settings; memory is off until turned on."""
        provider = self.store.settings.get(SETTING_EXTRACTION_PROVIDER) or EXTRACTION_PROVIDER_DEFAULT
        models = {
            key.removeprefix(SETTING_EXTRACTION_MODEL_PREFIX): value
            for key, value in self.store.settings.with_prefix(SETTING_EXTRACTION_MODEL_PREFIX).items()
        }
        return MemorySettings(enabled=self.core.is_enabled(), provider=provider, models=models)

    def person(self) -> str:
        """The person id memories written here carry (set by `orcmem team connect --as`, else found once and kept)."""
        stored = self.store.settings.get(SETTING_PERSON)
        if stored:
            return stored
        from orcmem.host.person import person_from_environment

        found = person_from_environment()
        self.store.settings.set(SETTING_PERSON, found)
        return found

    def known_person(self) -> str | None:
        """The stored person id without looking for one (hooks and pages must not run git): None until found."""
        return self.store.settings.get(SETTING_PERSON)

    def set_person(self, person: str) -> str:
        """Set the person id written on new memories."""
        cleaned = person.strip()
        if not cleaned or len(cleaned) > 200 or any(ch.isspace() for ch in cleaned):
            raise ValidationError("A person id is one word of at most 200 characters, such as an email address.")
        with self.store.db.transaction():
            self.store.settings.set(SETTING_PERSON, cleaned)
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
