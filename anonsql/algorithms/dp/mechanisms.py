"""The randomness of a DP release and the exponential mechanism.

By default every random choice comes from the operating system: the sample's key from
:mod:`secrets` (``os.urandom``), the exponential mechanism from OpenDP, whose samplers draw
from the OS's cryptographic generator and sample the noise exactly (no floating-point
sampling artefacts). A ``seed`` is for tests and reproductions only: it makes the sample's
key and the mechanism's draws a function of the seed, and the release says so in its
provenance and report. OpenDP cannot be seeded (by design), so a seeded release draws the
same mechanism with NumPy's PCG64 generator instead (:func:`gumbel_max`, tested for its
choice frequencies in ``tests/algorithms/dp/test_dp.py``).

The exponential mechanism (McSherry and Talwar 2007; SafePub section 4, Eq. (7)) picks
candidate r with probability proportional to exp(epsilon * u(r) / (2 * Delta_u)). Scores
handed to :meth:`Randomness.choose` are already divided by their sensitivity Delta_u (as
ARX's score functions return them), so a candidate's weight is exp(epsilon * s / 2).
Drawing it as the index of the largest of s * epsilon / 2 + G_r, with G_r independent
standard Gumbel variables, gives exactly those probabilities (the Gumbel-max identity); OpenDP's
``make_noisy_max`` adds Gumbel noise of scale 2 / epsilon when its output measure is zCDP (its
pure-DP variant adds exponential noise: permute-and-flip, another mechanism). Its privacy
is accounted here as the exponential mechanism's pure epsilon (Gumbel-max is that mechanism),
not through OpenDP's zCDP map.
"""

from __future__ import annotations

import hashlib
import math
import secrets
from collections.abc import Sequence

import numpy as np

from anonsql.errors import InputError

#: what a release records about its randomness
OS_RANDOMNESS = "os"
SEEDED = "seeded (tests and reproductions only)"


def _opendp():
    try:
        import opendp.prelude as dp
    except ImportError:  # pragma: no cover - the dp extra is missing
        raise InputError(
            "differentially private releases draw their mechanism with OpenDP: "
            "pip install 'anonsql[dp]' (or give --seed for a test run)"
        ) from None
    dp.enable_features("contrib")
    return dp


def gumbel_max(scores: Sequence[float], epsilon: float, rng: np.random.Generator) -> int:
    """Index of the largest s * epsilon / 2 + Gumbel noise: candidate r with probability
    exp(epsilon s_r / 2) / sum_q exp(epsilon s_q / 2). Written here only because OpenDP's
    samplers cannot be seeded; used for seeded releases only."""
    s = np.asarray(scores, dtype=np.float64)
    noisy = s * (epsilon / 2.0) + rng.gumbel(size=len(s))
    return int(np.argmax(noisy))


class Randomness:
    """A release's source of randomness: the OS (``seed`` None) or a seed."""

    def __init__(self, seed: int | None = None) -> None:
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError(f"seed must be a whole number, not {seed!r}")
        self.seed = seed
        self._rng = None
        if seed is not None:
            digest = hashlib.sha256(f"anonsql safepub mechanism {seed}".encode()).digest()
            self._rng = np.random.Generator(np.random.PCG64(int.from_bytes(digest[:16], "big")))

    @property
    def kind(self) -> str:
        return OS_RANDOMNESS if self.seed is None else SEEDED

    def sample_key(self) -> str:
        """The secret key of the engine's sampler (:mod:`anonsql.algorithms.dp.sampling`):
        256 bits from :func:`secrets.token_hex`, or derived from the seed."""
        if self.seed is None:
            return secrets.token_hex(32)
        return hashlib.sha256(f"anonsql safepub sample {self.seed}".encode()).hexdigest()

    def choose(self, scores: Sequence[float], epsilon: float) -> int:
        """One draw of the exponential mechanism over ``scores`` (each divided by its
        sensitivity) with privacy parameter ``epsilon``."""
        if not len(scores):
            raise ValueError("the exponential mechanism needs at least one candidate")
        if not (math.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be positive, not {epsilon!r}")
        if any(not math.isfinite(s) for s in scores):
            raise ValueError("a score is not a finite number")
        if len(scores) == 1:
            return 0
        if self._rng is not None:
            return gumbel_max(scores, epsilon, self._rng)
        dp = _opendp()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
        select = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=2.0 / epsilon)
        return int(select([float(s) for s in scores]))


def exponential_probabilities(scores: Sequence[float], epsilon: float) -> np.ndarray:
    """The exponential mechanism's exact choice probabilities (tests, reports)."""
    w = np.asarray(scores, dtype=np.float64) * (epsilon / 2.0)
    w = np.exp(w - w.max())
    return w / w.sum()


__all__ = [
    "OS_RANDOMNESS",
    "SEEDED",
    "Randomness",
    "exponential_probabilities",
    "gumbel_max",
]
