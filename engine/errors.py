"""Every error the engine raises on purpose.

The CLI maps each class to one exit code (see README): a user's mistake is an InputError (2), damage on disk
is a CorruptionError (3), a held lock is StoreBusy (75). Anything else escaping the engine is a bug.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class: every deliberate engine error carries a message fit to show a user."""

    exit_code = 1


class InputError(EngineError):
    """Bad input from the user: nothing was changed. `where` names the file, line or offset."""

    exit_code = 2

    def __init__(self, message: str, where: str | None = None):
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class NoStore(InputError):
    """A reader asked for a store that was never created: no directory, or one without CURRENT that holds
    nothing a store would have (a lost CURRENT beside data is a CorruptionError instead)."""

    def __init__(self, path: str):
        self.path = str(path)
        super().__init__(f"no memctl store at {self.path} (create one with memctl ingest)")


class CorruptionError(EngineError):
    """Bytes on disk failed a check: a checksum, a magic number, a length or a reference."""

    exit_code = 3

    def __init__(self, path: str, offset: int | None, reason: str):
        self.path = str(path)
        self.offset = offset
        self.reason = reason
        where = self.path if offset is None else f"{self.path} at offset {offset}"
        super().__init__(f"corruption in {where}: {reason}")


class StoreDamaged(CorruptionError):
    """A writer refused a store whose DAMAGE marker records corruption found earlier (engine/damage.py): only
    `memctl repair` writes it until then."""


class UnsupportedVersion(CorruptionError):
    """A file written by a newer (or unknown, or retired) format version: refused, never misread. `advice` says
    what to do instead of the default (upgrade memctl for a newer file, re-create the store for an older one)."""

    def __init__(self, path: str, found: int, supported: int, advice: str | None = None):
        self.found = found
        self.supported = supported
        if advice is None:
            advice = ("upgrade memctl to open this store" if found > supported else
                      "this store was written by an older memctl: re-create it (ingest the raw files again)")
        super().__init__(path, None,
                         f"format version {found} is not supported (this memctl reads version {supported}); {advice}")


class StoreBusy(EngineError):
    """Another process holds the writer lock past the wait time."""

    exit_code = 75

    def __init__(self, path: str, holder: str):
        self.path = str(path)
        self.holder = holder
        super().__init__(
            f"store busy: held by {holder}; retry later or pass --wait SECONDS to wait for it"
        )


class StoreClosed(EngineError):
    """The store was closed, or poisoned by a failed fsync, and must be reopened."""
