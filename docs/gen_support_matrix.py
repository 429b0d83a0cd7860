"""Write the support matrix from the op database (never by hand)."""

from __future__ import annotations

from mscompat.testing import OP_DB


def write_support_matrix(path: str) -> None:
    rows = [("op", "mirrors", "dtypes", "modes", "gradient", "error inputs")]
    for info in OP_DB:
        rows.append(
            (
                f"``{info.full_name}``",
                f"``{info.mirrors}``",
                ", ".join(info.dtypes),
                "PyNative, graph" if info.supports_graph else "PyNative",
                "yes" if info.grad_argnums else "no",
                str(len(list(info.error_inputs()))),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    sep = "  ".join("=" * w for w in widths)
    lines = [sep, "  ".join(c.ljust(w) for c, w in zip(rows[0], widths)).rstrip(), sep]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows[1:]]
    lines.append(sep)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
