"""The team database's password: kept in the OS secret store, never in orcmem's database or in a log."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from orcmem.host.keystore import secret_store
from orcmem.models.errors import TeamError

SERVICE = "orcmem"  # the same service name as the API key, another account
PASSWORD_ENV = "ORCMEM_TEAM_PASSWORD"


def split_password(url: str) -> tuple[str, str | None]:
    """The URL without its password, and the password (None when it had none).

    Raises:
        TeamError: the URL is not a postgresql:// or postgres:// URL.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("postgresql", "postgres"):
        raise TeamError("The team database is given as a postgresql://user@host/dbname URL.")
    if parts.password is None:
        return urlunsplit(parts), None
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host)), parts.password


def account(url: str) -> str:
    """The secret store's account name for a team database URL (without its password)."""
    return f"team-db:{url}"


def store_password(url: str, password: str) -> None:
    """Keep the password in the OS secret store.

    Raises:
        TeamError: the secret store cannot be used (then give it as ORCMEM_TEAM_PASSWORD, PGPASSWORD or ~/.pgpass).
    """
    try:
        secret_store().set_password(SERVICE, account(url), password)
    except Exception as exc:  # keyring raises many types, from many back ends
        raise TeamError(
            f"Cannot keep the password in the OS secret store ({type(exc).__name__}). Connect without it in the URL "
            f"and set {PASSWORD_ENV} or PGPASSWORD, or use ~/.pgpass."
        ) from None


def load_password(url: str) -> str | None:
    """ORCMEM_TEAM_PASSWORD, else the secret store's, else None (libpq then reads PGPASSWORD or ~/.pgpass)."""
    if os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV]
    try:
        stored = secret_store().get_password(SERVICE, account(url))
    except Exception:  # no secret store here: libpq's own ways remain
        return None
    return stored or None


def forget_password(url: str) -> None:
    """Remove the stored password, if any."""
    try:
        secret_store().delete_password(SERVICE, account(url))
    except Exception:  # nothing stored, or no secret store: nothing to remove
        return
