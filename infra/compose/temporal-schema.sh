#!/bin/sh
# One-shot (temporalio/admin-tools image): applies Temporal's PostgreSQL schema to the two
# databases that postgres-init.sh created. Safe to run on every `docker compose up`:
# setup-schema skips a database that already has a version, update-schema applies only
# the versions that are missing (this is also how a Temporal server upgrade migrates).
set -eu

: "${POSTGRES_SEEDS:?POSTGRES_SEEDS is required}"
: "${POSTGRES_USER:?POSTGRES_USER is required}"
: "${SQL_PASSWORD:?SQL_PASSWORD is required}"   # read by temporal-sql-tool
DB_PORT="${DB_PORT:-5432}"
SCHEMA_DIR=/etc/temporal/schema/postgresql/v12

echo "waiting for PostgreSQL at ${POSTGRES_SEEDS}:${DB_PORT}"
i=0
until nc -z -w 2 "$POSTGRES_SEEDS" "$DB_PORT"; do
  i=$((i + 1)); [ "$i" -lt 60 ] || { echo "PostgreSQL did not come up" >&2; exit 1; }
  sleep 2
done

for db in temporal:temporal temporal_visibility:visibility; do
  name="${db%%:*}"; dir="${db##*:}"
  echo "schema for database ${name}"
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" \
    --db "$name" setup-schema -v 0.0
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" \
    --db "$name" update-schema -d "${SCHEMA_DIR}/${dir}/versioned"
done
echo "Temporal schema is up to date"
