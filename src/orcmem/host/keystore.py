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
# No keychain at all (Linux without a secret service, as on most servers and containers): nothing is wrong, and
# nothing is kept anywhere else: the key comes from the environment instead.
NO_KEYCHAIN = (
    "This machine has no system keychain (no secret service is running), so orcmem keeps no key here: set "
    f"{ENV_VAR} in the environment orcmem runs in, and the Anthropic API key provider uses it."
)


@dataclass(frozen=True, slots=True)
class KeyLookup:
    """The key (or None) and, when the secret store failed, what to tell the user."""

    api_key: str | None
    error: str | None = None
    source: str | None = None  # "keyring" or "environment"
    note: str | None = None  # no keychain on this machine: what that means (not an error)


def _keyring() -> Any:
    """The keyring module, imported only when a key is needed (it has no type information)."""
    import keyring

    return keyring


def no_keychain(exc: BaseException) -> bool:
    """Whether `exc` says this machine has no keychain at all (keyring found no back end), not that it failed."""
    try:
        return isinstance(exc, _keyring().errors.NoKeyringError)
    except Exception:  # no keyring module: the caller's own handling applies
        return False


def secret_store() -> Any:
    """The OS secret store (the keyring module), for the other secrets orcmem keeps (the team database's password)."""
    return _keyring()


def load_api_key(environ: Mapping[str, str]) -> KeyLookup:
    """The key from the OS secret store, else from ANTHROPIC_API_KEY; never raises."""
    error = note = None
    try:
        stored = _keyring().get_password(SERVICE, ACCOUNT)
        if stored and stored.strip():
            return KeyLookup(stored.strip(), source="keyring")
    except ImportError:
        pass  # no keyring installed: the environment is the only source
    except Exception as exc:  # no secret service at all (said calmly), or a locked one (an error to act on)
        if no_keychain(exc):
            note = NO_KEYCHAIN
        else:
            error = STORAGE_ERROR
    from_env = environ.get(ENV_VAR, "").strip()
    if from_env:
        return KeyLookup(from_env, source="environment", note=note)
    return KeyLookup(None, error, note=note)


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
    except Exception as exc:
        # `from None`: the cause could echo the key.
        raise KeyStoreError(NO_KEYCHAIN if no_keychain(exc) else STORAGE_ERROR) from None
