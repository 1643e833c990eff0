"""Format-preserving tokens: digits stay digits, letters stay letters (with their case), every
other character stays where it is, and the length is kept.

The digits of a value, read left to right, form one string over the radix-10 alphabet, and
its ASCII letters (lower-cased) one string over the radix-26 alphabet; each is encrypted with
FF3-1 (NIST SP 800-38G Rev. 1, the ``ff3`` package) under an AES-256 key and a 56-bit tweak
derived from the masking key, then put back at the same positions. FF3-1 takes strings of
``minLen`` to ``maxLen`` characters (radix^minLen >= 10^6: 6 digits or 5 letters; maxLen =
2 floor(96 / log2(radix)): 56 digits or 40 letters). Longer strings are cut into nearly equal
chunks, each under its own tweak. Shorter ones have a domain of at most 10^5 (digits) or
26^4 (letters) values, where the standard gives no cipher: there the token is a keyed
pseudo-random permutation of the whole domain (its values ranked by HMAC-SHA-256 under a
derived key), so it stays a bijection, as FF3-1 is. The same key gives the same token for
the same value everywhere, and the key holder can decrypt (FF3-1) or invert (the permutation).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import string
from functools import lru_cache

import numpy as np

from anonsql.masking.keys import MaskKey

_DIGITS = string.digits
_LETTERS = string.ascii_lowercase


class FormatPreservingTokens:
    """Tokens of one key (the ciphers and small-domain permutations are made once)."""

    def __init__(self, key: MaskKey) -> None:
        self._key = key
        self._aes = key.derive("anonsql ff3-1 aes-256 key", 32).hex()
        self._ciphers: dict[tuple[str, int], object] = {}
        self._perm_key = key.derive("anonsql small-domain permutation", 32)

    def token(self, value: str) -> str:
        digits = [c for c in value if c in _DIGITS]
        letters = [c.lower() for c in value if c.isascii() and c.isalpha()]
        d = iter(self._encrypt("".join(digits), _DIGITS))
        lt = iter(self._encrypt("".join(letters), _LETTERS))
        out = []
        for c in value:
            if c in _DIGITS:
                out.append(next(d))
            elif c.isascii() and c.isalpha():
                t = next(lt)
                out.append(t.upper() if c.isupper() else t)
            else:
                out.append(c)
        return "".join(out)

    # -- one alphabet ------------------------------------------------------------------------
    def _encrypt(self, text: str, alphabet: str) -> str:
        n = len(text)
        if n == 0:
            return ""
        radix = len(alphabet)
        min_len = math.ceil(math.log(1_000_000) / math.log(radix))
        max_len = 2 * math.floor(96 / math.log2(radix))
        if n < min_len:
            return self._permute(text, alphabet)
        chunks = math.ceil(n / max_len)
        size, extra = divmod(n, chunks)
        out, start = [], 0
        for i in range(chunks):
            end = start + size + (1 if i < extra else 0)
            out.append(self._cipher(alphabet, i).encrypt(text[start:end]))
            start = end
        return "".join(out)

    def _cipher(self, alphabet: str, chunk: int):
        got = self._ciphers.get((alphabet, chunk))
        if got is None:
            from ff3 import FF3Cipher

            tweak = self._key.derive(f"anonsql ff3-1 tweak {len(alphabet)} {chunk}", 7).hex()
            got = FF3Cipher.withCustomAlphabet(self._aes, tweak, alphabet)
            self._ciphers[(alphabet, chunk)] = got
        return got

    def _permute(self, text: str, alphabet: str) -> str:
        radix, n = len(alphabet), len(text)
        perm = _permutation(self._perm_key, radix, n)
        index = 0
        for c in text:
            index = index * radix + alphabet.index(c)
        image = int(perm[index])
        out = []
        for _ in range(n):
            image, r = divmod(image, radix)
            out.append(alphabet[r])
        return "".join(reversed(out))


@lru_cache(maxsize=32)
def _permutation(key: bytes, radix: int, n: int) -> np.ndarray:
    """A keyed permutation of ``0 .. radix**n - 1``: value ``i`` goes to the rank of
    HMAC(key, radix || n || i) among all of them (ties impossible in practice; broken by i)."""
    size = radix**n
    prefix = f"{radix}:{n}:".encode()
    h = hmac.new(key, prefix, hashlib.sha256)
    scores = np.empty(size, dtype=np.uint64)
    for i in range(size):
        c = h.copy()
        c.update(i.to_bytes(4, "big"))
        scores[i] = int.from_bytes(c.digest()[:8], "big")
    order = np.argsort(scores, kind="stable")  # order[r] = the value ranked r
    perm = np.empty(size, dtype=np.int64)
    perm[order] = np.arange(size, dtype=np.int64)  # value i -> its rank
    return perm


__all__ = ["FormatPreservingTokens"]
