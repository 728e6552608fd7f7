#!/usr/bin/env bash
# The backup-restore drill (compliance requirement 30; docs/operations.md, "Backups and the
# restore drill"): restore a backup into an empty scratch database, print its figures, run the
# start-up self-check against it and, given the figures printed when the backup was taken,
# compare them.
#
#   DATABASE_URL=postgres://OWNER@HOST:5432/postgres \
#       deploy/restore-drill.sh BACKUP_FILE SCRATCH_DB_NAME [FIGURES_AT_BACKUP.json]
#
# BACKUP_FILE: a `pg_dump --format=custom` file. SCRATCH_DB_NAME: a database that must not exist
# yet (it is made here, empty, on DATABASE_URL's server; never restore over a database).
# DATABASE_URL: the server, as a role that may create databases and own the restored objects.
# FIGURES_AT_BACKUP.json: `manage.py book_figures --json` taken with the backup.
# The rest of the service's environment (DJANGO_SETTINGS_MODULE, JACKPOT_CONFIG_SHA256,
# JACKPOT_CODE_SHA256...) is used as it is. PYTHON: the service's interpreter (default:
# .venv/bin/python beside deploy/).
# PG_RESTORE_OPTIONS: more pg_restore options (e.g. "--no-owner --no-acl" on a server without
# the service's roles).
#
# Exit status: 0 the backup restores, verifies and (given them) reproduces the figures; 1 the
# self-check failed; 2 a usage or restore error; 3 the figures differ. The scratch database is
# left for inspection: drop it with the dropdb line printed at the end.
set -euo pipefail

die() { echo "restore-drill: $*" >&2; exit 2; }

[[ $# -eq 2 || $# -eq 3 ]] || die "usage: $0 BACKUP_FILE SCRATCH_DB_NAME [FIGURES_AT_BACKUP.json]"
backup=$1
scratch=$2
expected=${3:-}
[[ -r $backup ]] || die "cannot read the backup $backup"
[[ -z $expected || -r $expected ]] || die "cannot read the figures $expected"
[[ $scratch =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "SCRATCH_DB_NAME: lower-case letters, digits, _"
: "${DATABASE_URL:?DATABASE_URL: the server to restore on, e.g. postgres://OWNER@HOST:5432/postgres}"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
scratch_url=$("$python" -c '
import sys
from urllib.parse import urlsplit, urlunsplit
print(urlunsplit(urlsplit(sys.argv[1])._replace(path="/" + sys.argv[2])))
' "$DATABASE_URL" "$scratch")

echo "== 1. an empty database: $scratch"
createdb --maintenance-db="$DATABASE_URL" "$scratch" || die "could not create $scratch (it must not exist)"

echo "== 2. pg_restore --exit-on-error $backup"
# shellcheck disable=SC2086  # PG_RESTORE_OPTIONS is a list of options
pg_restore --exit-on-error ${PG_RESTORE_OPTIONS:-} --dbname="$scratch_url" "$backup" \
    || die "pg_restore failed: $scratch holds a partial restore"

manage() {
    (cd "$root" && DATABASE_URL="$scratch_url" DATABASE_STATEMENT_TIMEOUT_MS=0 "$python" manage.py "$@")
}

# The figures first, as restored: the self-check records the code's check on the `admin` chain
# (compliance 59), which would move that chain's head past the backup's.
echo "== 3. its figures, as restored"
figures=$(mktemp)
at_backup=$(mktemp)
trap 'rm -f "$figures" "$at_backup"' EXIT
manage book_figures
manage book_figures --json > "$figures"

echo "== 4. the start-up self-check against it"
status=0
manage selfcheck || status=1

if [[ -n $expected ]]; then
    echo "== 5. compared with the figures at the backup, $expected"
    # Both as sorted JSON, one value a line: equal figures, equal text
    normal='import json, sys; print(json.dumps(json.load(sys.stdin), indent=2, sort_keys=True))'
    "$python" -c "$normal" < "$expected" > "$at_backup" || die "$expected is not JSON"
    "$python" -c "$normal" < "$figures" > "$figures.n" && mv "$figures.n" "$figures"
    if diff -u --label at-backup --label restored "$at_backup" "$figures"; then
        echo "figures equal: meter, hit count, awards won and chain heads of every pool"
    else
        echo "FIGURES DIFFER from those at the backup (above: - at the backup, + restored)"
        [[ $status -ne 0 ]] || status=3
    fi
fi

if [[ $status -eq 0 ]]; then
    echo "restore drill passed"
else
    echo "restore drill FAILED"
fi
echo "drop the scratch database with: dropdb --maintenance-db=\"\$DATABASE_URL\" --force $scratch"
exit $status
