#!/usr/bin/env bash
# make test: the browser tests drive Debian's Chromium (/usr/bin/chromium, or $CHROMIUM). Install
# it when missing and we may (root with apt-get); otherwise say exactly what is missing. Nothing
# is downloaded by the tests themselves.
set -euo pipefail

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ -x "$chromium" ]; then
    exit 0
fi
if [ -n "${CHROMIUM:-}" ]; then
    echo "CHROMIUM=$CHROMIUM is not an executable file." >&2
    exit 1
fi
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's chromium for the browser tests (apt-get install chromium)..."
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq chromium >/dev/null; then
        apt-get update -qq && apt-get install -y -qq chromium >/dev/null
    fi
    exit 0
fi
echo "The browser tests need Chromium, and it is not installed: as root, 'apt-get install chromium'" >&2
echo "(Debian's package), or set CHROMIUM to a Chromium binary." >&2
exit 1
