"""How private and how useful a release is: the checks and loss of a generalized table
(:mod:`~anonsql.evaluation.checks`), seed 000's MLP on its encodings
(:mod:`~anonsql.evaluation.mlp`, :mod:`~anonsql.evaluation.representation`), seed 003's
downstream task (:mod:`~anonsql.evaluation.task`), seed 001's measures of released groups
(:mod:`~anonsql.evaluation.groups`) and a run's report (:mod:`~anonsql.evaluation.report`).
Nothing here decides a release: the algorithms do (:mod:`anonsql.algorithms`), and nothing
in them imports this package."""
