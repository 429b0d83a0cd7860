"""Sphinx configuration for mscompat."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("."))
os.environ.setdefault("GLOG_v", "3")

import mscompat  # noqa: E402

project = "mscompat"
author = "mscompat developers"
release = mscompat.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
nitpicky = False
exclude_patterns = ["_build"]
html_theme = "alabaster"
suppress_warnings = ["autosummary.import_cycle"]


def setup(app):  # noqa: ANN001, ANN201
    from gen_support_matrix import write_support_matrix

    write_support_matrix(os.path.join(os.path.dirname(__file__), "support_matrix.inc"))
