"""The lattice family's own options (beside the shared goal): the solution space, the
monotone shortcut and the histogram's memory of the searches, the heuristic search's limits,
rho-Gain's passes and local recoding's loop. Declared here, apart from the algorithms, so
that the command line reads them without loading the searches."""

from __future__ import annotations

from anonsql.spec import Option

OPTIONS: tuple[Option, ...] = (
    Option(
        "solutions",
        "solutions",
        "bool",
        "Also find and score every minimal anonymous transformation.",
        flag="--solution-space",
    ),
    Option(
        "assume_monotone",
        "assume_monotone",
        "bool",
        "Prune as if every model were monotone with suppression (ARX's practical "
        "monotonicity): faster, but may miss the optimum; the result's guarantee says so.",
    ),
    Option(
        "memory_budget",
        "memory_budget",
        "size",
        "Memory the search may use for the histogram, e.g. 1GiB (default: a quarter of "
        "the machine's memory); a larger histogram stays in the engine.",
    ),
    Option(
        "time_limit",
        "time_limit",
        "number",
        "heuristic only: stop after this many seconds (default 30, as ARX).",
    ),
    Option(
        "steps",
        "steps",
        "int",
        "heuristic only: stop after this many node checks (default: no limit).",
    ),
    Option(
        "rho",
        "rho",
        "int",
        "rho-gain only: passes over the suppressed outliers after the first (its paper: 2).",
    ),
    Option(
        "recoding",
        "recoding_mode",
        "str",
        "local: ARX's local recoding, re-running the lattice algorithm on the suppressed "
        "records (--local-gs-factor, --max-iterations, --adaption-factor).",
        choices=("global", "local"),
    ),
    Option(
        "local_gs_factor",
        "local_gs_factor",
        "number",
        "Local recoding: Loss's gsFactor in the passes over the outliers (ARX's default).",
    ),
    Option(
        "max_iterations",
        "max_iterations",
        "int",
        "Local recoding: at most this many passes after the first (ARX's maxIterations).",
    ),
    Option(
        "adaption_factor",
        "adaption_factor",
        "number",
        "Local recoding: added to the gs factor when a pass releases nothing (ARX).",
    ),
)

__all__ = ["OPTIONS"]
