import sys
from pathlib import Path

# The synthetic-record generator lives beside the tests; make it importable as ``synth``.
sys.path.insert(0, str(Path(__file__).parent))
