"""Make the recorded-outcome stand-ins (`replay_sampler.py`) importable by the rollout tests.

The suite runs with `--import-mode=importlib`, which does not put test folders on sys.path; the helper's
name is unique across the suite, so adding this folder is safe.
"""

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
