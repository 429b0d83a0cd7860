"""The NumPy pin: MindSpore 2.10's first Tensor arithmetic fails with NumPy 2."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import numpy as np


def test_numpy_is_pinned_below_2_in_metadata():
    requires = metadata.requires("mscompat") or []
    numpy_reqs = [r for r in requires if r.replace(" ", "").startswith("numpy")]
    assert numpy_reqs and any("<2" in r for r in numpy_reqs), requires
    assert int(np.__version__.split(".")[0]) < 2


def test_first_tensor_arithmetic_in_a_fresh_process():
    # With NumPy 2.x this exact line raised SystemError: "... returned a result with an
    # exception set" on the first arithmetic of the process.
    code = (
        "import mindspore as ms, numpy as np\n"
        "x = ms.Tensor(np.array([0.25, 2.0], np.float32))\n"
        "y = 1 - x\n"
        "print(y.asnumpy().tolist())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[0.75, -1.0]"


def test_version_is_exposed():
    import mscompat

    assert mscompat.__version__ == metadata.version("mscompat")
