"""Custom kernels and the dispatch layer that chooses between implementations."""

from typing import List

__all__: List[str] = []
