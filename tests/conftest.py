"""Shared test set-up: MindSpore on CPU, one process-wide context."""

from __future__ import annotations

import os

os.environ.setdefault("GLOG_v", "3")  # MindSpore: errors only

import mindspore as ms  # noqa: E402

ms.set_device("CPU")
