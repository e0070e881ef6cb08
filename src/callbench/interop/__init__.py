"""Interop: a stored run in other tools' formats, and other tools' logs as runs.

``callbench export inspect|atif|evaleval|parquet RUN`` and ``callbench import inspect LOG``
(docs/interop.md). The package sits above the report and below the API and CLI in the import layers:
it reads run folders through :mod:`callbench.harness.runfolder` only, and never imports a benchmark
(a log of a benchmark's task is matched to the benchmark's suite through the catalog).

| module | holds |
|---|---|
| ``source.py`` | a run folder read for export: records, header, summary; the one-line refusals |
| ``conversation.py`` | a record's episode as an ordered list of turns (user, assistant, tool results) |
| ``inspect_log.py`` | inspect_ai's ``.eval`` log (zip, log schema version 2) written from a run |
| ``inspect_import.py`` | an inspect log of a known task read into a run folder and scored |
| ``atif.py`` | ATIF v1.4 trajectories, one per case and trial |
| ``evaleval.py`` | Every Eval Ever (EvalEval) records, schema v0.2.0 |
| ``frames.py`` | runs, records and verdicts as pandas or polars frames; parquet files |
"""
