#!/bin/bash
# Streaming replica: clone the primary once (pg_basebackup -R writes standby.signal and the
# connection), then run as a hot standby. /health/replication reports its replay lag.
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  export PGPASSWORD="$REPLICATION_PASSWORD"
  until pg_isready -h "$PRIMARY_HOST" -U replicator; do sleep 1; done
  pg_basebackup -h "$PRIMARY_HOST" -U replicator -D "$PGDATA" -R -X stream -S replica1 -P
  chmod 700 "$PGDATA"
fi
exec postgres -c hot_standby=on
