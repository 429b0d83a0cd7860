"""Write the support matrix from the op database and the dispatch registry (never by hand)."""

from __future__ import annotations

from typing import List, Sequence

from mscompat.testing import OP_DB
from mscompat.testing.runner import iter_references


def _table(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    sep = "  ".join("=" * w for w in widths)
    lines = [sep, "  ".join(c.ljust(w) for c, w in zip(rows[0], widths)).rstrip(), sep]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows[1:]]
    lines.append(sep)
    return lines


def write_support_matrix(path: str) -> None:
    from mscompat.cli import ops_table

    head = ("op", "mirrors", "dtypes", "modes", "gradient", "error inputs", "reference inputs")
    rows = [head + ("PyTorch OpInfos",)]
    for info in OP_DB:
        references = list(iter_references([info]))
        rows.append(
            (
                f"``{info.full_name}``",
                f"``{info.mirrors}``" if info.mirrors else "",
                ", ".join(info.dtypes),
                "PyNative, graph" if info.supports_graph else "PyNative",
                "yes" if info.grad_argnums else "no",
                str(len(list(info.error_inputs()))),
                str(len(references)),
                ", ".join(f"``{t.name}``" for t in info.torch_opinfo if not info.backend),
            )
        )
    lines = ["Ops and checks", "--------------", ""]
    lines += _table(rows)
    lines += [
        "",
        "Backends on CPU (where these docs were built)",
        "---------------------------------------------",
        "",
    ]
    impl = [("op", "backend", "available", "chosen", "why")]
    impl += [
        # the notes are plain text: reST markup characters in them are escaped
        (f"``{o}``", b, a, "yes" if c else "", w.replace("`", "'").replace("*", "\\*"))
        for o, b, a, c, w in ops_table("CPU")
    ]
    lines += _table(impl)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
