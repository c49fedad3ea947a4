#!/bin/sh
# The official postgres image's start-up, the part docker-compose.yml relies on: as root,
# own the data folder and drop to the postgres user; on an empty folder, initdb with
# POSTGRES_USER as the superuser (password POSTGRES_PASSWORD, scram-sha-256 over TCP)
# and create POSTGRES_DB; then run the server, listening on every address.
set -eu

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /run/postgresql
    chown -R postgres:postgres "$PGDATA" /run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is not set}"
    user="${POSTGRES_USER:-postgres}"
    database="${POSTGRES_DB:-$user}"
    password_file="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
    initdb --pgdata="$PGDATA" --username="$user" --pwfile="$password_file" \
        --encoding=UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$database" != postgres ]; then
        pg_ctl --pgdata="$PGDATA" --wait --options="-c listen_addresses=''" start
        createdb --username="$user" "$database"
        pg_ctl --pgdata="$PGDATA" --wait --mode=fast stop
    fi
fi

if [ "$1" = postgres ]; then
    shift
    exec postgres -c listen_addresses='*' "$@"
fi
exec "$@"
