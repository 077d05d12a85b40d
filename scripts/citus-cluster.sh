#!/usr/bin/env bash
# A local Citus cluster for the Citus test suite: a coordinator and two workers, each a Debian
# PostgreSQL cluster (pg_createcluster) on this machine, from the citus extension already
# installed. It never builds or downloads anything.
#
#   scripts/citus-cluster.sh [start]   create (first time) and start the three clusters, add the workers;
#                                      prints the coordinator URL to use as TEST_CITUS_URL
#   scripts/citus-cluster.sh stop      stop them
#   scripts/citus-cluster.sh drop      stop and delete them (data included)
#
# CITUS_PORT (default 9700) is the coordinator's port; the workers take the next two.
# Trust authentication on 127.0.0.1 only: a test cluster, never a production one. Run as root
# (pg_createcluster) or as postgres.
set -euo pipefail

pg_version="${CITUS_PG_VERSION:-$(ls /etc/postgresql | sort -n | tail -n 1)}"
base_port="${CITUS_PORT:-9700}"
names=(ct_citus_coord ct_citus_w1 ct_citus_w2)
ports=("$base_port" "$((base_port + 1))" "$((base_port + 2))")

say() { printf 'citus-cluster: %s\n' "$*" >&2; }
exists() { pg_lsclusters -h | awk -v v="$pg_version" -v n="$1" '$1 == v && $2 == n { found = 1 } END { exit !found }'; }
online() { pg_lsclusters -h | awk -v v="$pg_version" -v n="$1" '$1 == v && $2 == n && $4 ~ /online/ { found = 1 } END { exit !found }'; }
sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -p "$1" -d postgres -Atc "$2"; }

require_citus() {
  local control
  control="$(pg_config --sharedir)/extension/citus.control"
  if [ ! -f "$control" ] || [ ! -f "$(pg_config --pkglibdir)/citus.so" ]; then
    say "the citus extension is not installed for PostgreSQL $pg_version ($control missing); install Citus first. Nothing was done."
    exit 1
  fi
}

create_node() {
  local name="$1" port="$2" conf="/etc/postgresql/$pg_version/$1"
  say "creating cluster $pg_version/$name on port $port"
  pg_createcluster "$pg_version" "$name" --port "$port" >/dev/null
  cat >>"$conf/postgresql.conf" <<EOF

# citus-cluster.sh: a local Citus test node
listen_addresses = '127.0.0.1'
shared_preload_libraries = 'citus'
max_prepared_transactions = 100
shared_buffers = 64MB
fsync = off
synchronous_commit = off
EOF
  cat >"$conf/pg_hba.conf" <<EOF
# citus-cluster.sh: a local test node, trust on loopback only
local all all trust
host  all all 127.0.0.1/32 trust
EOF
}

start() {
  require_citus
  for i in "${!names[@]}"; do
    exists "${names[$i]}" || create_node "${names[$i]}" "${ports[$i]}"
    # pg_ctlcluster may print to stdout (e.g. "Removed stale pid file."): only the URL goes there
    online "${names[$i]}" || pg_ctlcluster --skip-systemctl-redirect "$pg_version" "${names[$i]}" start >&2
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p "$port" && break; sleep 1; done
    pg_isready -q -h 127.0.0.1 -p "$port" || { say "node on port $port did not become ready"; exit 1; }
    sql "$port" "create extension if not exists citus" >/dev/null
  done
  sql "${ports[0]}" "select citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null
  for port in "${ports[@]:1}"; do
    sql "${ports[0]}" "select citus_add_node('127.0.0.1', $port) where not exists (select 1 from pg_dist_node where nodename = '127.0.0.1' and nodeport = $port)" >/dev/null
  done
  say "coordinator on ${ports[0]}, workers on ${ports[1]} and ${ports[2]}: $(sql "${ports[0]}" "select count(*) from citus_get_active_worker_nodes()") active workers, citus $(sql "${ports[0]}" "select extversion from pg_extension where extname = 'citus'")"
  echo "postgres://postgres@127.0.0.1:${ports[0]}/postgres"
}

stop() {
  for name in "${names[@]}"; do
    if online "$name"; then pg_ctlcluster --skip-systemctl-redirect "$pg_version" "$name" stop >&2; say "stopped $name"; fi
  done
}

drop() {
  for name in "${names[@]}"; do
    if exists "$name"; then pg_dropcluster --stop "$pg_version" "$name"; say "dropped $name"; fi
  done
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  drop) drop ;;
  *) say "usage: $0 [start|stop|drop]"; exit 64 ;;
esac
