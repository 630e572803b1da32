"""The settings repository: plain key/value pairs."""

from __future__ import annotations

from orcmem.store.connection import Repository


class SettingsRepository(Repository):
    """Key/value settings stored in the database (never secrets: the API key lives in the OS keyring)."""

    def get(self, key: str) -> str | None:
        """The stored value, or None when unset."""
        row = self.db.query_one("SELECT value FROM settings WHERE key = ?", (key,))
        return str(row[0]) if row else None

    def set(self, key: str, value: str) -> None:
        """Store a value."""
        with self.db.transaction():
            self.db.query(
                "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete(self, key: str) -> None:
        """Remove a key."""
        with self.db.transaction():
            self.db.query("DELETE FROM settings WHERE key = ?", (key,))

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """All settings whose key starts with `prefix`."""
        rows = self.db.query("SELECT key, value FROM settings WHERE substr(key, 1, length(?)) = ?", (prefix, prefix))
        return {str(k): str(v) for k, v in rows}
