"""Measure which MindSpore callable can stand in for each PyTorch API, on this machine's backend.

The probe lives in ``tools/probe/`` (the case table ``cases.toml``, the scripted cases, the
runner); this is its command line. Run it by hand (it is not part of the test suite)::

    python tools/probe_apis.py                       # measure on CPU, merge into the data file
    python tools/probe_apis.py --device GPU          # on a GPU machine: fills the GPU column
    python tools/probe_apis.py --only interpolate    # re-measure a subset

Each run replaces the column of the device it ran on and keeps the other columns.
"""

from __future__ import annotations

import sys
from pathlib import Path

# ``python tools/probe_apis.py`` puts tools/ on the path; the probe imports as ``tools.probe``
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.probe.run import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
