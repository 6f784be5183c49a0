#!/bin/sh
# Run once by the postgres image when it makes the database (docker-entrypoint-initdb.d).
# Lets the replica of the `scaling` profile stream from this primary, and gives the role
# the settings a transaction-mode pooler cannot keep per session: posts-server's direct
# sessions (migrations, LISTEN) set their own, its pooled ones rely on these.
set -eu
echo "host replication ${POSTGRES_USER} all scram-sha-256" >> "$PGDATA/pg_hba.conf"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
ALTER ROLE "${POSTGRES_USER}" SET statement_timeout = '3s';
ALTER ROLE "${POSTGRES_USER}" SET jit = off;
SQL
