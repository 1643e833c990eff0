"""Partitioning algorithms on the database's histogram: Mondrian with l-diversity (LeFevre
et al.'s strict multidimensional partitioning), and seed 003's target-aware partitioning
(TA_DA): a (k, l)-compliant decision tree (Definition IV.1) or a (k, l)-compliant clustering
(Definition IV.2) whose groups Mondrian then anonymizes one by one."""
