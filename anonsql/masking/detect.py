"""What kind of values a column holds, read from its engine type, its name and a sample of
its values: the kinds that make a column a direct identifier (e-mail, phone number, IP
address, IBAN, card number, URL, person name), the kinds a hierarchy builder handles (date,
timestamp, postal code, number, category) and free text.

Checksummed formats are checked with the maintained libraries of the field: IBANs with
python-stdnum's ISO 13616 check (mod 97), card numbers with its Luhn check, phone numbers with
phonenumbers (Google's libphonenumber metadata). A kind is detected when at least
:data:`SHARE` of the sampled non-NULL values have it.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Sequence

#: share of the sampled values that must have a kind for the column to have it
SHARE = 0.9
#: kinds that make a column a direct identifier: it cannot be kept raw or be a QI
IDENTIFIER_KINDS = ("email", "phone", "ip-address", "iban", "card-number", "url", "person-name")

_EMAIL = re.compile(r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
_URL = re.compile(r"^(https?|ftp)://[^\s/$.?#][^\s]*$|^www\.[^\s]+\.[a-z]{2,}[^\s]*$", re.I)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO_TIMESTAMP = re.compile(
    r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?$"
)
_OTHER_DATE = re.compile(r"^\d{1,2}[./]\d{1,2}[./]\d{4}$")
_POSTAL = re.compile(
    r"^\d{4,6}(-\d{4})?$"  # US ZIP (+4), most of Europe's, India's
    r"|^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$"  # UK
    r"|^[A-Z]\d[A-Z] ?\d[A-Z]\d$"  # Canada
    r"|^\d{3}-\d{4}$"  # Japan
    r"|^[A-Z]{1,2}-?\d{4,5}$",  # letter-prefixed codes (e.g. country letters)
    re.I,
)
_POSTAL_NAMES = re.compile(r"zip|postal|postcode|post_code|plz|cep|pincode", re.I)
_NAME_PART = re.compile(r"^[A-Z][a-zà-ÿ'’-]+\.?$|^[A-Z]\.$|^(van|von|de|da|del|di|le|la|bin|al)$")
_PHONE_CHARS = re.compile(r"^(\+?[\d\s().-]{7,20}?)\s*((x|ext\.?|#)\s*\d{1,6})?$", re.I)
_CARD_CHARS = re.compile(r"^[\d -]{12,23}$")
# every character an IP address can have (an IPv6 address's scope after a %): a value with
# another one is no address, and costs no exception from ipaddress
_IP_CHARS = re.compile(r"[0-9A-Fa-f:.]*(%.*)?", re.S)


def type_family(sql_type: str) -> str:
    """``number``, ``date``, ``timestamp``, ``boolean``, ``text`` or ``other`` for an engine
    type name (DuckDB, PostgreSQL or Spark spelling)."""
    t = sql_type.lower()
    if t.startswith(("bool",)):
        return "boolean"
    if "timestamp" in t or t.startswith("datetime"):
        return "timestamp"
    if t == "date" or t.startswith("datetype") or t == "date32":
        return "date"
    if (
        any(
            w in t
            for w in (
                "int",
                "decimal",
                "numeric",
                "double",
                "float",
                "real",
                "hugeint",
                "long",
                "short",
                "byte",
            )
        )
        and "interval" not in t
    ):
        return "number"
    if any(w in t for w in ("char", "text", "string", "varchar", "name", "uuid")):
        return "text"
    return "other"


def _reaches(values: Sequence[str] | Counter[str], test) -> bool:
    """Whether at least :data:`SHARE` of ``values`` pass ``test``, stopping at the first
    miss that makes the share unreachable (most kinds are ruled out by a tenth of the
    sample). ``values`` may be counted (a value and how often the sample holds it): each
    distinct value is tested once, and weighs its count."""
    counted = values if isinstance(values, Counter) else Counter(values)
    n = sum(counted.values())
    if not n:
        return False
    hits = misses = 0
    for v, times in counted.items():
        try:
            hit = bool(test(v))
        except Exception:  # a library's parser rejecting a value is a miss, not an error
            hit = False
        if hit:
            hits += times
        else:
            misses += times
            if (n - misses) / n < SHARE:  # even every value left a hit falls short
                return False
    return hits / n >= SHARE


def _ip(v: str) -> bool:
    v = v.strip()
    if not _IP_CHARS.fullmatch(v):
        return False
    ipaddress.ip_address(v)
    return True


def _iban(v: str) -> bool:
    if len(v.replace(" ", "")) < 15:
        return False
    from stdnum import iban

    return iban.is_valid(v)


def _card(v: str) -> bool:
    if not _CARD_CHARS.match(v):
        return False
    from stdnum import luhn

    digits = re.sub(r"\D", "", v)
    # ISO/IEC 7812 numbers: 12 (Maestro) to 19 digits, the last a Luhn check digit
    return 12 <= len(digits) <= 19 and luhn.is_valid(digits)


def _phone(v: str) -> bool:
    m = _PHONE_CHARS.match(v)
    if not m:
        return False
    v = m.group(1)  # an extension is not part of the number
    digits = re.sub(r"\D", "", v)
    if not 7 <= len(digits) <= 15:
        return False
    import phonenumbers

    # without a leading + a number is read as a national one, in the regions tried in turn
    for region in (None,) if v.strip().startswith("+") else ("US", "GB", "DE", "FR", "IN"):
        n = phonenumbers.parse(v, region)
        if phonenumbers.is_possible_number(n):
            return True
    return False


def _person_name(v: str) -> bool:
    parts = v.split()
    return 2 <= len(parts) <= 5 and all(_NAME_PART.match(p) for p in parts)


def detect_kind(
    column: str, family: str, values: Sequence[str], distinct: int | None = None
) -> str:
    """The column's kind: one of :data:`IDENTIFIER_KINDS`, ``date``, ``timestamp``,
    ``postal-code``, ``number``, ``boolean``, ``free-text``, ``category`` or ``text``.
    ``values`` is a sample of its non-NULL values as text; ``distinct`` its distinct count."""
    if family in ("date", "timestamp", "boolean"):
        return family
    vals = [v for v in (str(x) for x in values) if v != ""]
    if family == "number":
        if _POSTAL_NAMES.search(column) and vals and _reaches(vals, _POSTAL.match):
            return "postal-code"
        return "number"
    if not vals:
        return "text"
    # a test's answer depends on the value alone: each distinct value is tested once
    counted = Counter(vals)
    checks = (
        ("email", _EMAIL.match),
        ("url", _URL.match),
        ("ip-address", _ip),
        ("iban", _iban),
        ("card-number", _card),
        ("timestamp", _ISO_TIMESTAMP.match),
        ("date", lambda v: _ISO_DATE.match(v) or _OTHER_DATE.match(v)),
    )
    for kind, test in checks:
        if _reaches(counted, test):
            return kind
    postal = _reaches(counted, _POSTAL.match)
    if postal and (_POSTAL_NAMES.search(column) or len({len(v) for v in counted}) <= 2):
        return "postal-code"
    if _reaches(counted, _phone):
        return "phone"
    if _reaches(counted, _person_name):
        return "person-name"
    mean_len = sum(len(v) for v in vals) / len(vals)
    mean_words = sum(len(v.split()) for v in vals) / len(vals)
    if mean_len >= 40 and mean_words >= 5:
        return "free-text"
    if distinct is not None and distinct <= 50:
        return "category"
    return "text"


__all__ = ["IDENTIFIER_KINDS", "SHARE", "detect_kind", "type_family"]
