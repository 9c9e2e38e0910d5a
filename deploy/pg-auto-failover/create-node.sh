#!/usr/bin/env bash
# Builds one data node (README.md, step 2). Run as the postgres user on each of the three data
# machines, the first one alone (it becomes the primary and creates the database), then the two
# others (each registers with the monitor and copies the primary with pg_basebackup); start each
# with the systemd unit (pgautofailover.service) once this script returns.
#
#   PGDATA=/var/lib/postgresql/pgaf/node PGAF_HOSTNAME=db1.internal \
#     PGAF_MONITOR='postgres://autoctl_node:…@monitor.internal:5432/pg_auto_failover?sslmode=require' \
#     ./create-node.sh
#
# Variables (pgaf.env.example has them all): PGDATA, PGAF_HOSTNAME, PGAF_MONITOR (required);
# PGPORT (5432), PGAF_NAME (PGAF_HOSTNAME), PGAF_DBNAME (triad), PGAF_LISTEN ('*'), PGAF_AUTH
# (scram-sha-256), PGAF_SSL (--ssl-self-signed), PG_BINDIR (/usr/lib/postgresql/15/bin),
# PGAF_SETTINGS (node.conf next to this script), PGAF_REPLICATION_PASSWORD,
# PGAF_NETWORK_PARTITION_TIMEOUT (seconds; pg_autoctl's default, 20, unless set).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${PGDATA:?the node data directory}" "${PGAF_HOSTNAME:?the address the other nodes and Triad reach this machine at}"
: "${PGAF_MONITOR:?the monitor URI (pg_autoctl show uri --monitor, on the monitor)}"
bindir="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"

# A standby's pg_basebackup connects to the primary as pgautofailover_replicator with this password.
if [ -n "${PGAF_REPLICATION_PASSWORD:-}" ]; then export PGPASSWORD="$PGAF_REPLICATION_PASSWORD"; fi

# shellcheck disable=SC2086 # PGAF_SSL holds several options
pg_autoctl create postgres --pgdata "$PGDATA" --pgctl "$bindir/pg_ctl" --pgport "${PGPORT:-5432}" \
  --hostname "$PGAF_HOSTNAME" --listen "${PGAF_LISTEN:-*}" --name "${PGAF_NAME:-$PGAF_HOSTNAME}" \
  --dbname "${PGAF_DBNAME:-triad}" --monitor "$PGAF_MONITOR" --auth "${PGAF_AUTH:-scram-sha-256}" \
  ${PGAF_SSL:---ssl-self-signed}

if [ -n "${PGAF_REPLICATION_PASSWORD:-}" ]; then
  pg_autoctl config set --pgdata "$PGDATA" replication.password "$PGAF_REPLICATION_PASSWORD"
fi
# The primary must give up (demote itself) when it is cut off from the monitor and from every
# standby before the monitor promotes another node: keep this below the monitor's
# pgautofailover.primary_demote_timeout.
if [ -n "${PGAF_NETWORK_PARTITION_TIMEOUT:-}" ]; then
  pg_autoctl config set --pgdata "$PGDATA" timeout.network_partition_timeout "$PGAF_NETWORK_PARTITION_TIMEOUT"
fi

"$here/include-settings.sh" "$PGDATA" "${PGAF_SETTINGS:-$here/node.conf}"
