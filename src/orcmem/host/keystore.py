"""The Anthropic API key: kept in the OS secret store (keyring), never in the database and never logged."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orcmem.models.errors import KeyStoreError

SERVICE = "orcmem"
ACCOUNT = "anthropic-api-key"
ENV_VAR = "ANTHROPIC_API_KEY"
STORAGE_ERROR = "Cannot access protected memory storage. Unlock your OS keychain or secret service and retry."


@dataclass(frozen=True, slots=True)
class KeyLookup:
    """The key (or None) and, when the secret store failed, what to tell the user."""

    api_key: str | None
    error: str | None = None
    source: str | None = None  # "keyring" or "environment"


def _keyring() -> Any:
    """The keyring module, imported only when a key is needed (it has no type information)."""
    import keyring

    return keyring


def secret_store() -> Any:
    """The OS secret store (the keyring module), for the other secrets orcmem keeps (the team database's password)."""
    return _keyring()


def load_api_key(environ: Mapping[str, str]) -> KeyLookup:
    """The key from the OS secret store, else from ANTHROPIC_API_KEY; never raises."""
    error = None
    try:
        stored = _keyring().get_password(SERVICE, ACCOUNT)
        if stored and stored.strip():
            return KeyLookup(stored.strip(), source="keyring")
    except ImportError:
        pass  # no keyring installed: the environment is the only source
    except Exception:  # a locked or missing secret service
        error = STORAGE_ERROR
    from_env = environ.get(ENV_VAR, "").strip()
    if from_env:
        return KeyLookup(from_env, source="environment")
    return KeyLookup(None, error)


def save_api_key(api_key: str) -> None:
    """Store the key (trimmed) in the OS secret store; an empty key removes it.

    Raises:
        KeyStoreError: the secret store is missing or locked (the message never contains the key).
    """
    try:
        store = _keyring()
        if api_key.strip():
            store.set_password(SERVICE, ACCOUNT, api_key.strip())
        else:
            with contextlib.suppress(store.errors.PasswordDeleteError):  # nothing stored: already removed
                store.delete_password(SERVICE, ACCOUNT)
    except Exception:
        raise KeyStoreError(STORAGE_ERROR) from None  # `from None`: the cause could echo the key
