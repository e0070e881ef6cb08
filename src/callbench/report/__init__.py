"""Records, summaries and reports."""
