#!/usr/bin/env bash
# `make cluster`: the production topology on this machine (docs/operations.md "Topology").
#
#   nginx (PUBLIC_LISTEN; /metrics only on METRICS_LISTEN)
#     -> the terminals' round API: gunicorn instances of their own, one per port of TERMINAL_PORTS
#        (TERMINAL_WORKERS each; the staff's instances only as nginx's backup when none answers)
#     -> everything else (staff, signs, pages, the schema): one per port of WEB_PORTS (WEB_WORKERS
#        each); all run deploy/gunicorn.conf.py
#        -> pgbouncer (PGBOUNCER_PORT, transaction pooling) -> PostgreSQL (CLUSTER_PG_URL; with
#           HA=1, HAProxy -> the primary of a Patroni pair of the cluster's own: ha-up.sh)
#        -> Redis of its own (REDIS_PORT, a password per user: deploy/redis) <- a Celery worker
#           and beat (through pgbouncer too)
#
# Idempotent: a part already running (its pid file names a live process of the right program) is
# left alone, a missing one is started; configuration is rendered again each time (nginx reloads
# it). `make cluster-down` (down.sh) stops exactly the processes whose pid files this writes.
# PostgreSQL is the machine's service: started if installed and stopped
# (deploy/dev/ensure-services.sh, as `make test` does), never stopped by cluster-down. Redis is the
# cluster's own redis-server (REDIS_PORT, files in CLUSTER_DIR/redis), with an ACL: the default
# user off, the service's user `jackpot` without the dangerous commands, `operator` for the
# operator; their passwords are generated into CLUSTER_DIR/secrets.env, the ACL file holds only
# their SHA-256.
#
# The anchors of the journal (docs/operations.md "Anchors of the journal"): each `make cluster`
# writes one into CLUSTER_DIR/anchors (directory 0750, files 0640, umask 027), which the service
# reads (JOURNAL_ANCHOR_DIR: every reconciliation checks the chains against them). On a server
# their writer is another system user and the service cannot write them; here every process is
# this one user, who could: ANCHORS_SEPARATE_USER=0 tells the start-up self-check so, and it then
# checks the modes alone.
#
# The database: CLUSTER_DATABASE on the server of CLUSTER_PG_URL (a superuser's address), owned by
# the role CLUSTER_DATABASE_owner, served to the application as CLUSTER_DATABASE_app
# (deploy/postgres-roles.sql, with generated passwords kept in CLUSTER_DIR/secrets.env). The
# migrations run as the owner straight to PostgreSQL, then grant_app_role; the web, the worker and
# beat connect through pgbouncer as the application role. Nothing is written outside the project
# but what apt-get installs (as root, when nginx or pgbouncer is missing).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

# --- what can be set (the defaults make the cluster of docs/operations.md) --------------------
CLUSTER_DIR=$(mkdir -p "${CLUSTER_DIR:-var/cluster}" && cd "${CLUSTER_DIR:-var/cluster}" && pwd)
CLUSTER_PG_URL=${CLUSTER_PG_URL:-postgres://postgres@127.0.0.1:5432/postgres}
CLUSTER_DATABASE=${CLUSTER_DATABASE:-jackpot_cluster}
REDIS_PORT=${REDIS_PORT:-6380}
PUBLIC_LISTEN=${PUBLIC_LISTEN:-127.0.0.1:8080}
METRICS_LISTEN=${METRICS_LISTEN:-127.0.0.1:9180}
METRICS_ALLOW=${METRICS_ALLOW:-127.0.0.1 ::1}        # addresses or CIDRs, space-separated
REQUEST_ID_TRUSTED=${REQUEST_ID_TRUSTED:-}            # CIDRs whose X-Request-ID is kept
# Terminals held to client certificates (deploy/nginx/terminals-tls.conf.in): a TLS listener of
# their own, with this server certificate and key and the club's terminal CA; the service then
# refuses a terminal anywhere else (TERMINAL_CLIENT_CERTIFICATES=1). Empty: no such listener.
TERMINAL_TLS_LISTEN=${TERMINAL_TLS_LISTEN:-}
TERMINAL_TLS_CERT=${TERMINAL_TLS_CERT:-}
TERMINAL_TLS_KEY=${TERMINAL_TLS_KEY:-}
TERMINAL_CLIENT_CA=${TERMINAL_CLIENT_CA:-}
PGBOUNCER_PORT=${PGBOUNCER_PORT:-6432}
WEB_PORTS=${WEB_PORTS:-8001 8002}
WEB_WORKERS=${WEB_WORKERS:-2}
TERMINAL_PORTS=${TERMINAL_PORTS:-8003}
TERMINAL_WORKERS=${TERMINAL_WORKERS:-3}
# The CPU goes to the terminals first: the other instances, the worker and beat run at this
# niceness (0 to share it evenly), the terminals' at 0 (jackpot-terminals@.service's CPUWeight).
STAFF_NICE=${STAFF_NICE:-10}
# How long a started process may take to answer (a gunicorn instance's start-up self-check, the
# Patroni pair's first election) before this gives up: longer on a machine busy with other work.
READY_SECONDS=${READY_SECONDS:-120}
WORKER_CONCURRENCY=${WORKER_CONCURRENCY:-2}
CLUSTER_ALLOWED_HOSTS=${CLUSTER_ALLOWED_HOSTS:-127.0.0.1,localhost,jackpot.club.internal}
VENV=${VENV:-$ROOT/.venv}

log() { echo "cluster: $*"; }
die() { echo "cluster: $*" >&2; exit 1; }
[[ "$CLUSTER_DATABASE" =~ ^[a-z_][a-z0-9_]*$ ]] || die "CLUSTER_DATABASE must be a plain name"
[ -x "$VENV/bin/python" ] || die "no virtualenv at $VENV: run make install (make cluster does)"

# --- Debian's nginx and pgbouncer, installed when missing ---------------------------------------
export PATH="$PATH:/usr/sbin:/sbin"
deploy/dev/ensure-packages.sh

# --- PostgreSQL answers (Redis is ours, below) ------------------------------------------------
# HA=1: the cluster's own PostgreSQL pair under Patroni, reached through HAProxy (ha-up.sh); its
# superuser's address through HAProxy replaces CLUSTER_PG_URL, and the auditors' heavy reads go to
# the standby (DATABASE_REPLICA_URL, for the staff's instances and the worker only).
HA=${HA:-0}
if [ "$HA" = 1 ]; then
    CLUSTER_DIR=$CLUSTER_DIR READY_SECONDS=$READY_SECONDS deploy/cluster/ha-up.sh
    # shellcheck disable=SC1091
    . "$CLUSTER_DIR/ha/ha.env"
else
    DATABASE_URL=$CLUSTER_PG_URL REDIS_URL= deploy/dev/ensure-services.sh >/dev/null
fi
read -r PG_HOST PG_PORT < <(python3 -c '
import sys; from urllib.parse import urlsplit
u = urlsplit(sys.argv[1]); print(u.hostname or "127.0.0.1", u.port or 5432)' "$CLUSTER_PG_URL")

# --- secrets: made once, kept (the journal verifies only under the key it was written with) ----
secrets_file=$CLUSTER_DIR/secrets.env
if ! grep -qs '^SECRET_KEY=' "$secrets_file"; then
    (
        umask 077
        python3 - >> "$secrets_file" <<'PY'
import secrets
print(f"SECRET_KEY={secrets.token_urlsafe(50)}")
print(f"JOURNAL_HMAC_KEY={secrets.token_urlsafe(48)}")
print(f"OWNER_PASSWORD={secrets.token_hex(24)}")
print(f"APP_PASSWORD={secrets.token_hex(24)}")
PY
    )
fi
# The winners' identities' key, added to a secrets file made before it existed.
if ! grep -q '^WINNER_IDENTITY_KEYS=' "$secrets_file"; then
    python3 -c 'import base64, secrets
print(f"WINNER_IDENTITY_KEYS={base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()}")' >> "$secrets_file"
fi
# Redis's two users, added to a secrets file made before they existed.
if ! grep -q '^REDIS_PASSWORD=' "$secrets_file"; then
    python3 -c 'import secrets
print(f"REDIS_PASSWORD={secrets.token_hex(24)}")
print(f"REDIS_OPERATOR_PASSWORD={secrets.token_hex(24)}")' >> "$secrets_file"
fi
# shellcheck disable=SC1090
. "$secrets_file"
# A caller may hand its own journal key (the drills: their checks run with it).
JOURNAL_HMAC_KEY=${CLUSTER_JOURNAL_HMAC_KEY:-$JOURNAL_HMAC_KEY}
OWNER=${CLUSTER_DATABASE}_owner
APP=${CLUSTER_DATABASE}_app

# --- the database and its two roles (deploy/postgres-roles.sql, without the prompts) ----------
psql_admin() { psql "$CLUSTER_PG_URL" -X -q -v ON_ERROR_STOP=1 "$@"; }
psql_admin >/dev/null <<SQL
SELECT format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', '$OWNER')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$OWNER') \gexec
SELECT format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT', '$APP')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$APP') \gexec
-- This machine's generated passwords (secrets.env), for a local cluster; on a server the roles'
-- passwords are set at postgres-roles.sql's prompts, which send only their SCRAM hash.
ALTER ROLE $OWNER PASSWORD '$OWNER_PASSWORD';
ALTER ROLE $APP PASSWORD '$APP_PASSWORD';
SELECT format('CREATE DATABASE %I OWNER %I', '$CLUSTER_DATABASE', '$OWNER')
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$CLUSTER_DATABASE') \gexec
REVOKE ALL ON DATABASE $CLUSTER_DATABASE FROM PUBLIC;
GRANT CONNECT ON DATABASE $CLUSTER_DATABASE TO $APP;
-- Behind pgbouncer the limits cannot come with the connection: the role's defaults bound every
-- statement (config/settings/databases.py, DATABASE_POOLER), and UTC spares Django's SET TIME ZONE.
ALTER ROLE $APP IN DATABASE $CLUSTER_DATABASE SET statement_timeout = '1500ms';
ALTER ROLE $APP IN DATABASE $CLUSTER_DATABASE SET lock_timeout = '1000ms';
ALTER ROLE $APP IN DATABASE $CLUSTER_DATABASE SET TimeZone = 'UTC';
\connect $CLUSTER_DATABASE
ALTER SCHEMA public OWNER TO $OWNER;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO $APP;
SQL

# --- the service's environment (what /etc/jackpot/env holds on a server) ----------------------
env_file=$CLUSTER_DIR/env
write_env() {
    cat <<ENV
DJANGO_SETTINGS_MODULE=config.settings.production
SECRET_KEY=$SECRET_KEY
JOURNAL_HMAC_KEY=$JOURNAL_HMAC_KEY
WINNER_IDENTITY_KEYS=$WINNER_IDENTITY_KEYS
ALLOWED_HOSTS=$CLUSTER_ALLOWED_HOSTS
DATABASE_URL=postgres://$APP:$APP_PASSWORD@127.0.0.1:$PGBOUNCER_PORT/$CLUSTER_DATABASE
DATABASE_POOLER=transaction
REDIS_URL=redis://jackpot:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT/0
DATABASE_COMMIT_TIMEOUT_MS=$([ "$HA" = 1 ] && echo 200 || echo 0)
DATABASE_REPLICA_URL=$([ "$HA" = 1 ] && echo "postgres://$APP:$APP_PASSWORD@127.0.0.1:$HA_REPLICA_PORT/$CLUSTER_DATABASE?application_name=jackpot-replica-reads")
JOURNAL_ANCHOR_DIR=$CLUSTER_DIR/anchors
ANCHORS_SEPARATE_USER=0
SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto
SECURE_SSL_REDIRECT=0
SECURE_COOKIES=0
NUM_PROXIES=1
SECURITY_LOG=stderr
EXPORT_DIR=$CLUSTER_DIR/exports
BEAT_SCHEDULE_FILE=$CLUSTER_DIR/celerybeat-schedule
LOG_LEVEL=${LOG_LEVEL:-INFO}
LOG_FORMAT=json
TERMINAL_CLIENT_CERTIFICATES=$([ -n "$TERMINAL_TLS_LISTEN" ] && echo 1 || echo 0)
PATH=$PATH
HOME=${HOME:-/tmp}
ENV
    # Any other setting the caller passes with a CLUSTER_SET_ prefix (CLUSTER_SET_THROTTLE_TERMINAL).
    env | sed -n 's/^CLUSTER_SET_//p'
}
(umask 077 && write_env > "$env_file.new" && mv "$env_file.new" "$env_file")
mapfile -t service_env < <(grep -v '^#' "$env_file")
run_env() { env -i "${service_env[@]}" "$@"; }
owner_url="postgres://$OWNER:$OWNER_PASSWORD@$PG_HOST:$PG_PORT/$CLUSTER_DATABASE"

# --- migrations: once per `make cluster`, as the owner, straight to PostgreSQL ------------------
# migrate, then grant_app_role (jackpot-migrate.service's two steps), then the configuration
# checksum and the code's digest production requires to be pinned: on a server the operator pins
# them after review; here this build's own are approved, computed now from the files being run,
# unless JACKPOT_CONFIG_SHA256 or JACKPOT_CODE_SHA256 is given; then an anchor of the
# journal (jackpot-anchor.service's step), umask 027: the directory 0750, the files 0640. One
# Python process for the four (each would pay Django's start again). No statement or commit limit:
# a migration's COMMIT waits for the synchronous standby however long it takes (with HA=1 the
# service's 200 ms limit once cancelled one on a busy pair, and `make cluster` failed).
log "migrating $CLUSTER_DATABASE as $OWNER (direct to $PG_HOST:$PG_PORT)"
run_env DATABASE_URL="$owner_url" DATABASE_POOLER= DATABASE_STATEMENT_TIMEOUT_MS=0 \
    DATABASE_COMMIT_TIMEOUT_MS=0 APP_ROLE="$APP" "$VENV/bin/python" - \
    > "$CLUSTER_DIR/migrate.log" 2>&1 <<'PY' \
    || die "migrate or grant_app_role failed: $CLUSTER_DIR/migrate.log"
import io, os, django
django.setup()
from django.core.management import call_command
call_command("migrate", interactive=False)
call_command("grant_app_role", os.environ["APP_ROLE"])
checksum = io.StringIO()
call_command("selfcheck", print_checksum=True, stdout=checksum)
print(f"approved checksum: {checksum.getvalue().strip()}")
code = io.StringIO()
call_command("code_digest", stdout=code)
print(f"approved code digest: {code.getvalue().strip()}")
os.umask(0o027)
call_command("anchor_journal", "--out", os.environ["JOURNAL_ANCHOR_DIR"])
PY
if [ -z "${JACKPOT_CONFIG_SHA256:-}" ]; then
    JACKPOT_CONFIG_SHA256=$(sed -n 's/^approved checksum: //p' "$CLUSTER_DIR/migrate.log")
fi
echo "JACKPOT_CONFIG_SHA256=$JACKPOT_CONFIG_SHA256" >> "$env_file"
service_env+=("JACKPOT_CONFIG_SHA256=$JACKPOT_CONFIG_SHA256")
if [ -z "${JACKPOT_CODE_SHA256:-}" ]; then
    JACKPOT_CODE_SHA256=$(sed -n 's/^approved code digest: //p' "$CLUSTER_DIR/migrate.log")
fi
echo "JACKPOT_CODE_SHA256=$JACKPOT_CODE_SHA256" >> "$env_file"
service_env+=("JACKPOT_CODE_SHA256=$JACKPOT_CODE_SHA256")
mkdir -p "$CLUSTER_DIR/exports"

# --- processes ---------------------------------------------------------------------------------
# running NAME PROGRAM: the pid in CLUSTER_DIR/NAME.pid is alive and runs PROGRAM.
running() {
    local pidfile=$CLUSTER_DIR/$1.pid pid
    [ -s "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$2"
}
# start NAME PROGRAM NICENESS [VAR=VALUE...] COMMAND...: with the service's environment and
# nothing else (as systemd's EnvironmentFile), in a session of its own (a Ctrl-C to make does not
# reach it; a drill can kill its whole group), output to NAME.log, pid to NAME.pid (setsid, nice
# and env exec it). NICENESS is set twice: nice(1), and the session's scheduling group
# (/proc/PID/autogroup: with the kernel's autogroups on, a process's nice weighs only against its
# own session's, and each of these is a session of its own).
start() {
    local name=$1 program=$2 niceness=$3
    shift 3
    if running "$name" "$program"; then
        log "$name already running (pid $(cat "$CLUSTER_DIR/$name.pid"))"
        return 0
    fi
    setsid nice -n "$niceness" env -i "${service_env[@]}" "$@" \
        >> "$CLUSTER_DIR/$name.log" 2>&1 < /dev/null &
    echo $! > "$CLUSTER_DIR/$name.pid"
    if [ -w "/proc/$!/autogroup" ]; then echo "$niceness" > "/proc/$!/autogroup" || true; fi
    log "$name started (pid $!, nice $niceness, log $CLUSTER_DIR/$name.log)"
}
answers() { python3 -c "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()" "$1" "$2" 2>/dev/null; }
healthy() { # port: /healthz answers 200
    python3 - "$1" <<'PY' 2>/dev/null
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=2)
c.request("GET", "/healthz", headers={"Host": "127.0.0.1"})
sys.exit(0 if c.getresponse().status == 200 else 1)
PY
}
wait_until() { # seconds what command...: by the clock, not by the number of probes (a
    # probe can take a second itself, and a caller's own time limit must find this message)
    local seconds=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        ((SECONDS < deadline)) || die "$what not ready after $seconds s (logs in $CLUSTER_DIR)"
        sleep 0.1
    done
}
as_root=$([ "$(id -u)" = 0 ] && echo 1 || true)

# pgbouncer refuses to run as root: as root it runs as postgres, in a directory postgres owns.
export PGBOUNCER_DIR=$CLUSTER_DIR/pgbouncer PGBOUNCER_HOST=127.0.0.1 PGBOUNCER_PORT PG_HOST PG_PORT
export DATABASE_NAME=$CLUSTER_DATABASE
mkdir -p "$PGBOUNCER_DIR"
(umask 077 && printf '"%s" "%s"\n' "$APP" "$APP_PASSWORD" > "$PGBOUNCER_DIR/userlist.txt")
python3 deploy/cluster/render.py deploy/pgbouncer/pgbouncer.ini.in "$PGBOUNCER_DIR/pgbouncer.ini"
pgbouncer_user=()
if [ -n "$as_root" ]; then
    chown -R postgres: "$PGBOUNCER_DIR"
    pgbouncer_user=(-u postgres)
fi
ln -sf pgbouncer/pgbouncer.pid "$CLUSTER_DIR/pgbouncer.pid"
ln -sf pgbouncer/pgbouncer.log "$CLUSTER_DIR/pgbouncer.log"
if running pgbouncer pgbouncer; then
    log "pgbouncer already running; reloading its configuration"
    kill -HUP "$(cat "$CLUSTER_DIR/pgbouncer.pid")"
else
    rm -f "$PGBOUNCER_DIR/pgbouncer.pid"
    pgbouncer -d "${pgbouncer_user[@]}" "$PGBOUNCER_DIR/pgbouncer.ini"
    log "pgbouncer started (127.0.0.1:$PGBOUNCER_PORT, log $PGBOUNCER_DIR/pgbouncer.log)"
fi
wait_until 10 "pgbouncer" answers 127.0.0.1 "$PGBOUNCER_PORT"

# Redis: its configuration and ACL file rendered (deploy/redis), passwords only as SHA-256 there.
# Run with nothing of the service's environment. It writes its own pid file (redis.conf), the
# one cluster-down and the drills read.
export REDIS_DIR=$CLUSTER_DIR/redis REDIS_BIND=127.0.0.1 REDIS_PORT
REDIS_PASSWORD_SHA256=$(printf '%s' "$REDIS_PASSWORD" | sha256sum | cut -d' ' -f1)
REDIS_OPERATOR_PASSWORD_SHA256=$(printf '%s' "$REDIS_OPERATOR_PASSWORD" | sha256sum | cut -d' ' -f1)
export REDIS_PASSWORD_SHA256 REDIS_OPERATOR_PASSWORD_SHA256
mkdir -p "$REDIS_DIR"
chmod 0700 "$REDIS_DIR"
python3 deploy/cluster/render.py deploy/redis/redis.conf.in "$REDIS_DIR/redis.conf"
(umask 077 && python3 deploy/cluster/render.py deploy/redis/users.acl.in "$REDIS_DIR/users.acl")
ln -sf redis/redis.pid "$CLUSTER_DIR/redis.pid"
redis_answers() { # PONG to the service's user
    python3 - "$REDIS_PORT" "$REDIS_PASSWORD" <<'PY' 2>/dev/null
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1) as sock:
    sock.sendall(f"AUTH jackpot {sys.argv[2]}\r\nPING\r\n".encode())
    answer = b""
    while answer.count(b"\r\n") < 2:
        answer += sock.recv(64) or sys.exit(1)
sys.exit(0 if answer == b"+OK\r\n+PONG\r\n" else 1)
PY
}
if running redis redis-server; then
    log "redis already running; reloading its users"
    redis-cli -p "$REDIS_PORT" --user operator --pass "$REDIS_OPERATOR_PASSWORD" --no-auth-warning \
        ACL LOAD >/dev/null
else
    setsid env -i PATH="$PATH" redis-server "$REDIS_DIR/redis.conf" \
        >> "$CLUSTER_DIR/redis.log" 2>&1 < /dev/null &
    log "redis started (127.0.0.1:$REDIS_PORT, log $CLUSTER_DIR/redis.log)"
fi
wait_until 10 "redis" redis_answers

# Metrics (core.metrics): each process group writes its own directory, emptied by its master at
# start; each instance's /metrics adds the others' and the worker's, so any one answers for all.
metrics_dir=$CLUSTER_DIR/metrics
mkdir -p "$metrics_dir/worker"
for port in $WEB_PORTS; do mkdir -p "$metrics_dir/web-$port"; done
for port in $TERMINAL_PORTS; do mkdir -p "$metrics_dir/terminals-$port"; done
others() { # the metrics directories but $1's, comma-separated
    local dir list=""
    for dir in "$metrics_dir"/*; do [ "$dir" = "$metrics_dir/$1" ] || list+="${list:+,}$dir"; done
    echo "$list"
}
# Gunicorn instances: each runs the start-up self-check before it binds (deploy/gunicorn.conf.py).
# The terminals' (jackpot-terminals@PORT on a server) and the others' (jackpot-web@PORT) run the
# same program: nginx's routing tells them apart, and the others' lower CPU priority. The
# terminals' never read a replica: what a terminal reads is the primary's (no replica address).
for port in $TERMINAL_PORTS; do
    start "terminals-$port" gunicorn 0 BIND="127.0.0.1:$port" WEB_WORKERS="$TERMINAL_WORKERS" \
        DATABASE_REPLICA_URL= \
        PROMETHEUS_MULTIPROC_DIR="$metrics_dir/terminals-$port" \
        METRICS_EXTRA_DIRS="$(others "terminals-$port")" \
        "$VENV/bin/gunicorn" -c deploy/gunicorn.conf.py config.wsgi
done
for port in $WEB_PORTS; do
    start "web-$port" gunicorn "$STAFF_NICE" BIND="127.0.0.1:$port" WEB_WORKERS="$WEB_WORKERS" \
        PROMETHEUS_MULTIPROC_DIR="$metrics_dir/web-$port" METRICS_EXTRA_DIRS="$(others "web-$port")" \
        "$VENV/bin/gunicorn" -c deploy/gunicorn.conf.py config.wsgi
done
# The worker: the unit's longer statement limit for exports (deploy/systemd/jackpot-worker.service).
start worker "celery.*worker" "$STAFF_NICE" DATABASE_STATEMENT_TIMEOUT_MS=300000 \
    PROMETHEUS_MULTIPROC_DIR="$metrics_dir/worker" \
    "$VENV/bin/celery" -A config worker --loglevel=INFO --concurrency="$WORKER_CONCURRENCY" \
    --hostname "worker@$CLUSTER_DATABASE"
start beat "celery.*beat" "$STAFF_NICE" "$VENV/bin/celery" -A config beat --loglevel=INFO \
    --pidfile= --schedule "$CLUSTER_DIR/celerybeat-schedule"

# nginx: its own main file (pid, logs, temporary files here), the site file of deploy/nginx.
# The terminals' upstream: their instances, then the others as `backup` (used only while none of
# the terminals' answers: a restart or a crash never closes the floor).
upstream=""
terminal_upstream=""
for port in $TERMINAL_PORTS; do
    terminal_upstream+="    server 127.0.0.1:$port max_fails=1 fail_timeout=5s;"$'\n'
done
for port in $WEB_PORTS; do
    upstream+="    server 127.0.0.1:$port max_fails=1 fail_timeout=5s;"$'\n'
    terminal_upstream+="    server 127.0.0.1:$port max_fails=1 fail_timeout=5s backup;"$'\n'
done
trusted=""
for cidr in $REQUEST_ID_TRUSTED; do trusted+="    $cidr 1;"$'\n'; done
allow=""
for address in $METRICS_ALLOW; do allow+="    allow $address;"$'\n'; done
export UPSTREAM_SERVERS=$upstream TERMINAL_UPSTREAM_SERVERS=$terminal_upstream
export REQUEST_ID_TRUSTED_RULES=$trusted METRICS_ALLOW_RULES=$allow
export PUBLIC_LISTEN METRICS_LISTEN CLUSTER_DIR ACCESS_LOG=$CLUSTER_DIR/nginx-access.log
export NGINX_SNIPPETS=$ROOT/deploy/nginx
mkdir -p "$CLUSTER_DIR/nginx-temp"
if [ -n "$as_root" ]; then
    # Workers drop to nobody; they write only the temporary files of buffered bodies.
    export NGINX_USER="user nobody nogroup;"
    chown nobody: "$CLUSTER_DIR/nginx-temp"
else
    export NGINX_USER="# (not root: the workers run as $(id -un))"
fi
python3 deploy/cluster/render.py deploy/nginx/jackpot.conf.in "$CLUSTER_DIR/nginx-jackpot.conf"
if [ -n "$TERMINAL_TLS_LISTEN" ]; then
    export TERMINAL_TLS_LISTEN TERMINAL_TLS_CERT TERMINAL_TLS_KEY TERMINAL_CLIENT_CA
    python3 deploy/cluster/render.py deploy/nginx/terminals-tls.conf.in \
        "$CLUSTER_DIR/nginx-terminals.conf"
else
    echo "# no terminals' TLS listener (TERMINAL_TLS_LISTEN unset)" > "$CLUSTER_DIR/nginx-terminals.conf"
fi
python3 deploy/cluster/render.py deploy/cluster/nginx.conf.in "$CLUSTER_DIR/nginx.conf"
nginx -t -q -e "$CLUSTER_DIR/nginx-error.log" -p "$CLUSTER_DIR" -c "$CLUSTER_DIR/nginx.conf" 2>> "$CLUSTER_DIR/nginx-error.log" \
    || die "nginx refuses its configuration: $CLUSTER_DIR/nginx-error.log"
if running nginx nginx; then
    log "nginx already running; reloading its configuration"
    nginx -e "$CLUSTER_DIR/nginx-error.log" -p "$CLUSTER_DIR" -c "$CLUSTER_DIR/nginx.conf" -s reload
else
    nginx -e "$CLUSTER_DIR/nginx-error.log" -p "$CLUSTER_DIR" -c "$CLUSTER_DIR/nginx.conf"
    log "nginx started (log $CLUSTER_DIR/nginx-access.log, $CLUSTER_DIR/nginx-error.log)"
fi

for port in $TERMINAL_PORTS $WEB_PORTS; do
    wait_until "$READY_SECONDS" "gunicorn on $port" healthy "$port"
done
public_port=${PUBLIC_LISTEN##*:}
public_host=${PUBLIC_LISTEN%:*}
wait_until 10 "nginx" healthy "$public_port"

if [ -n "$TERMINAL_TLS_LISTEN" ]; then
    terminals_tls="https://$TERMINAL_TLS_LISTEN/api/v1/tables/  (client certificates of $TERMINAL_CLIENT_CA)"
else
    terminals_tls="none: terminals post to the service's address (TERMINAL_TLS_LISTEN unset)"
fi
cat <<TEXT

The cluster runs (logs and pids in $CLUSTER_DIR; stop it with make cluster-down):
  the service           http://$public_host:$public_port/  (the API: /api/docs/, the sign: /display/<pool>/)
  metrics (operator)    http://$METRICS_LISTEN/metrics  (allowed: $METRICS_ALLOW)
  terminals (mTLS)      $terminals_tls
  terminals' gunicorn   $(for port in $TERMINAL_PORTS; do printf '127.0.0.1:%s ' "$port"; done)($TERMINAL_WORKERS workers each: /api/v1/tables/<t>/rounds...)
  other gunicorn        $(for port in $WEB_PORTS; do printf '127.0.0.1:%s ' "$port"; done)($WEB_WORKERS workers each: staff, signs, pages; the terminals' backup)
  pgbouncer             127.0.0.1:$PGBOUNCER_PORT/$CLUSTER_DATABASE as $APP (transaction pooling)
  PostgreSQL            $PG_HOST:$PG_PORT/$CLUSTER_DATABASE (owner $OWNER: migrations only)$([ "$HA" = 1 ] && printf '\n  %-21s %s' \
    "" "HAProxy to the primary; the standby (auditors' reads) at 127.0.0.1:$HA_REPLICA_PORT" \
    "Patroni pair" "pg1, pg2 (strict synchronous; logs in $CLUSTER_DIR/ha: patronictl -c $CLUSTER_DIR/ha/pg1/patroni.yml list)")
  Redis                 127.0.0.1:$REDIS_PORT (users jackpot and operator: passwords in $CLUSTER_DIR/secrets.env)
  anchors               $CLUSTER_DIR/anchors (one written by each make cluster)
  Celery                a worker and beat (worker.log, beat.log)
TEXT
