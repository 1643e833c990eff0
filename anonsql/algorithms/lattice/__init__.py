"""Full-domain generalization over the lattice of level vectors: the searches (Flash,
exhaustive, heuristic; :mod:`~.searches`), the lattice, the adapter that runs them
(:mod:`~.algorithm`), and the passes over the suppressed outliers (rho-Gain and ARX's
local recoding, :mod:`~.passes`). Kept empty so that the family's option declarations
(:mod:`~.options`) load without the searches."""
