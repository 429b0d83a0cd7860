"""Shape and layout ops with PyTorch semantics (the migration guide's equivalent replacements)."""

from typing import List

__all__: List[str] = []
