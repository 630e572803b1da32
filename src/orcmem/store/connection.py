"""The one SQLite file of a profile, opened through apsw with WAL, a busy timeout and foreign keys."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

import apsw

from orcmem.models.constants import BUSY_TIMEOUT_MS, EMBEDDING_DIMENSIONS
from orcmem.models.data_shapes import Bindings, Row
from orcmem.models.errors import StoreError
from orcmem.store.migrations import migrate

VECTOR_DIMENSIONS = EMBEDDING_DIMENSIONS
_VECTOR_TABLE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_vec "
    f"USING vec0(memory_pk INTEGER PRIMARY KEY, embedding FLOAT[{VECTOR_DIMENSIONS}])"
)


def sqlite_vec_path() -> str | None:
    """The sqlite-vec extension's path, as `sqlite_vec.loadable_path()` gives it, found without importing the package
    (it imports sqlite3 and numpy: tens of milliseconds for every command that opens the database); None when the
    package is not installed."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.normpath(os.path.join(list(spec.submodule_search_locations)[0], "vec0"))


def _load_sqlite_vec(conn: apsw.Connection) -> str | None:
    """Load sqlite-vec; returns None when it loaded, else why it did not."""
    extension = sqlite_vec_path()
    if extension is None:
        return "the sqlite-vec package is not installed"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(extension)
    except (apsw.Error, OSError) as exc:
        return f"the sqlite-vec extension failed to load ({exc})"
    finally:
        with contextlib.suppress(apsw.Error):
            conn.enable_load_extension(False)
    return None


class Database:
    """An open profile database; writes go through `transaction()` so one writer holds the lock at a time."""

    def __init__(self, path: Path, *, vectors: bool = True) -> None:
        """Open (creating if needed) and migrate the database at `path`.

        Raises:
            StoreError: the file cannot be opened, is not a database, or is read-only and needs migrating.
        """
        self.path = path
        self._local = threading.local()
        self._lock = threading.RLock()
        is_new = not path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Created private before SQLite opens it: SQLite gives the WAL and SHM files the database's mode, and
            # creates them while switching to WAL, before anything here could narrow the mode afterwards.
            if is_new:
                with contextlib.suppress(FileExistsError):  # another process was quicker: its file is private too
                    os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self.conn = apsw.Connection(str(path))
        except (apsw.Error, OSError) as exc:
            raise StoreError(f"Cannot open the orcmem database at {path}: {exc}") from exc
        try:
            self.conn.setbusytimeout(BUSY_TIMEOUT_MS)
            self.conn.execute("PRAGMA foreign_keys = ON")
            mode = self._switch_to_wal()
            if str(mode).lower() != "wal" and not self.conn.readonly("main"):
                raise StoreError(f"Cannot switch the orcmem database at {path} to WAL mode (got {mode}).")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            # What is deleted or overwritten is zeroed on its page, so forget and edit leave no copy in free space.
            self.conn.execute("PRAGMA secure_delete = ON")
            migrate(self.conn)
        except apsw.Error as exc:
            errno_seen = self.conn.system_errno
            self.conn.close()
            raise StoreError(_explain(path, exc, errno_seen)) from exc
        except StoreError:
            self.conn.close()
            raise
        _make_private(path)
        self.vector_error: str | None = "vectors were not requested"
        if vectors:
            self.vector_error = _load_sqlite_vec(self.conn)
            if self.vector_error is None:
                try:
                    self.conn.execute(_VECTOR_TABLE)
                except apsw.Error as exc:
                    self.vector_error = f"the vector table could not be created ({exc})"

    def _switch_to_wal(self) -> str:
        """Switch a new file to WAL. SQLite answers "locked" at once, without waiting, while another process
        migrates the same new file: try again until the busy timeout has passed."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return str(self.conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0])
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @property
    def lock(self) -> threading.RLock:
        """The connection's lock, held while a statement or a transaction runs. A repository that has a lock of its
        own takes this one first: one order for every thread, so two can never wait on each other."""
        return self._lock

    def held_here(self) -> bool:
        """Whether this thread holds the connection's lock (inside a transaction, or `with db.lock`): work handed to
        another thread that needs the connection would then wait for this one."""
        return bool(self._lock._is_owned())  # type: ignore[attr-defined]  # RLock's own check, as Condition uses

    @property
    def has_vectors(self) -> bool:
        """Whether sqlite-vec loaded and `memory_vec` exists."""
        return self.vector_error is None

    def query(self, sql: str, params: Bindings = ()) -> list[Row]:
        """Run a statement and return all rows."""
        with self._lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except (apsw.BusyError, *_FILE_ERRORS) as exc:
                raise self._one_line(exc) from exc

    def query_many(self, sql: str, rows: Iterable[Bindings]) -> None:
        """Run one statement for each row of parameters (one prepared statement: a bulk insert)."""
        with self._lock:
            try:
                self.conn.executemany(sql, rows)
            except (apsw.BusyError, *_FILE_ERRORS) as exc:
                raise self._one_line(exc) from exc

    def _one_line(self, exc: apsw.Error) -> StoreError:
        """A busy, damaged, full or read-only database (found mid-command) as one line."""
        if isinstance(exc, apsw.BusyError):
            return StoreError(f"The orcmem database stayed busy for over {BUSY_TIMEOUT_MS} ms.")
        return StoreError(_explain(self.path, exc, self.conn.system_errno))

    def query_one(self, sql: str, params: Bindings = ()) -> Row | None:
        """Run a statement and return its first row, or None."""
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def transaction(self) -> _Transaction:
        """A write transaction; nested calls join the outer one.

        BEGIN IMMEDIATE takes the write lock up front, so the busy timeout applies and two processes never
        deadlock upgrading a read lock.
        """
        return _Transaction(self)

    def _begin(self) -> None:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise StoreError(
                f"The orcmem database stayed locked by another process for over {BUSY_TIMEOUT_MS} ms."
            ) from exc
        except _FILE_ERRORS as exc:
            raise StoreError(_explain(self.path, exc, self.conn.system_errno)) from exc

    def _commit(self) -> None:
        try:
            self.conn.execute("COMMIT")
        except _FILE_ERRORS as exc:  # e.g. the disk filled up while writing the WAL
            self._rollback()
            raise StoreError(_explain(self.path, exc, self.conn.system_errno)) from exc

    def erase_old_pages(self) -> bool:
        """Copy the WAL into the file and empty it, so no older page version (a forgotten text) stays in the WAL.

        Best effort: a reader in another process can hold part of the WAL back; False when it did.
        """
        with self._lock:
            try:
                busy, _log, _done = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
            except apsw.Error:
                return False
        return not busy

    def _rollback(self) -> None:
        # SQLite may already have rolled back by itself (a full disk, an I/O error): then there is nothing to undo,
        # and a second ROLLBACK would only hide the error that got us here.
        if self.conn.in_transaction:
            with contextlib.suppress(apsw.Error):
                self.conn.execute("ROLLBACK")

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self.conn.close()


# What the file or the disk can do to a statement; other apsw errors are bugs and keep their traceback.
_FILE_ERRORS = (
    apsw.CorruptError,
    apsw.NotADBError,
    apsw.FullError,
    apsw.ReadOnlyError,
    apsw.CantOpenError,
    apsw.PermissionsError,
    apsw.IOError,
)


def open_read_only(path: Path) -> apsw.Connection:
    """Another program's SQLite database (claude-mem's, OpenCode's), opened read-only: never created or written.

    Raises:
        apsw.Error: it cannot be opened.
    """
    return apsw.Connection(f"{path.resolve().as_uri()}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def _make_private(path: Path) -> None:
    """Memories and settings are private: no access for group or others to the profile folder, the database, or
    its WAL and SHM files (0700 and 0600 as created).

    Also narrows what an older orcmem (or a wide umask) left open; only on what this user owns, and the owner's
    own bits are kept (a database made read-only stays read-only).
    """
    uid = os.getuid() if hasattr(os, "getuid") else None
    for item in (path.parent, path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(OSError):
            info = item.stat()
            if info.st_mode & 0o077 and (uid is None or info.st_uid == uid):
                os.chmod(item, info.st_mode & 0o700)


def _explain(path: Path, exc: apsw.Error, system_errno: int = 0) -> str:
    if isinstance(exc, apsw.NotADBError | apsw.CorruptError):
        return (
            f"The file {path} is not a readable orcmem database ({exc}). It was left untouched; "
            "move it aside to start a new one."
        )
    # A full disk shows as SQLITE_FULL when the WAL cannot grow, but as a plain I/O error (ENOSPC underneath)
    # when the shared-memory file cannot be sized on open.
    if isinstance(exc, apsw.FullError) or system_errno == errno.ENOSPC:
        return f"The disk holding {path} is full. Free some space and try again."
    if system_errno == errno.EFBIG:
        return f"The orcmem database at {path} may not grow past this process's file size limit (ulimit -f)."
    if isinstance(exc, apsw.ReadOnlyError | apsw.CantOpenError | apsw.PermissionsError):
        return f"The orcmem database at {path} cannot be written ({exc}). Check the file's permissions."
    if isinstance(exc, apsw.BusyError):
        return f"The orcmem database at {path} stayed locked by another process. Try again."
    return f"The orcmem database at {path} failed: {exc}"


class _Transaction:
    """`Database.transaction()`: a class, not a generator, as every write enters one or more of them."""

    __slots__ = ("db", "depth")

    def __init__(self, db: Database) -> None:
        """Join or begin a transaction on `db` when entered."""
        self.db = db
        self.depth = 0

    def __enter__(self) -> None:
        """Take the lock; begin at the outermost level."""
        db = self.db
        db._lock.acquire()
        try:
            self.depth = getattr(db._local, "depth", 0)
            if self.depth == 0:
                db._begin()
        except BaseException:
            db._lock.release()
            raise
        db._local.depth = self.depth + 1

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> None:
        """Commit at the outermost level (roll back on an error), and release the lock."""
        db = self.db
        try:
            db._local.depth = self.depth
            if self.depth == 0:
                if kind is None:
                    db._commit()
                else:
                    db._rollback()
        finally:
            db._lock.release()


class Repository:
    """The queries of one concern (a table and its neighbours) over one open database."""

    def __init__(self, db: Database) -> None:
        """Wrap an open database."""
        self.db = db
