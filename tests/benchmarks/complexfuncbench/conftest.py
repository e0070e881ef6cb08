import sys
from pathlib import Path

# Shared helpers (cfb_helpers.py) live beside the tests.
sys.path.insert(0, str(Path(__file__).parent))
