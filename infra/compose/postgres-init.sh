#!/bin/sh
# Runs once, when the PostgreSQL data volume is first initialised (docker-entrypoint-initdb.d).
# One instance, three databases:
#   temporal, temporal_visibility  owned by role "temporal"  (schema applied by temporal-schema.sh)
#   agentrun                       owned by role "agentrun"  (the app migrates its own schema)
# Changing the passwords in .env later does not change existing roles: run ALTER ROLE, or
# `docker compose down -v` to start from an empty volume.
set -eu

: "${TEMPORAL_DB_PASSWORD:?TEMPORAL_DB_PASSWORD is required}"
: "${AGENTRUN_DB_PASSWORD:?AGENTRUN_DB_PASSWORD is required}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v temporal_pw="$TEMPORAL_DB_PASSWORD" -v agentrun_pw="$AGENTRUN_DB_PASSWORD" <<'SQL'
CREATE ROLE temporal LOGIN PASSWORD :'temporal_pw';
CREATE ROLE agentrun LOGIN PASSWORD :'agentrun_pw';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
CREATE DATABASE agentrun OWNER agentrun;
REVOKE ALL ON DATABASE temporal, temporal_visibility FROM PUBLIC;
REVOKE ALL ON DATABASE agentrun FROM PUBLIC;
SQL
