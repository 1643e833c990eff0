"""Every column of an output has a role, decided before any work is done.

An output holds only:

* the quasi-identifiers (generalized by the run's recoding),
* the sensitive attribute and the label of a target-aware run (as they are; the privacy
  models protect them),
* the columns declared insensitive (``keep``), as they are,
* identifiers under a masking method (``mask``; ``drop`` leaves the column out).

A column of the output with none of these roles is an error that names each such column
with what :func:`~anonsql.masking.profile.profile_table` measured about it and the option
that gives it a role. A kept column or a quasi-identifier that looks like a direct
identifier (unique on at least 95% of the rows, or of a kind such as e-mail or phone number)
is refused unless ``allow_identifying`` names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from anonsql.errors import InputError
from anonsql.masking.methods import Mask, parse_masks
from anonsql.masking.profile import profile_message, profile_table
from anonsql.spec import Spec, sensitive_columns

QI, SENSITIVE, KEPT, MASKED, LABEL = "quasi-identifier", "sensitive", "kept", "masked", "label"


@dataclass
class Roles:
    """The output's columns (in order, dropped ones left out) and each one's role."""

    columns: list[str]
    role: dict[str, str]
    masks: dict[str, Mask] = field(default_factory=dict)  # masked columns of the output
    dropped: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, str]:
        """Column -> its role as reports show it (``masked: pseudonym``)."""
        out = {}
        for c in [*self.columns, *self.dropped]:
            if c in self.dropped:
                out[c] = "masked: drop"
            elif c in self.masks:
                out[c] = f"masked: {self.masks[c].text()}"
            else:
                out[c] = self.role[c]
        return out


def declared_masks(spec: Spec) -> dict[str, Mask]:
    """The spec's masks, with ``identifiers`` (the older option) as ``drop``."""
    masks = parse_masks(getattr(spec, "masks", None) or {})
    for c in getattr(spec, "identifiers", None) or []:
        if c in masks and masks[c].method != "drop":
            raise InputError(
                f"{c!r} is given as an identifier to drop and masked with "
                f"{masks[c].text()!r}; give one"
            )
        masks[c] = Mask("drop")
    return masks


def declared_roles(spec: Spec) -> dict[str, str]:
    """Column -> role for every column the spec names; a column named for two roles is an
    error."""
    named: dict[str, list[str]] = {}
    for q in spec.qis:
        named.setdefault(q, []).append(QI)
    for sa in sensitive_columns(spec):  # each sensitive attribute (several: README)
        named.setdefault(sa, []).append(SENSITIVE)
    for c in getattr(spec, "keep", None) or []:
        named.setdefault(c, []).append(KEPT)
    for c in declared_masks(spec):
        named.setdefault(c, []).append(MASKED)
    label = getattr(spec, "label", None)
    if label and label not in named:
        # the label a target-aware run learns from may be a QI or the sensitive attribute
        # too; alone it is released as it is, as the task's target
        named[label] = [LABEL]
    both = {c: r for c, r in named.items() if len(r) > 1}
    if both:
        c, r = next(iter(sorted(both.items())))
        if set(r) == {SENSITIVE, QI}:
            raise InputError(f"{c!r} cannot be both a quasi-identifier and sensitive")
        if MASKED in r and (QI in r or SENSITIVE in r):
            raise InputError(
                f"{c!r} cannot be both a direct identifier (masked or dropped) and a "
                f"quasi-identifier or the sensitive attribute"
            )
        raise InputError(f"{c!r} has two roles ({' and '.join(r)}); give it one")
    return {c: r[0] for c, r in named.items()}


def resolve_roles(db, source: str, spec: Spec, columns: list[str]) -> Roles:
    """Check that every output column has a role, and that no kept column or QI looks like
    a direct identifier unless allowed; returns the roles. ``columns``: the output's columns
    as asked (``columns``, else every column of the source)."""
    backend = db.backend
    masks = declared_masks(spec)
    keep = list(getattr(spec, "keep", None) or [])
    allow = list(getattr(spec, "allow_identifying", None) or [])
    for what, names in (("keep", keep), ("mask", list(masks)), ("allow_identifying", allow)):
        dupes = sorted({c for c in names if names.count(c) > 1})
        if dupes:
            raise InputError(f"{what} names {', '.join(map(repr, dupes))} twice")
        if names:
            backend.require_columns(source, names)
    role = declared_roles(spec)
    stray = sorted(set(allow) - set(spec.qis) - set(keep))
    if stray:
        raise InputError(
            f"allow_identifying names {', '.join(map(repr, stray))}, which is neither kept "
            f"nor a quasi-identifier; it only lets such a column be published"
        )
    dropped = [c for c, m in masks.items() if m.method == "drop"]
    unit = getattr(spec, "unit", None)
    if unit is not None:
        _check_unit(backend, source, spec, unit, keep, masks)
        dropped = [*dropped, unit] if unit not in dropped else dropped
    out = [c for c in columns if c not in dropped]
    roleless = [c for c in out if c not in role]
    if roleless:
        profiles = profile_table(db, source, roleless)
        raise InputError(
            f"{len(roleless)} column(s) of the output have no role: {profile_message(profiles)}. "
            f"Give each one a role: a quasi-identifier (--qi), the sensitive attribute (--sa), "
            f"kept as is (--keep COL), an identifier masked (--mask COL=METHOD: pseudonym, "
            f"token, fake, partial:F:L, email-domain, null, drop), or leave it out (--columns)"
        )
    # a kept column or QI that looks like a direct identifier needs an explicit override
    kept_out = [k for k in keep if k in out]
    checked = [c for c in [*spec.qis, *kept_out] if c not in allow]
    if checked:
        qis = set(spec.qis)
        looks = [
            p
            for p in profile_table(db, source, checked, quick=True)
            if (p.identifying_as_qi if p.column in qis else p.looks_identifying)
        ]
        if looks:
            as_what = {c: "a quasi-identifier" for c in spec.qis} | {k: "kept raw" for k in keep}
            parts = [f"{p.column!r} ({p.describe()}) cannot be {as_what[p.column]}" for p in looks]
            flagged = ",".join(p.column for p in looks)
            fixes = [p.suggestion for p in looks if p.suggestion.startswith("--mask")]
            raise InputError(
                f"{'; '.join(parts)}: it looks like a direct identifier. Mask it "
                f"({'; '.join(fixes) or '--mask COL=METHOD'}), or publish it anyway with "
                f"--allow-identifying {flagged}"
            )
    return Roles(
        columns=out,
        role={c: role[c] for c in out},
        masks={c: m for c, m in masks.items() if c in out},
        dropped=[c for c in dropped if c in columns],
    )


#: masks that keep a person's rows linkable: equal values give equal outputs
LINKING_MASKS = ("pseudonym", "token", "fake", "partial", "email-domain")


def _check_unit(backend, source: str, spec: Spec, unit: str, keep: list[str], masks) -> None:
    """The privacy unit is counted, never released: neither as it is nor under a mask that
    keeps equal values equal. Such a column links a person's rows across classes, and an
    adversary who links them can intersect the classes (docs/models/units.md); so with a
    unit, identifiers are dropped or nulled, not pseudonymized."""
    backend.require_columns(source, [unit])
    taken = {q: "a quasi-identifier" for q in spec.qis}
    if spec.sensitive:
        for s in [spec.sensitive] if isinstance(spec.sensitive, str) else spec.sensitive:
            taken[s] = "the sensitive attribute"
    label = getattr(spec, "label", None)
    if label:
        taken[label] = "the label"
    taken.update({k: "kept" for k in keep})
    if unit in taken:
        raise InputError(
            f"the privacy unit {unit!r} is also {taken[unit]}: the unit is counted, never "
            f"released (releasing it links a person's rows)"
        )
    linking = sorted(c for c, m in masks.items() if m.method in LINKING_MASKS)
    if linking:
        raise InputError(
            f"with a privacy unit, {', '.join(map(repr, linking))} cannot be masked by "
            f"{', '.join(sorted({masks[c].method for c in linking}))}: equal values stay equal "
            f"and link a person's rows across classes; use drop or null"
        )


def run_roles(params: dict[str, Any], columns: list[str] | None = None) -> dict[str, str]:
    """Column -> role of a recorded run's output (runs recorded before roles existed get
    theirs from the QIs, the sensitive attribute and the identifiers)."""
    if params.get("roles"):
        return dict(params["roles"])
    out: dict[str, str] = {}
    sensitive = params.get("sensitive")  # one attribute's name, or a list of several
    for c in columns or params.get("columns") or []:
        if c in params.get("qis", []):
            out[c] = QI
        elif c == sensitive or c in (sensitive if isinstance(sensitive, list) else []):
            out[c] = SENSITIVE
        elif c == params.get("label"):
            out[c] = LABEL
        else:
            out[c] = "not declared (a run before roles)"
    for c in params.get("identifiers") or []:
        out[c] = "masked: drop"
    return out


__all__ = [
    "KEPT",
    "LABEL",
    "MASKED",
    "QI",
    "SENSITIVE",
    "Roles",
    "declared_masks",
    "resolve_roles",
    "run_roles",
]
