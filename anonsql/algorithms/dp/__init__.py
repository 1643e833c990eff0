"""Differentially private releases of microdata: SafePub (Bild, Kuhn, Prasser, PoPETs 2018),
as ARX offers it with its ``EDDifferentialPrivacy`` criterion. One folder: the parameters
(beta, k), the randomness and the exponential mechanism, the sample drawn in the engine,
the score functions of bounded sensitivity, the search, the budget accounting, and the
algorithm (``algorithm="safepub"``, :mod:`anonsql.algorithms.dp.safepub`). Empty, so that
its options (:mod:`anonsql.algorithms.dp.options`) load without the algorithm."""
