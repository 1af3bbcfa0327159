#!/usr/bin/env bash
# A private PostgreSQL cluster for the durable tests, from the system's PostgreSQL packages
# (Debian: apt-get install -y postgresql).
#   postgres.sh start PORT   prints "URL DIR" once the server accepts connections
#   postgres.sh stop DIR     stops it and removes DIR
# As root the cluster runs as the `postgres` user (initdb refuses root). Exit 3: no server.
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "no PostgreSQL server installed (apt-get install -y postgresql)" >&2; exit 3
fi
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$1" in
  start)
    port=$2
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
      echo "running as root and there is no postgres user to run the server as" >&2; exit 3
    fi
    dir=$(mktemp -d /tmp/thinkagent-pg.XXXXXX)
    [ "$(id -u)" = 0 ] && chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgresql://postgres@127.0.0.1:$port/postgres $dir"
    ;;
  stop)
    dir=$2
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *) echo "usage: postgres.sh start PORT | stop DIR" >&2; exit 2 ;;
esac
