"""The masking key: where it comes from, and the sub-keys each keyed method derives from it.

The key is read from the environment (``ANONSQL_KEY``) or from a file (``--key-file``) at the
moment a keyed mask is computed, and is held only in this process. It is never written into a
database, provenance, a report, a deployment script or a message: each method gets a sub-key
derived by HMAC-SHA-256 under its own label (NIST SP 800-108's KDF in counter mode, one
block), so the key's own bytes are used nowhere else and no derived value reveals them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from pathlib import Path

from anonsql.errors import InputError

#: environment variable that holds the masking key
KEY_ENV = "ANONSQL_KEY"
#: a shorter key would let pseudonyms be recomputed by guessing the key
MIN_KEY_BYTES = 16


@dataclass(frozen=True)
class MaskKey:
    """A masking key. ``repr`` and ``str`` never show its bytes, so a key that reaches a log
    line or a traceback by mistake shows nothing."""

    secret: bytes = field(repr=False)

    def __repr__(self) -> str:
        return "MaskKey(<hidden>)"

    __str__ = __repr__

    def derive(self, label: str, length: int = 32) -> bytes:
        """A sub-key for ``label`` (SP 800-108 counter mode with HMAC-SHA-256: one or two
        blocks ``HMAC(key, i || label || 0x00 || L)``)."""
        out = b""
        i = 1
        while len(out) < length:
            msg = i.to_bytes(4, "big") + label.encode() + b"\x00" + (length * 8).to_bytes(4, "big")
            out += hmac.new(self.secret, msg, hashlib.sha256).digest()
            i += 1
        return out[:length]


def load_key(key_file: str | None = None, *, needed_for: str = "") -> MaskKey:
    """The key from ``key_file`` (its bytes, less one trailing newline) or else from
    ``ANONSQL_KEY``; a clear error when neither gives one. The error never shows the key."""
    why = f" ({needed_for})" if needed_for else ""
    if key_file is not None:
        path = Path(key_file)
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise InputError(f"cannot read the key file {key_file!r}: {e.strerror}") from None
        if raw.endswith(b"\n"):
            raw = raw[:-1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
        where = f"the key file {key_file!r}"
    else:
        value = os.environ.get(KEY_ENV)
        if not value:
            raise InputError(
                f"a masking key is needed{why}: set {KEY_ENV} in the environment or give "
                f"--key-file (key_file in specs and the API); the key is never stored"
            )
        raw = value.encode()
        where = KEY_ENV
    if len(raw) < MIN_KEY_BYTES:
        raise InputError(
            f"{where} holds {len(raw)} bytes; a masking key needs at least {MIN_KEY_BYTES} "
            f"(e.g. 32 random bytes: python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    return MaskKey(raw)


__all__ = ["KEY_ENV", "MIN_KEY_BYTES", "MaskKey", "load_key"]
