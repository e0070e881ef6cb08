"""Human review: the quality-control loop over a run's verdicts.

Reviewers' judgements are stored beside the automatic verdicts (``reviews/<reviewer>.jsonl`` in the
run folder), never instead of them; agreement between reviewers, and between reviewers and the
automatic scorers, is measured with the usual inter-rater coefficients.
"""
