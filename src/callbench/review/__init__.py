"""Human review: the quality-control loop over a run's verdicts, and the map of where it lives.

Reviewers' judgements are stored beside the automatic verdicts (``reviews/<reviewer>.jsonl`` in the
run folder), never instead of them; agreement between reviewers, and between reviewers and the
automatic scorers, is measured with the usual inter-rater coefficients. ``docs/review.md`` is the
user's guide; ``callbench review`` (``cli/review.py``) and ``callbench show`` / ``callbench report``
are the ways in.

The package sits in two layers of the import contract (``pyproject.toml``), on either side of
:mod:`callbench.report`, because the report shows reviewed accuracy and the suspects while the
review page reuses the report's case panel:

Below the report (they import :mod:`callbench.harness` and the types, never the report):

* :mod:`~callbench.review.store`: the review store, the one reader and writer of
  ``reviews/<reviewer>.jsonl`` (append-only; record hashes and staleness; reviewed accuracy).
* :mod:`~callbench.review.suspects`: the scorer rules and cases the reviews point at (overturns
  grouped by reason).
* :mod:`~callbench.review.tables`: reviewed accuracy beside automatic accuracy, and the suspects, as
  rows for ``callbench show`` and the report page (:mod:`callbench.report.tables`,
  :mod:`callbench.report.payload`).
* :mod:`~callbench.review.agreement`: inter-rater coefficients with intervals (pure functions; below
  the report so that the judge audit on the report page uses the same Cohen's κ).
* :mod:`~callbench.review.judge_sources` and :mod:`~callbench.review.judge_audit`: where a judge's
  verdict sits beside a deterministic one (ComplexEval's response judge, a scorer's
  ``details.judge_pair``, human reviews against each tier) and how far they agree
  (``callbench audit-judge`` and the report's "Judge audit" section).

Above the report (they may import it; nothing below the CLI and API imports them):

* :mod:`~callbench.review.queue`: which cases need a person, and why.
* :mod:`~callbench.review.page`: the review page and its local server (``callbench review RUN_DIR``),
  built on the report's case panel and page server; its assets are in ``templates/``.
* :mod:`~callbench.review.agreement_report`: ``callbench review agreement``: the figures,
  disagreements, suspects and consensus of a run's reviews.

A new module here goes into one of the two review lines of the layers contract. The data types
(``ReviewEntry``, decisions, reason codes, rubric scales) are not here but in
:mod:`callbench.types.review`, at the bottom of the layers, because records (``types/records.py``)
use them.
"""
