"""Shared test set-up: MindSpore on CPU, one process-wide context."""

from __future__ import annotations

import os

os.environ.setdefault("GLOG_v", "3")  # MindSpore: errors only

import mindspore as ms  # noqa: E402

ms.set_device("CPU")


import pytest  # noqa: E402

from mscompat.testing.parity import reset_grad_state  # noqa: E402


@pytest.fixture(autouse=True)
def _pynative_grad_state():
    # A test whose PyNative gradient raised must not leave MindSpore recording gradients for
    # the tests after it (see reset_grad_state).
    yield
    reset_grad_state()
