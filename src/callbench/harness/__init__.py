"""The harness: round loop, harness modes, trace, observers and the concurrent engine."""
