#!/usr/bin/env bash
# Issue 34's benchmark: reads with a write mix (one like in ten) against the primary alone
# and against the primary and one streaming replica (DATABASE_REPLICA_URLS), each directly
# and through PgBouncer in transaction mode (DATABASE_POOLER=transaction); req/s, p99, and
# the CPU each database's processes used (cores), so the primary's share shows what the
# replica took off it. Everything shares this machine's cores: the replica's CPU is not
# free here as it is on a machine of its own.
#
#   bench/replicas.sh [seconds]          (default 8 s per run)
#
# Env: READS (post_by_id recent50), ROUNDS (2), POOL (4), POSTS (100000), USERS (10000),
# PG_PORT (25441; the replica +1, PgBouncer +2), SHARED (../shared). Server on 127.0.0.1:18091.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}
shared=$(cd "${SHARED:-../shared}" && pwd)
reads=${READS:-"post_by_id recent50"}
rounds=${ROUNDS:-2} pool=${POOL:-4} posts=${POSTS:-100000} users=${USERS:-10000}
pg_port=${PG_PORT:-25441} replica_port=$((pg_port + 1)) bouncer_port=$((pg_port + 2)) port=18091
pg_dir=/tmp/posts-server-bench-replicas-pg replica_dir=/tmp/posts-server-bench-replicas-standby
bouncer_dir=/tmp/posts-server-bench-replicas-pgbouncer
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pgbin=${PGBIN:-/usr/lib/postgresql/15/bin}

source bench/lib.sh
bench_need_wrk
NEEDS_TEST_TOOLS=1 source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_build_ours
url=$(bench_database "$pg_port" "$posts" "$users")

# The replica: a base backup of the seeded primary, following it.
stop_replica() { as_owner "$pgbin/pg_ctl" -D "$replica_dir/data" -m fast -w stop >/dev/null 2>&1 || true; }
stop_bouncer() { [ -s "$bouncer_dir/pgbouncer.pid" ] && kill "$(cat "$bouncer_dir/pgbouncer.pid")" 2>/dev/null || true; }
trap 'stop_replica; stop_bouncer; bench_cleanup' EXIT
rm -rf "$replica_dir" && mkdir -p "$replica_dir"
[ "$(id -u)" = 0 ] && chown postgres: "$replica_dir"
echo "copying the primary into a replica…" >&2
as_owner "$pgbin/pg_basebackup" -h 127.0.0.1 -p "$pg_port" -U postgres -D "$replica_dir/data" -R -X stream -c fast
as_owner "$pgbin/pg_ctl" -D "$replica_dir/data" -l "$replica_dir/postgres.log" -w -t 60 \
    -o "-p $replica_port -c unix_socket_directories=$replica_dir" start >/dev/null
replica_url="postgres://postgres@127.0.0.1:$replica_port/bench"

# PgBouncer in transaction mode in front of the primary, with the pooled sessions' settings.
rm -rf "$bouncer_dir" && mkdir -p "$bouncer_dir"
printf '"postgres" ""\n' >"$bouncer_dir/users.txt"
cat >"$bouncer_dir/pgbouncer.ini" <<INI
[databases]
bench = host=127.0.0.1 port=$pg_port dbname=bench connect_query='SET jit = off'
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = trust
auth_file = $bouncer_dir/users.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = $pool
pidfile = $bouncer_dir/pgbouncer.pid
INI
[ "$(id -u)" = 0 ] && chown -R postgres: "$bouncer_dir"
as_owner /usr/sbin/pgbouncer -q "$bouncer_dir/pgbouncer.ini" &
bouncer_pid=$!
bench_wait_for_port "$bouncer_port" "$bouncer_pid"
bouncer_url="postgres://postgres@127.0.0.1:$bouncer_port/bench"

# CPU seconds (user + system, in ticks) of a cluster's processes: its postmaster's children.
cluster_ticks() {
    local postmaster
    postmaster=$(head -1 "$1/data/postmaster.pid")
    for pid in "$postmaster" $(pgrep -P "$postmaster"); do awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null; done \
        | awk '{ s += $1 } END { print s + 0 }'
}

bouncer_ticks() { awk '{ print $14 + $15 }' "/proc/$(cat "$bouncer_dir/pgbouncer.pid")/stat"; }

declare -A results
run() {  # setup read
    local database=$url replicas="" pooler=""
    case $1 in
        *pgbouncer*) database=$bouncer_url pooler=transaction ;;
    esac
    case $1 in
        *replica*) replicas=$replica_url ;;
    esac
    DATABASE_URL=$database DATABASE_POOLER=$pooler DATABASE_DIRECT_URL=$url DATABASE_REPLICA_URLS=$replicas \
        PORT=$port AUTH_MODE=trust DB_POOL_SIZE=$pool RATE_LIMIT_IP=0 \
        .build/release/posts-server serve --no-migrate >/dev/null 2>&1 &
    local server=$!
    bench_wait_for_port "$port" $server
    local primary_before replica_before bouncer_before line
    primary_before=$(cluster_ticks "$pg_dir") replica_before=$(cluster_ticks "$replica_dir") bouncer_before=$(bouncer_ticks)
    line=$(READ=$2 LUA_PATH="$PWD/bench/lua/?.lua;$shared/bench/lua/?.lua;;" MAXID=$posts MAXUSER=$users \
        wrk -t2 -c64 -d"${secs}s" --latency -s bench/lua/reads-with-likes.lua "http://127.0.0.1:$port" | grep '^RESULT')
    local primary replica bouncer hz
    hz=$(getconf CLK_TCK)
    bouncer=$(awk -v a="$bouncer_before" -v b="$(bouncer_ticks)" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.2f", (b - a) / hz / s }')
    primary=$(awk -v a="$primary_before" -v b="$(cluster_ticks "$pg_dir")" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.2f", (b - a) / hz / s }')
    replica=$(awk -v a="$replica_before" -v b="$(cluster_ticks "$replica_dir")" -v hz="$hz" -v s="$secs" 'BEGIN { printf "%.2f", (b - a) / hz / s }')
    kill "$server" && wait "$server" 2>/dev/null || true
    results[$1.$2]="${results[$1.$2]:-} $(echo "$line" | awk '{ print $2 "/" $4 }')/$primary/$replica/$bouncer"
}
setups="primary primary+replica pgbouncer pgbouncer+replica"
for round in $(seq "$rounds"); do
    echo "round $round/$rounds" >&2
    for read in $reads; do
        for setup in $setups; do run "$setup" "$read"; done
    done
done

echo
echo "## bench/replicas.sh ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pool $pool, wrk -t2 -c64 -d${secs}s, $rounds rounds, 90% anonymous reads + 10% likes)"
echo "| read | setup | req/s | p99 ms | primary cores | replica cores | primary's share | pgbouncer cores |"
echo "|---|---|---|---|---|---|---|---|"
for read in $reads; do
    for setup in $setups; do
        read -ra runs <<<"${results[$setup.$read]}"
        median() { bench_median $(printf '%s\n' "${runs[@]}" | cut -d/ -f"$1"); }
        rps=$(median 1) p99=$(median 2) primary=$(median 3) replica=$(median 4) bouncer=$(median 5)
        share=$(awk -v p="$primary" -v r="$replica" 'BEGIN { printf "%.0f%%", (p + r > 0) ? p / (p + r) * 100 : 0 }')
        echo "| $read | $setup | $rps | $p99 | $primary | $replica | $share | $bouncer |"
    done
done
