#!/usr/bin/env bash
# `make cluster HA=1`, its database part (run by up.sh before anything that needs PostgreSQL):
# PostgreSQL as two nodes under Patroni on this machine, as on two hosts (docs/operations.md
# "High availability"):
#
#   etcd (HA_ETCD_PORT; one member here, three on a club's hosts)
#   Patroni node pg1: PostgreSQL on the first port of HA_PG_PORTS, its REST API on HA_API_PORTS's
#   Patroni node pg2: the same on the second ports; strict synchronous replication between them
#   HAProxy: HA_PRIMARY_PORT -> whichever node Patroni says is the primary (/primary),
#            HA_REPLICA_PORT -> the standby (/replica), the primary only while no standby is healthy
#
# Data, configuration, logs and pids under CLUSTER_DIR/ha (Patroni's nodes as the `postgres`
# system user when run as root: initdb refuses root). Passwords for PostgreSQL's superuser, the
# replication and the rewind users are generated once into CLUSTER_DIR/secrets.env.
# Idempotent: a part already running is left alone. It ends with the cluster's superuser address
# through HAProxy in CLUSTER_DIR/ha/ha.env, which up.sh reads (CLUSTER_PG_URL, the replica port).
# `make cluster-down` (down.sh) stops HAProxy, both agents (each stops its PostgreSQL) and etcd;
# the data stays, so the next `make cluster HA=1` resumes the same pair.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"

CLUSTER_DIR=$(mkdir -p "${CLUSTER_DIR:-var/cluster}" && cd "${CLUSTER_DIR:-var/cluster}" && pwd)
HA_ETCD_PORT=${HA_ETCD_PORT:-2479}
HA_ETCD_PEER_PORT=${HA_ETCD_PEER_PORT:-2480}
HA_PG_PORTS=${HA_PG_PORTS:-5441 5442}
HA_API_PORTS=${HA_API_PORTS:-8011 8012}
HA_PRIMARY_PORT=${HA_PRIMARY_PORT:-5440}
HA_REPLICA_PORT=${HA_REPLICA_PORT:-5439}
# Patroni's timing (etcd's leader key lives HA_TTL s; the agents loop every HA_LOOP_WAIT s):
# a host that vanishes loses its key within HA_TTL; a crashed postmaster fails over at the
# standby's next loop (primary_start_timeout 0).
HA_TTL=${HA_TTL:-10}
HA_LOOP_WAIT=${HA_LOOP_WAIT:-1}
HA_RETRY_TIMEOUT=${HA_RETRY_TIMEOUT:-4}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -V | tail -n 1)/bin}

HA_DIR=$CLUSTER_DIR/ha
log() { echo "cluster: $*"; }
die() { echo "cluster: $*" >&2; exit 1; }
read -r -a pg_ports <<< "$HA_PG_PORTS"
read -r -a api_ports <<< "$HA_API_PORTS"
[ ${#pg_ports[@]} -eq 2 ] && [ ${#api_ports[@]} -eq 2 ] \
    || die "HA_PG_PORTS and HA_API_PORTS name two ports each (one per node)"

export PATH="$PATH:/usr/sbin:/sbin"
deploy/dev/ensure-packages.sh patroni=patroni etcd=etcd-server haproxy=haproxy

mkdir -p "$HA_DIR"
chmod 0755 "$HA_DIR"
secrets_file=$CLUSTER_DIR/secrets.env
touch "$secrets_file" && chmod 0600 "$secrets_file"
if ! grep -q '^PG_SUPERUSER_PASSWORD=' "$secrets_file"; then
    python3 -c 'import secrets
for name in ("PG_SUPERUSER_PASSWORD", "PG_REPLICATION_PASSWORD", "PG_REWIND_PASSWORD"):
    print(f"{name}={secrets.token_hex(24)}")' >> "$secrets_file"
fi
# shellcheck disable=SC1090
. "$secrets_file"
export PG_SUPERUSER_PASSWORD PG_REPLICATION_PASSWORD PG_REWIND_PASSWORD

as_root=$([ "$(id -u)" = 0 ] && echo 1 || true)
running() { # NAME PROGRAM: the pid in HA_DIR/NAME.pid is alive and runs PROGRAM
    local pidfile=$HA_DIR/$1.pid pid
    [ -s "$pidfile" ] || return 1
    pid=$(cat "$pidfile")
    [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$2"
}
wait_until() { # seconds what command...: by the clock, not by the number of probes (a
    # probe can take a second itself, and a caller's own time limit must find this message)
    local seconds=$1 what=$2 deadline=$((SECONDS + $1))
    shift 2
    until "$@"; do
        ((SECONDS < deadline)) || die "$what not ready after $seconds s (logs in $HA_DIR)"
        sleep 0.1
    done
}
http_ok() { # URL: answers 200
    python3 -c 'import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=1).status == 200 else 1)' "$1" \
        2>/dev/null
}

# --- etcd: the consensus store holding Patroni's leader key ------------------------------------
if running etcd etcd; then
    log "etcd already running"
else
    mkdir -p "$HA_DIR/etcd"
    chmod 0700 "$HA_DIR/etcd"
    setsid env -i PATH="$PATH" etcd --name jackpot-etcd --data-dir "$HA_DIR/etcd/data" \
        --listen-client-urls "http://127.0.0.1:$HA_ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$HA_ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
        --initial-cluster "jackpot-etcd=http://127.0.0.1:$HA_ETCD_PEER_PORT" \
        >> "$HA_DIR/etcd.log" 2>&1 < /dev/null &
    echo $! > "$HA_DIR/etcd.pid"
    log "etcd started (127.0.0.1:$HA_ETCD_PORT, log $HA_DIR/etcd.log)"
fi
wait_until 20 "etcd" http_ok "http://127.0.0.1:$HA_ETCD_PORT/health"

# --- two Patroni nodes ---------------------------------------------------------------------------
export PATRONI_SCOPE=jackpot PG_BIN ETCD_HOSTS=127.0.0.1:$HA_ETCD_PORT PG_NETWORK=127.0.0.1/32
export PATRONI_TTL=$HA_TTL PATRONI_LOOP_WAIT=$HA_LOOP_WAIT PATRONI_RETRY_TIMEOUT=$HA_RETRY_TIMEOUT
export PATRONI_WATCHDOG=off
for index in 0 1; do
    name=pg$((index + 1))
    node=$HA_DIR/$name
    export PATRONI_NAME=$name PATRONI_DIR=$node PATRONI_LOG_DIR=$node PG_SOCKET_DIR=$node
    export PG_DATA=$node/data
    export PG_LISTEN=127.0.0.1:${pg_ports[$index]} PG_ADDRESS=127.0.0.1:${pg_ports[$index]}
    export PATRONI_API_LISTEN=127.0.0.1:${api_ports[$index]}
    export PATRONI_API_ADDRESS=127.0.0.1:${api_ports[$index]}
    mkdir -p "$node"
    (umask 077 && python3 deploy/cluster/render.py deploy/patroni/patroni.yml.in "$node/patroni.yml")
    if [ -n "$as_root" ]; then chown -R postgres: "$node"; fi
    chmod 0700 "$node"
    if running "$name" patroni; then
        log "Patroni $name already running"
        continue
    fi
    agent=(patroni "$node/patroni.yml")
    if [ -n "$as_root" ]; then
        agent=(setpriv --reuid=postgres --regid=postgres --init-groups "${agent[@]}")
    fi
    # In the node's directory: the agent, as postgres, could not enter a checkout only its owner
    # may (its processes chdir to where they were started: the pair never formed).
    setsid env -i -C "$node" PATH="$PATH" HOME="$node" LC_ALL=C.UTF-8 "${agent[@]}" \
        >> "$node/agent.log" 2>&1 < /dev/null &
    echo $! > "$HA_DIR/$name.pid"
    log "Patroni $name started (PostgreSQL 127.0.0.1:${pg_ports[$index]}," \
        "REST 127.0.0.1:${api_ports[$index]}, log $node/agent.log)"
done

# Ready when one node leads and the other runs as its synchronous standby.
pair_ready() {
    python3 - "${api_ports[0]}" <<'PY' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/cluster", timeout=1) as answer:
    members = json.load(answer)["members"]
roles = sorted((m["role"], m["state"]) for m in members)
sys.exit(0 if roles == [("leader", "running"), ("sync_standby", "running")] else 1)
PY
}
wait_until "${READY_SECONDS:-120}" "the Patroni pair (a leader and its synchronous standby)" pair_ready

# --- HAProxy: the primary's address and the standby's -----------------------------------------
primary_servers=""
replica_servers=""
for index in 0 1; do
    name=pg$((index + 1))
    primary_servers+="    server $name 127.0.0.1:${pg_ports[$index]} check port ${api_ports[$index]}"$'\n'
    replica_servers+="    server $name 127.0.0.1:${pg_ports[$index]} check port ${api_ports[$index]}"$'\n'
done
for index in 0 1; do
    name=pg$((index + 1))
    replica_servers+="    server $name-as-primary 127.0.0.1:${pg_ports[$index]} backup track jackpot_primary/$name"$'\n'
done
export HAPROXY_DIR=$HA_DIR HAPROXY_PRIMARY_LISTEN=127.0.0.1:$HA_PRIMARY_PORT
export HAPROXY_REPLICA_LISTEN=127.0.0.1:$HA_REPLICA_PORT
export HAPROXY_PRIMARY_SERVERS=$primary_servers HAPROXY_REPLICA_SERVERS=$replica_servers
if [ -n "$as_root" ]; then
    # It binds its ports and its socket, then runs as Debian's haproxy user.
    export HAPROXY_USER=$'    user haproxy\n    group haproxy'
else
    export HAPROXY_USER="    # (not root: runs as $(id -un))"
fi
python3 deploy/cluster/render.py deploy/patroni/haproxy.cfg.in "$HA_DIR/haproxy.cfg"
haproxy -c -q -f "$HA_DIR/haproxy.cfg" || die "haproxy refuses $HA_DIR/haproxy.cfg"
if running haproxy haproxy; then
    log "HAProxy already running"
else
    setsid env -i PATH="$PATH" haproxy -f "$HA_DIR/haproxy.cfg" -db \
        >> "$HA_DIR/haproxy.log" 2>&1 < /dev/null &
    echo $! > "$HA_DIR/haproxy.pid"
    log "HAProxy started (primary 127.0.0.1:$HA_PRIMARY_PORT, standby 127.0.0.1:$HA_REPLICA_PORT)"
fi
superuser_url="postgres://postgres:$PG_SUPERUSER_PASSWORD@127.0.0.1:$HA_PRIMARY_PORT/postgres"
primary_answers() {
    psql "$superuser_url" -X -q -t -A -c "SELECT pg_is_in_recovery()" 2>/dev/null | grep -qx f
}
wait_until 30 "the primary through HAProxy" primary_answers

(
    umask 077
    cat > "$HA_DIR/ha.env" <<ENV
CLUSTER_PG_URL=$superuser_url
HA_PRIMARY_PORT=$HA_PRIMARY_PORT
HA_REPLICA_PORT=$HA_REPLICA_PORT
ENV
)
