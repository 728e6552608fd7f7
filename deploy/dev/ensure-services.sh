#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis named by DATABASE_URL and REDIS_URL answer. When one on this
# machine is installed but stopped, start it; when it is not installed, say so and fail. An empty
# REDIS_URL checks PostgreSQL only (`make cluster` runs a Redis of its own, deploy/cluster/up.sh).
set -euo pipefail

read -r pg_host pg_port redis_host redis_port < <(python3 - <<'PY'
import os
from urllib.parse import urlsplit
db = urlsplit(os.environ["DATABASE_URL"])
rd = urlsplit(os.environ.get("REDIS_URL") or "redis://-:0")
print(db.hostname or "127.0.0.1", db.port or 5432, rd.hostname or "127.0.0.1", rd.port or 6379)
PY
)

answers() { # host port: does something accept TCP connections there?
    python3 -c "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()" "$1" "$2" 2>/dev/null
}
is_local() { [[ "$1" == 127.* || "$1" == localhost || "$1" == ::1 ]]; }
wait_for() { # name host port
    for _ in $(seq 1 50); do answers "$2" "$3" && return 0; sleep 0.2; done
    echo "ensure-services: $1 was started but does not answer on $2:$3" >&2
    exit 1
}

if ! answers "$pg_host" "$pg_port"; then
    if is_local "$pg_host" && command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
        version=$(ls /etc/postgresql | sort -V | tail -n 1)
        echo "ensure-services: starting PostgreSQL $version"
        pg_ctlcluster --skip-systemctl-redirect "$version" main start
        wait_for PostgreSQL "$pg_host" "$pg_port"
    else
        echo "ensure-services: PostgreSQL is not reachable at $pg_host:$pg_port and is not installed" \
             "here (no pg_ctlcluster). Install PostgreSQL 15+ or set DATABASE_URL." >&2
        exit 1
    fi
fi

if [ "$redis_host" = - ]; then
    echo "ensure-services: PostgreSQL at $pg_host:$pg_port answers (no REDIS_URL: Redis not checked)"
    exit 0
fi
if ! answers "$redis_host" "$redis_port"; then
    if is_local "$redis_host" && command -v redis-server >/dev/null; then
        echo "ensure-services: starting Redis"
        mkdir -p /var/lib/redis /var/log/redis
        redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$redis_port" --save "" \
            --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
        wait_for Redis "$redis_host" "$redis_port"
    else
        echo "ensure-services: Redis is not reachable at $redis_host:$redis_port and is not installed" \
             "here (no redis-server). Install Redis 7 or set REDIS_URL." >&2
        exit 1
    fi
fi
echo "ensure-services: PostgreSQL at $pg_host:$pg_port and Redis at $redis_host:$redis_port answer"
