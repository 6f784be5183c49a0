#!/usr/bin/env bash
# Measures this build against another build of posts-server (an earlier commit, say) in the
# same run: same database, same pool, wrk on routes both serve, A,B,A,B rounds, medians.
#
#   bench/compare-builds.sh BASELINE_BINARY [seconds]     (default 10 s per round)
#
# Env: PATHS (default "/api/ping /api/health"), ROUNDS (2), POOL (4), CONNECTIONS (64),
# PG_PORT (25433), SHARED (../shared). SCENARIOS instead of PATHS runs ../shared/bench's
# scenarios (like_toggle_mix, comment_create, …) on a database seeded with POSTS (100000)
# posts and USERS (10000) users, both servers in trust mode. The database is migrated by
# this build; the baseline runs on it unmigrated. OWN_DATABASES=1 gives the baseline a
# database of its own in the same cluster, migrated with the baseline's own migrations (its
# tree's `migrations/`, beside its .build) and seeded the same: for a change whose cost is
# in the schema (triggers), which each build must pay for its own.
# PUSH=1 sets PUSH_WEBHOOK_URL for this build, to bench/push-receiver.py on port 18099 (every
# notification then also writes a push delivery, sent in the background, and the receiver
# answers on the same cores). PUSH_RECEIVER=0 leaves the port closed: the deliveries are
# written and retried with backoff, the cost of the outbox in the write path alone.
# Build the baseline outside this repository:
#   git archive OLD --prefix=baseline/ | tar -x -C /tmp && (cd /tmp/baseline && swift build -c release)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 BASELINE_BINARY [seconds]" >&2; exit 2; }
baseline=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
secs=${2:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
paths=${PATHS:-"/api/ping /api/health"}
rounds=${ROUNDS:-2} pool=${POOL:-4} conns=${CONNECTIONS:-64} pg_port=${PG_PORT:-25433}
scenarios=${SCENARIOS:-} posts=${POSTS:-100000} users=${USERS:-10000}
ours_port=18082 base_port=18083 pg_dir=/tmp/posts-server-bench-builds-pg

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir

bench_build_ours
if [ -n "$scenarios" ]; then url=$(bench_database "$pg_port" "$posts" "$users"); else url=$(bench_database "$pg_port"); fi
base_url=$url
if [ "${OWN_DATABASES:-0}" = 1 ]; then
    psql -q -c "CREATE DATABASE baseline" "$url"
    base_url=${url%/*}/baseline
    # The baseline's own migrations (its tree's, beside its .build), not this checkout's:
    # run from here, a binary finds ./migrations first.
    base_migrations=$(cd "$(dirname "$baseline")/../.." && pwd)/migrations
    [ -d "$base_migrations" ] || { echo "no migrations folder at $base_migrations for the baseline" >&2; exit 2; }
    MIGRATIONS_DIR=$base_migrations DATABASE_URL=$base_url "$baseline" migrate >/dev/null
    if [ -n "$scenarios" ]; then
        psql -q -v posts="$posts" -v users="$users" -f "$shared/bench/seed.sql" "$base_url" >/dev/null
    fi
fi
push=()
if [ "${PUSH:-0}" = 1 ]; then
    if [ "${PUSH_RECEIVER:-1}" = 1 ]; then
        python3 bench/push-receiver.py 18099 &
        bench_pids+=($!)
    fi
    push=(PUSH_WEBHOOK_URL=http://127.0.0.1:18099/push PUSH_WEBHOOK_SECRET=bench-secret-bench-secret)
fi
for server in ".build/release/posts-server:$ours_port:$url" "$baseline:$base_port:$base_url"; do
    IFS=: read -r binary port _ <<<"$server"
    extra=()
    [ "$port" != "$ours_port" ] || extra=("${push[@]}")
    env "${extra[@]}" DATABASE_URL="${server#*:*:}" PORT="$port" DB_POOL_SIZE="$pool" AUTH_MODE=trust RATE_LIMIT_IP=0 \
        "$binary" serve --no-migrate >/dev/null &
    bench_pids+=($!)
done
for port in $ours_port $base_port; do bench_wait_for_port "$port"; done

if [ -n "$scenarios" ]; then
    echo "A = this build, B = $baseline; pool $pool each; $secs s per round" >&2
    MAXID=$posts MAXUSER=$users SCENARIOS=$scenarios ROUNDS=$rounds "$shared/bench/compare.sh" \
        "http://127.0.0.1:$ours_port" "http://127.0.0.1:$base_port" "$secs"
    exit
fi

rps() {  # url -> req/s of one measured run, after a 2 s warm-up
    wrk -t2 -c"$conns" -d2s "$1" >/dev/null 2>&1 || true
    wrk -t2 -c"$conns" -d"${secs}s" "$1" 2>/dev/null | awk '/^Requests\/sec/ { print $2 }'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "A = this build, B = $baseline; pool $pool each; $conns connections; $secs s per round" >&2
printf '%-16s %10s %10s %7s\n' path A_req/s B_req/s A/B
for path in $paths; do
    ra="" rb=""
    for _ in $(seq "$rounds"); do
        ra="$ra $(rps "http://127.0.0.1:$ours_port$path")"
        rb="$rb $(rps "http://127.0.0.1:$base_port$path")"
    done
    ma=$(median <<<"$ra") mb=$(median <<<"$rb")
    printf '%-16s %10.0f %10.0f %7s\n' "$path" "$ma" "$mb" "$(awk -v x="$ma" -v y="$mb" 'BEGIN { print (y > 0 ? sprintf("%.2f", x / y) : "-") }')"
done
