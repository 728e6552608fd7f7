#!/usr/bin/env python3
"""render.py TEMPLATE OUTPUT: write TEMPLATE with every @NAME@ replaced by the environment's NAME.

The one renderer of deploy/nginx/jackpot.conf.in, deploy/pgbouncer/pgbouncer.ini.in and
deploy/cluster/nginx.conf.in, for `make cluster` and for an operator alike. A placeholder whose
variable is not set is an error naming it: a half-rendered proxy or pooler configuration never
reaches disk. Standard library only (it runs before the virtualenv is needed).
"""

import os
import re
import sys
from pathlib import Path

PLACEHOLDER = re.compile(r"@([A-Z][A-Z0-9_]*)@")


def main(template: str, output: str) -> int:
    text = Path(template).read_text()
    missing = sorted({name for name in PLACEHOLDER.findall(text) if name not in os.environ})
    if missing:
        print(f"render.py: {template}: set {', '.join(missing)}", file=sys.stderr)
        return 1
    rendered = PLACEHOLDER.sub(lambda match: os.environ[match[1]], text)
    target = Path(output)
    partial = target.with_name(target.name + ".new")
    partial.write_text(rendered)
    partial.replace(target)  # atomic: a reload never reads half a file
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
