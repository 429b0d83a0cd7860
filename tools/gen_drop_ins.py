"""Write ``mscompat/scan/data/drop_ins.json``, the table of mscompat's drop-ins for PyTorch APIs
that ``mscompat scan`` reads (one per backend), from the op database.

Run it after adding or renaming an op database entry; ``tests/test_scan.py`` fails until the
committed table equals the op database's::

    python tools/gen_drop_ins.py
"""

from __future__ import annotations

import json

from mscompat.scan.knowledge import DROP_INS_FILE, drop_ins_table


def main() -> None:
    text = json.dumps(drop_ins_table(), indent=1, sort_keys=True) + "\n"
    DROP_INS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {DROP_INS_FILE}")


if __name__ == "__main__":
    main()
