#!/usr/bin/env bash
# `make cluster-down`: stop what `make cluster` (up.sh) started, and nothing else: each process
# named by a pid file of CLUSTER_DIR whose program is still the one started there (a pid the
# system gave to another program since is left alone). nginx, the gunicorn instances (the
# terminals' and the others'), the worker and beat together, then the cluster's Redis and
# pgbouncer. SIGTERM (each stops gracefully), SIGKILL to whatever of its process group is still
# there after 30 s. PostgreSQL is the machine's service and stays up, but for the Patroni pair of
# `make cluster HA=1`, which is the cluster's own and stops with it. The files (logs, secrets,
# configuration, anchors, the pair's data) stay too.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
CLUSTER_DIR=${CLUSTER_DIR:-var/cluster}
[ -d "$CLUSTER_DIR" ] || { echo "cluster: nothing to stop ($CLUSTER_DIR does not exist)"; exit 0; }

# alive PID: running (a zombie holds no port or file: it is gone for us)
alive() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# stop NAME PROGRAM
stop() {
    local pidfile=$CLUSTER_DIR/$1.pid pid group
    if [ ! -s "$pidfile" ]; then
        return 0
    fi
    pid=$(cat "$pidfile")
    if ! { [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$2"; }; then
        echo "cluster: $1 was not running"
        rm -f "$pidfile"
        return 0
    fi
    # Its process group, when it leads one (setsid): gunicorn's and celery's workers with it.
    group=$(awk '{print $5}' "/proc/$pid/stat" 2>/dev/null || true)
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do
        alive "$pid" || break
        sleep 0.1
    done
    if alive "$pid"; then
        echo "cluster: $1 (pid $pid) ignored SIGTERM for 30 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    if [ "$group" = "$pid" ]; then
        kill -KILL -- "-$pid" 2>/dev/null || true  # orphans of a killed master, if any
    fi
    rm -f "$pidfile"
    echo "cluster: $1 stopped (pid $pid)"
}

# nginx, the instances, the worker and beat at once (each stops on its own); Redis and pgbouncer
# last, so nothing that still finishes a request or a task loses its database or its broker.
stop nginx nginx &
for pidfile in "$CLUSTER_DIR"/web-*.pid "$CLUSTER_DIR"/terminals-*.pid; do
    [ -e "$pidfile" ] || continue
    name=$(basename "$pidfile" .pid)
    stop "$name" gunicorn &
done
stop worker "celery.*worker" &
stop beat "celery.*beat" &
wait
stop redis redis-server &
stop pgbouncer pgbouncer &
wait
if [ ! -d "$CLUSTER_DIR/ha" ]; then
    echo "cluster: stopped (PostgreSQL left running; logs in $CLUSTER_DIR)"
    exit 0
fi

# make cluster HA=1's database part (ha-up.sh): HAProxy, then both Patroni agents (each stops its
# PostgreSQL, fast, before it exits), then etcd. A PostgreSQL whose agent was killed and never
# came back has no one to stop it: pg_ctl does, as its owner.
stop ha/haproxy haproxy
stop ha/pg1 patroni &
stop ha/pg2 patroni &
wait
for data in "$CLUSTER_DIR"/ha/pg*/data; do
    [ -s "$data/postmaster.pid" ] || continue
    postmaster=$(head -n 1 "$data/postmaster.pid")
    alive "$postmaster" || continue
    runas=()
    if [ "$(id -u)" = 0 ]; then
        owner=$(stat -c %U "$data")
        runas=(setpriv --reuid="$owner" --regid="$owner" --init-groups)
    fi
    "${runas[@]}" "${PG_BIN:-/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -n 1)/bin}/pg_ctl" \
        stop -D "$data" -m fast -w -t 30 >/dev/null
    echo "cluster: PostgreSQL of $data stopped (its agent was gone)"
done
stop ha/etcd etcd
echo "cluster: stopped (the Patroni pair and etcd too; data and logs in $CLUSTER_DIR)"
