"""SafePub's building blocks (issue 32): beta and k against values derived by hand from the
paper's equations, the score functions' sensitivities (exact values, and the bound checked
by brute force over neighbouring samples), the exponential mechanism's choice frequencies
and the engine sampler's rate, within confidence bounds with fixed seeds."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import duckdb
import numpy as np
import pytest
from scipy.stats import binom, chi2

from anonsql.algorithms.dp.mechanisms import Randomness, exponential_probabilities, gumbel_max
from anonsql.algorithms.dp.params import (
    beta_of,
    delta_bound,
    gamma_of,
    n_min,
    safepub_k,
    safepub_parameters,
    sampling_threshold,
)
from anonsql.algorithms.dp.quality import Aggregates, ScoreContext, sensitivity, utility
from anonsql.algorithms.dp.sampling import sample_query, threshold_hex
from anonsql.errors import InputError

# -- beta and k (SafePub section 3, Eqs. (1)-(6)) -----------------------------------------------


def test_beta_is_one_minus_exp_minus_epsilon_rounded_down_on_the_grid():
    # Eq. (1): beta = 1 - e^-eps; ln 2 gives exactly 1/2, which the sampler's grid holds; the
    # threshold stays one step below (the exponential's rounding), never above
    t = sampling_threshold(math.log(2))
    assert t == 2**51 - 1
    assert beta_of(t) == (2**51 - 1) / 2**52
    for eps in (0.1, 0.5, 1.0, 2.0):
        b = beta_of(sampling_threshold(eps))
        assert b <= 1 - math.exp(-eps)
        assert 1 - math.exp(-eps) - b < 3 * 2**-52
        assert -math.log1p(-b) <= eps  # Eq. (1) holds for the beta used


def test_gamma_and_n_min_by_hand():
    # Eq. (5) with eps = ln 2, beta = 1/2: gamma = (2 - 1 + 1/2) / 2 = 3/4
    assert gamma_of(math.log(2), 0.5) == pytest.approx(0.75, rel=1e-15)
    # Eq. (4): n_m = ceil(k / gamma - 1): k = 3 -> ceil(3) = 3 (a whole number stays), k = 4
    # -> ceil(4.33) = 5
    assert n_min(3, 0.75) == 3
    assert n_min(4, 0.75) == 5


def _d_by_hand(k: int, eps: float, beta: float) -> float:
    """Eq. (2) without the Chernoff stop: the maximum over n_m <= n < 400 of the exact
    binomial tails, summed term by term with exact rationals for beta = 1/2. Where gamma n
    is a whole number the tail starts at j = gamma n itself: epsilon is a float, so gamma is
    only known within rounding, and the code (as ARX's interval arithmetic) takes the lower
    bound of gamma n (one more term, a larger delta: the conservative side)."""
    g = Fraction(3, 4)  # eps = ln 2, beta = 1/2
    assert math.isclose(gamma_of(eps, beta), float(g))
    n_m = math.ceil(Fraction(k) / g - 1)
    best = Fraction(0)
    for n in range(n_m, 400):
        lo = math.ceil(g * n)  # j > gamma n, and j = gamma n where that is whole
        tail = sum(Fraction(math.comb(n, j), 2**n) for j in range(lo, n + 1))
        best = max(best, tail)
    return float(best)


@pytest.mark.parametrize("k", [2, 5, 10, 20])
def test_delta_bound_is_the_paper_maximum(k):
    # eps = ln 2, beta = 1/2: gamma = 3/4, a_n = P[Bin(n, 1/2) > 3n/4]; the tails shrink like
    # exp(-0.13 n), so n < 400 holds the maximum; exact rationals against the code's floats
    assert delta_bound(k, math.log(2), 0.5) == pytest.approx(
        _d_by_hand(k, math.log(2), 0.5), rel=1e-9
    )


def test_k_is_the_smallest_whose_bound_holds_plus_one_as_arx():
    eps, beta = math.log(2), 0.5
    for delta in (1e-2, 1e-3, 1e-5):
        k_min, d = safepub_k(eps, delta, beta)
        assert d < delta <= delta_bound(k_min - 1, eps, beta) if k_min > 1 else d < delta
        assert _d_by_hand(k_min, eps, beta) < delta
        if k_min > 1:
            assert _d_by_hand(k_min - 1, eps, beta) >= delta
    # the release uses ARX's k = k_min + 1 (its loop's extra increment; reproduced exactly
    # on ARX's Adult cases in tests/test_dp_arx.py)
    p = safepub_parameters(2.0, 1e-5, 0.0)
    assert p.k == p.k_min + 1
    assert p.delta_k < 1e-5


def test_fixed_parameters_record_what_is_spent():
    p = safepub_parameters(1.0, 1e-5, 0.1)
    assert p.epsilon_search == pytest.approx(0.1)
    assert p.epsilon_anon == pytest.approx(0.9)
    assert p.beta == beta_of(sampling_threshold(0.9))
    # k for (0.9, 1e-5) with beta = 0.5934...: the smallest k whose bound is below 1e-5, + 1
    assert (p.k_min, p.k) == (58, 59)
    assert delta_bound(58, 0.9, p.beta) < 1e-5 <= delta_bound(57, 0.9, p.beta)


@pytest.mark.parametrize(
    "eps,delta,share",
    [(0, 1e-5, 0.1), (1, 0, 0.1), (1, 1, 0.1), (1, 1e-5, 1.0), (float("nan"), 1e-5, 0)],
)
def test_bad_budget_values_are_one_line_errors(eps, delta, share):
    with pytest.raises(InputError) as e:
        safepub_parameters(eps, delta, share)
    assert "\n" not in str(e.value)


# -- sensitivities (SafePub section 5) ---------------------------------------------------------


def _ctx(metric, k, m=2, rows=100):
    return ScoreContext(metric, k, m, (4, 2), (2, 1), rows)


def test_sensitivities_by_hand():
    # m = 2 QIs, k = 5, N = 100
    assert sensitivity(_ctx("loss", 5)) == 2 * 4  # m (k - 1)
    assert sensitivity(_ctx("precision", 5)) == 8
    assert sensitivity(_ctx("aecs", 5)) == 1
    assert sensitivity(_ctx("dm", 5)) == 100 * (Fraction(25, 4) + 1)  # N (k^2/(k-1) + 1)
    assert sensitivity(_ctx("entropy", 5)) == 2 * 100 * Fraction(29, 4)
    assert sensitivity(_ctx("loss", 1)) == 2  # k = 1: m
    assert sensitivity(_ctx("dm", 1)) == 500  # 5 N


def _aggregates(records: list[tuple[int, int]], levels: tuple[int, int], k: int) -> Aggregates:
    """Aggregates of a tiny sample: two QIs, leaves 0..3 (hierarchy: {0,1} {2,3} *) and 0..1
    (hierarchy: *), at ``levels``."""
    anc = [
        {0: [0, 4, 6], 1: [1, 4, 6], 2: [2, 5, 6], 3: [3, 5, 6]},
        {0: [0, 2], 1: [1, 2]},
    ]
    leaves_below = [{0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4}, {0: 1, 1: 1, 2: 2}]
    roots = (6, 2)
    classes: dict[tuple[int, int], int] = {}
    for a, b in records:
        key = (anc[0][a][levels[0]], anc[1][b][levels[1]])
        classes[key] = classes.get(key, 0) + 1
    released = {c: n for c, n in classes.items() if n >= k}
    supp = sum(n for n in classes.values() if n < k)
    values = [{}, {}]
    for c, n in released.items():
        for j in range(2):
            if c[j] != roots[j]:
                values[j][c[j]] = values[j].get(c[j], 0) + n
    return Aggregates(
        levels,
        len(released),
        sum(released.values()),
        supp,
        supp > 0,
        sum(n * n for n in released.values()),
        [sum(n * leaves_below[j][c[j]] for c, n in released.items()) for j in range(2)],
        [sum(n for c, n in released.items() if c[j] == roots[j]) for j in range(2)],
        [sum(v * v for v in values[j].values()) for j in range(2)],
    )


@pytest.mark.parametrize("metric", ["loss", "precision", "aecs", "dm", "entropy"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_no_neighbour_changes_a_score_by_more_than_its_sensitivity(metric, k):
    # every sample of up to 6 records over the 8 possible records, every record added, every
    # transformation: |u(S + r) - u(S)| <= Delta u (the paper's bound)
    domain = [(a, b) for a in range(4) for b in range(2)]
    ctx = ScoreContext(metric, k, 2, (4, 2), (2, 1), 7)  # N: at least the samples' size
    bound = sensitivity(ctx)
    worst = Fraction(0)
    rng = np.random.default_rng(5)
    samples = [list(rng.choice(8, size=int(rng.integers(0, 7)))) for _ in range(150)]
    for levels in itertools.product(range(3), range(2)):
        for s in samples:
            base = utility(_aggregates([domain[i] for i in s], levels, k), ctx)
            for r in range(8):
                moved = utility(_aggregates([domain[i] for i in [*s, r]], levels, k), ctx)
                worst = max(worst, abs(moved - base))
    assert worst <= bound


# -- the exponential mechanism --------------------------------------------------------------------

SCORES = [0.0, 1.0, 2.5, 4.0, 4.0]  # already divided by the sensitivity


def _chi2_ok(counts: np.ndarray, probs: np.ndarray, alpha: float = 1e-6) -> bool:
    expected = probs * counts.sum()
    stat = float(((counts - expected) ** 2 / expected).sum())
    return stat < chi2.ppf(1 - alpha, len(probs) - 1)


def test_seeded_mechanism_matches_exp_eps_u_over_2_delta_u():
    # a small lattice with known utilities: frequencies over 40,000 seeded draws match
    # exp(eps u / (2 Delta u)) (chi-square, p > 1e-6), and each within 5 standard errors
    eps = 1.2
    rng = np.random.Generator(np.random.PCG64(11))
    draws = np.array([gumbel_max(SCORES, eps, rng) for _ in range(40_000)])
    counts = np.bincount(draws, minlength=len(SCORES))
    probs = exponential_probabilities(SCORES, eps)
    se = np.sqrt(probs * (1 - probs) / len(draws))
    assert np.all(np.abs(counts / len(draws) - probs) < 5 * se)
    assert _chi2_ok(counts, probs)


def test_opendp_mechanism_matches_exp_eps_u_over_2_delta_u():
    # the default path (OpenDP's Gumbel noisy max, OS randomness: no seed); a bound loose
    # enough (p > 1e-6) to fail only on a real difference
    pytest.importorskip("opendp")
    eps = 1.2
    rnd = Randomness()
    draws = np.array([rnd.choose(SCORES, eps) for _ in range(6_000)])
    counts = np.bincount(draws, minlength=len(SCORES))
    assert _chi2_ok(counts, exponential_probabilities(SCORES, eps))


def test_seed_reproduces_and_os_randomness_differs():
    a, b = Randomness(7), Randomness(7)
    assert [a.choose(SCORES, 0.5) for _ in range(50)] == [b.choose(SCORES, 0.5) for _ in range(50)]
    assert a.sample_key() == b.sample_key()
    assert Randomness().sample_key() != Randomness().sample_key()
    assert Randomness(7).sample_key() != Randomness(8).sample_key()


# -- the engine's sampler ----------------------------------------------------------------------


def test_threshold_hex_is_fixed_width_and_ordered():
    assert threshold_hex(1) == "0000000000001"
    assert threshold_hex(2**51) == "8000000000000"
    assert len(threshold_hex(2**52 - 2)) == 13


@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_sampling_rate_matches_beta(eps):
    # 200,000 rows drawn with a seeded key: the count is Binomial(n, beta); within 5 standard
    # deviations (a false failure has probability below 1e-6)
    con = duckdb.connect()
    n = 200_000
    con.execute(f"CREATE TABLE t AS SELECT range AS x FROM range({n})")
    t = sampling_threshold(eps)
    beta = beta_of(t)
    key = Randomness(3).sample_key()
    q = sample_query("duckdb", "t", t)
    drawn = con.execute(f"SELECT COUNT(*) FROM ({q.sql('duckdb')})", [key]).fetchone()[0]
    sd = math.sqrt(n * beta * (1 - beta))
    assert abs(drawn - n * beta) < 5 * sd
    # and the draws are independent of the row: the first and second halves agree too
    half = con.execute(
        f"SELECT COUNT(*) FROM ({q.sql('duckdb')}) WHERE x < {n // 2}", [key]
    ).fetchone()[0]
    assert binom.cdf(half, drawn, 0.5) > 1e-7 and binom.sf(half, drawn, 0.5) > 1e-7


def test_seeded_sample_with_order_is_reproducible():
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range % 7 AS x, range AS y FROM range(3000)")
    t = sampling_threshold(0.7)
    key = Randomness(1).sample_key()
    q = sample_query("duckdb", "t", t, order=["x", "y"]).sql("duckdb")
    first = con.execute(f"SELECT y FROM ({q}) ORDER BY y", [key]).fetchall()
    con.execute("CREATE TABLE u AS SELECT * FROM t ORDER BY y DESC")  # another storage order
    q2 = sample_query("duckdb", "u", t, order=["x", "y"]).sql("duckdb")
    assert con.execute(f"SELECT y FROM ({q2}) ORDER BY y", [key]).fetchall() == first
