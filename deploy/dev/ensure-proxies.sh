#!/usr/bin/env bash
# make cluster and make test: the topology's proxy and pooler are Debian's nginx and pgbouncer
# (and openssl, which makes the terminals' test certificates). Install what is missing when we
# may (root with apt-get); otherwise say exactly what is missing. Their packaged services may
# start; ours run apart, each with its own configuration (deploy/cluster/up.sh).
set -euo pipefail

export PATH="$PATH:/usr/sbin:/sbin"
missing=()
command -v nginx >/dev/null || missing+=(nginx)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
command -v openssl >/dev/null || missing+=(openssl)
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
