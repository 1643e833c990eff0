"""Masking methods for direct identifiers: what each one releases, as SQL or as a keyed
token.

=================  ===========================================================  ==========
method             released value                                               key
=================  ===========================================================  ==========
``drop``           the column is left out of the output                         no
``null``           NULL                                                         no
``partial:F:L``    the first F and last L characters, ``*`` for each other one  no
                   (all ``*`` when the value has at most F + L characters)
``email-domain``   the part after the last ``@`` (NULL for a value without one) no
``pseudonym``      HMAC-SHA-256 of the value's text, first 20 hex digits        yes
``token``          format-preserving encryption, FF3-1 (:mod:`.fpe`)            yes
``fake[:KIND]``    a realistic fake value (faker), chosen by the keyed hash     yes
=================  ===========================================================  ==========

The key-less methods are SQL expressions over the source column: a view computes them at
every read. A keyed method needs the key, which never enters a database: its tokens are
computed in this process for the column's distinct values at run time and stored in
``anonsql_masks`` under the output's name, beside the value's text. The view joins each row
to that table by its value (one hash join per keyed column): a value added after the run has
no token and reads as NULL, never raw. The side table holds raw values, as the source does:
it is protected as ``anonsql_recodings`` is (PostgreSQL: no privilege for PUBLIC, the view
reads it with its owner's rights). A deployment script (``anonsql transpile``) carries the
SHA-256 digest of each value instead, and its view joins by the digest the target engine
computes, so the script holds no raw identifier.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from anonsql.errors import InputError
from anonsql.masking.keys import MaskKey

if TYPE_CHECKING:
    from anonsql.masking.fpe import FormatPreservingTokens

#: the methods and what their arguments are
METHODS = ("drop", "null", "partial", "email-domain", "pseudonym", "token", "fake")
KEYED = ("pseudonym", "token", "fake")
#: hex digits of a pseudonym: 80 bits, so a collision among 10^9 values has odds ~4e-7
PSEUDONYM_HEX = 20
#: the faker providers ``fake:KIND`` takes (those that need no argument and make one value)
FAKE_KINDS = (
    "name",
    "first_name",
    "last_name",
    "email",
    "phone_number",
    "address",
    "street_address",
    "city",
    "postcode",
    "company",
    "user_name",
    "ipv4",
    "ipv6",
    "url",
    "iban",
    "credit_card_number",
    "ssn",
    "date_of_birth",
)
#: a detected column kind (:mod:`anonsql.masking.detect`) -> the fake kind of ``fake``
FAKE_FOR_KIND = {
    "email": "email",
    "phone": "phone_number",
    "person-name": "name",
    "ip-address": "ipv4",
    "url": "url",
    "iban": "iban",
    "card-number": "credit_card_number",
    "postal-code": "postcode",
    "date": "date_of_birth",
}
#: the masking character of ``partial``
MASK_CHAR = "*"


@dataclass(frozen=True)
class Mask:
    """One column's masking method, parsed."""

    method: str
    first: int = 0  # partial
    last: int = 0  # partial
    kind: str | None = None  # fake

    @property
    def keyed(self) -> bool:
        return self.method in KEYED

    def text(self) -> str:
        if self.method == "partial":
            return f"partial:{self.first}:{self.last}"
        if self.method == "fake" and self.kind:
            return f"fake:{self.kind}"
        return self.method


def parse_mask(column: str, text: str) -> Mask:
    """``METHOD`` or ``METHOD:ARGS`` as a :class:`Mask`, or a one-line error naming the
    column and the methods."""
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"mask of {column!r}: give a method ({', '.join(METHODS)})")
    parts = [p.strip() for p in text.strip().split(":")]
    method = parts[0].lower().replace("_", "-")
    args = parts[1:]
    if method not in METHODS:
        raise InputError(
            f"mask of {column!r}: unknown method {text!r}; the methods are drop, null, "
            f"partial:FIRST:LAST, email-domain, pseudonym, token, fake[:KIND]"
        )
    if method == "partial":
        if len(args) != 2 or not all(a.isdigit() for a in args):
            raise InputError(
                f"mask of {column!r}: partial takes two counts, partial:FIRST:LAST "
                f"(characters kept at the start and at the end), not {text!r}"
            )
        first, last = int(args[0]), int(args[1])
        if first > 1000 or last > 1000:
            raise InputError(f"mask of {column!r}: partial keeps at most 1000 characters a side")
        return Mask("partial", first=first, last=last)
    if method == "fake":
        if len(args) > 1:
            raise InputError(f"mask of {column!r}: fake takes at most one kind, not {text!r}")
        kind = args[0].lower().replace("-", "_") if args else None
        if kind is not None and kind not in FAKE_KINDS:
            raise InputError(
                f"mask of {column!r}: unknown fake kind {args[0]!r}; the kinds are "
                f"{', '.join(FAKE_KINDS)}"
            )
        return Mask("fake", kind=kind)
    if args:
        raise InputError(f"mask of {column!r}: {method} takes no argument, not {text!r}")
    return Mask(method)


def parse_masks(values: dict[str, str] | None) -> dict[str, Mask]:
    return {c: parse_mask(c, m) for c, m in (values or {}).items()}


def masks_text(value: object, where: str) -> dict[str, str]:
    """The option's value (``"a=pseudonym,b=partial:0:4"`` or a mapping) as column ->
    method text, each method checked."""
    if isinstance(value, str):
        out: dict[str, str] = {}
        for item in (p.strip() for p in value.split(",")):
            if not item:
                continue
            col, eq, method = item.partition("=")
            if not eq or not col.strip() or not method.strip():
                raise InputError(f"{where}: write masks as COLUMN=METHOD, not {item!r}")
            if col.strip() in out:
                raise InputError(f"{where}: column {col.strip()!r} masked twice")
            out[col.strip()] = method.strip()
        value = out
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InputError(f"{where}: masks are a table of COLUMN = METHOD, not {value!r}")
    for col, method in value.items():
        parse_mask(col, method)
    return dict(value)


# -- SQL: the key-less methods, and the digest keyed tokens are looked up by ------------------
def _text(col: exp.Expression) -> exp.Expression:
    return exp.cast(col, "VARCHAR")


def sql_mask(mask: Mask, col: exp.Expression) -> exp.Expression:
    """The released value of a key-less method, computed from the source column ``col``."""
    if mask.method == "null":
        return exp.cast(exp.null(), "VARCHAR")
    v = _text(col)
    length = exp.Length(this=v.copy())
    if mask.method == "partial":
        keep = mask.first + mask.last
        star = exp.Literal.string(MASK_CHAR)
        hidden = exp.Repeat(times=exp.Sub(this=length.copy(), expression=exp.convert(keep)))
        hidden.set("this", star.copy())
        parts: list[exp.Expression] = []
        if mask.first:
            parts.append(exp.Left(this=v.copy(), expression=exp.convert(mask.first)))
        parts.append(hidden)
        if mask.last:
            parts.append(exp.Right(this=v.copy(), expression=exp.convert(mask.last)))
        kept = parts[0]
        for p in parts[1:]:
            kept = exp.DPipe(this=kept, expression=p, safe=True)
        everything = exp.Repeat(this=star.copy(), times=length.copy())
        return exp.Case(
            ifs=[exp.If(this=exp.GT(this=length.copy(), expression=exp.convert(keep)), true=kept)],
            default=everything,
        )
    if mask.method == "email-domain":
        # the part after the last '@': reverse, cut at the first '@', reverse back
        rev = exp.func("REVERSE", v.copy())
        at = exp.StrPosition(this=rev.copy(), substr=exp.Literal.string("@"))
        domain = exp.func(
            "REVERSE",
            exp.Substring(
                this=rev, start=exp.convert(1), length=exp.Sub(this=at, expression=exp.convert(1))
            ),
        )
        return exp.Case(
            ifs=[
                exp.If(
                    this=exp.GT(
                        this=exp.StrPosition(this=v.copy(), substr=exp.Literal.string("@")),
                        expression=exp.convert(0),
                    ),
                    true=domain,
                )
            ],
            default=exp.cast(exp.null(), "VARCHAR"),
        )
    raise AssertionError(mask.method)


def sql_digest(col: exp.Expression, dialect: str = "duckdb") -> exp.Expression:
    """SHA-256 of the value's UTF-8 text, in lower-case hex, as every engine computes it
    (DuckDB's sha256, Spark's sha2, PostgreSQL's sha256 over the text's bytes): what keyed
    tokens are looked up by."""
    if dialect in ("postgres", "redshift"):
        # PostgreSQL's sha256 takes bytea: the text's UTF-8 bytes, then hex
        raw = exp.Anonymous(this="CONVERT_TO", expressions=[_text(col), exp.Literal.string("UTF8")])
        return exp.Anonymous(
            this="ENCODE",
            expressions=[
                exp.Anonymous(this="SHA256", expressions=[raw]),
                exp.Literal.string("hex"),
            ],
        )
    return exp.SHA2(this=_text(col), length=exp.Literal.number(256))


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


# -- keyed tokens, computed in this process ---------------------------------------------------
class Tokenizer:
    """The keyed methods of one key. Tokens depend on the key and the value's text only, so
    the same key gives the same token in every table, run and engine."""

    def __init__(self, key: MaskKey, fake_locale: str = "en_US") -> None:
        self._pseudonym_key = key.derive("anonsql pseudonym hmac-sha-256")
        self._fake_key = key.derive("anonsql fake seed")
        self._key = key
        self._fpe: FormatPreservingTokens | None = None  # built at the first token
        self._faker = None
        self.fake_locale = fake_locale

    def pseudonym(self, value: str) -> str:
        mac = hmac.new(self._pseudonym_key, value.encode("utf-8"), hashlib.sha256)
        return mac.hexdigest()[:PSEUDONYM_HEX]

    def token(self, value: str) -> str:
        if self._fpe is None:
            from anonsql.masking.fpe import FormatPreservingTokens

            self._fpe = FormatPreservingTokens(self._key)
        return self._fpe.token(value)

    def fake(self, value: str, kind: str) -> str:
        fk = self._get_faker()
        seed = hmac.new(self._fake_key, f"{kind}\x00{value}".encode(), hashlib.sha256).digest()
        fk.seed_instance(int.from_bytes(seed[:8], "big"))
        return str(getattr(fk, kind)())

    def _get_faker(self):
        if self._faker is None:
            try:
                from faker import Faker
            except ImportError:
                raise InputError(
                    "the fake mask needs faker, in the extra 'fake': pip install 'anonsql[fake]'"
                ) from None
            try:
                self._faker = Faker(self.fake_locale)
            except AttributeError:
                raise InputError(f"faker has no locale {self.fake_locale!r}") from None
        return self._faker

    def tokens(self, mask: Mask, values: Iterable[str], kind: str | None = None) -> list[str]:
        if mask.method == "pseudonym":
            return [self.pseudonym(v) for v in values]
        if mask.method == "token":
            return [self.token(v) for v in values]
        if mask.method == "fake":
            k = mask.kind or kind
            if k is None:
                raise InputError("fake needs a kind")  # resolved before (resolve_fake_kind)
            return [self.fake(v, k) for v in values]
        raise AssertionError(mask.method)


__all__ = [
    "FAKE_FOR_KIND",
    "FAKE_KINDS",
    "KEYED",
    "METHODS",
    "Mask",
    "Tokenizer",
    "digest",
    "masks_text",
    "parse_mask",
    "parse_masks",
    "sql_digest",
    "sql_mask",
]
