#!/bin/sh
# The proof's stand-in for the official postgres image's entrypoint (only what compose.yaml
# uses): as root it hands the data dir to postgres and runs itself again as postgres; on a first
# start (an empty PGDATA) it runs initdb with POSTGRES_USER and the password from
# POSTGRES_PASSWORD(_FILE), allows password logins from anywhere, and creates POSTGRES_DB. Then it
# runs the command (postgres, with PGPORT and any -c options given).
set -eu
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA"
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
if [ -n "${POSTGRES_PASSWORD_FILE:-}" ]; then password="$(cat "$POSTGRES_PASSWORD_FILE")"; else password="${POSTGRES_PASSWORD:-}"; fi
if [ -z "$password" ]; then echo "postgres stand-in: POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is required" >&2; exit 1; fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s\n' "$password" > "$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" -w start >/dev/null
    createdb -h /var/run/postgresql -U "$user" "$db"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "postgres stand-in: initialised $PGDATA for $user/$db"
fi
if [ "${1:-}" = postgres ]; then
  shift
  exec postgres -D "$PGDATA" -c "listen_addresses=*" -c unix_socket_directories=/var/run/postgresql "$@"
fi
exec "$@"
