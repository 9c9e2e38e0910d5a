#!/usr/bin/env bash
# Builds the pg_auto_failover monitor (README.md, step 1). Run once, as the postgres user, on the
# monitor's machine; then start it with the systemd unit (pgautofailover.service).
#
#   PGDATA=/var/lib/postgresql/pgaf/monitor PGAF_HOSTNAME=monitor.internal ./create-monitor.sh
#
# Variables (pgaf.env.example has them all): PGDATA, PGAF_HOSTNAME (required); PGPORT (5432),
# PGAF_LISTEN ('*'), PGAF_AUTH (scram-sha-256), PGAF_SSL (--ssl-self-signed), PG_BINDIR
# (/usr/lib/postgresql/15/bin), PGAF_SETTINGS (monitor.conf next to this script).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${PGDATA:?the monitor data directory}" "${PGAF_HOSTNAME:?the address the data nodes reach this machine at}"
bindir="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"

# shellcheck disable=SC2086 # PGAF_SSL holds several options
pg_autoctl create monitor --pgdata "$PGDATA" --pgctl "$bindir/pg_ctl" --pgport "${PGPORT:-5432}" \
  --hostname "$PGAF_HOSTNAME" --listen "${PGAF_LISTEN:-*}" --auth "${PGAF_AUTH:-scram-sha-256}" \
  ${PGAF_SSL:---ssl-self-signed}

"$here/include-settings.sh" "$PGDATA" "${PGAF_SETTINGS:-$here/monitor.conf}"
