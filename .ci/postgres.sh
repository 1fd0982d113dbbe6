#!/usr/bin/env bash
# Sourced by .ci/run: makes sure PostgreSQL (Debian's package) is installed, starts a throwaway cluster
# on 127.0.0.1, exports DATABASE_URL for the tests, and stops it (and removes its data) on exit.
# Tests that need PostgreSQL read DATABASE_URL; without it they start their own cluster the same way
# (test/support/postgres.ts), so `npm test` alone also works where the package is installed.

pg_bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

if [ -z "$(pg_bin_dir)" ]; then
  echo "ci: installing PostgreSQL from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PG_BIN="$(pg_bin_dir)"
PG_PORT="${PG_PORT:-54329}"
PG_DATA="$(mktemp -d /tmp/ci-postgres.XXXXXX)"

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$PG_DATA"; fi

as_pg "$PG_BIN/initdb" -D "$PG_DATA" -A trust -U postgres >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DATA -c fsync=off" start >/dev/null
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
echo "ci: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT"

stop_postgres() {
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DATA"
}
trap stop_postgres EXIT
