#!/usr/bin/env bash
# ensure-packages.sh COMMAND=PACKAGE...: each COMMAND on the PATH, or its Debian PACKAGE installed
# when we may (root with apt-get); otherwise say exactly what is missing and fail. Their
# packaged services may start; ours run apart, each with its own configuration.
#   make test, make cluster:  nginx=nginx pgbouncer=pgbouncer openssl=openssl (the default: the
#                             proxy, the pooler, the terminals' test certificates)
#   make cluster HA=1:        patroni=patroni etcd=etcd-server haproxy=haproxy (deploy/cluster/ha-up.sh)
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"
[ $# -gt 0 ] || set -- nginx=nginx pgbouncer=pgbouncer openssl=openssl
missing=()
for pair in "$@"; do
    command -v "${pair%%=*}" >/dev/null || missing+=("${pair#*=}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "Installing ${missing[*]} (apt-get)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null \
        || { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
    exit 0
fi
echo "${missing[*]} missing: as root, apt-get install ${missing[*]}" >&2
exit 1
