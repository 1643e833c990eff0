"""Files anonsql writes for the user (reports, deployment scripts): all or nothing.

A file is written under a temporary name in the same folder, flushed to disk, and renamed
over the target, so a full disk or any other error leaves the previous file (or no file) in
place, never a truncated or empty one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from anonsql.errors import InputError


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; an OSError (ENOSPC, EACCES, a missing
    folder) becomes a one-line :class:`InputError` and nothing is left behind."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"cannot write {str(target)!r}: it is a folder")
    data = text.encode("utf-8")
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    created = False
    try:
        # O_EXCL: never write through a name someone else created; mode 0o666 lets the
        # umask decide, as for any file the user's tools create
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        created = True
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            # on disk before the rename, so a crash cannot leave the new name empty
            os.fsync(f.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))  # keep a replaced file's mode
        os.replace(tmp, target)
        created = False
    except OSError as e:
        raise InputError(f"cannot write {str(target)!r}: {e.strerror or e}") from None
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    _sync_folder(target.parent)
    return target


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every system can open a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


__all__ = ["write_text_atomic"]
