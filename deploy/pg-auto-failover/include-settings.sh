#!/usr/bin/env bash
# Copies a settings file into a data directory as triad-ha.conf and includes it last in
# postgresql.conf, after the postgresql-auto-failover.conf that pg_autoctl writes, so that its
# values win over pg_autoctl's computed ones (shared_buffers is a quarter of the memory there).
# Standbys copy both files from the primary with pg_basebackup; running this again changes nothing.
#
#   include-settings.sh <PGDATA> <settings file>
set -euo pipefail
pgdata="$1" settings="$2"
install -m 0644 "$settings" "$pgdata/triad-ha.conf"
grep -qx "include 'triad-ha.conf'" "$pgdata/postgresql.conf" || echo "include 'triad-ha.conf'" >> "$pgdata/postgresql.conf"
