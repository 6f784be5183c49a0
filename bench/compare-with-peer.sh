#!/usr/bin/env bash
# Measures this server against the reference peer (../shared/bench/hb-peer) in the same run,
# on the same freshly seeded database, with ../shared/bench/compare.sh.
#
#   bench/compare-with-peer.sh [seconds]        (default 10 s per round, 2 rounds: A,B,A,B)
#
# Env: SCENARIOS (default: every scenario of ../shared/bench/compare.sh), POSTS (100000),
# USERS (10000), POOL (4, for both servers), PG_PORT (25432), SHARED (../shared).
# The peer is built in a copy under /tmp (never inside this repository); the first build
# takes several minutes. Everything listens on loopback and stops at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
scenarios=${SCENARIOS:-"ping post_by_id recent50 children comments like_toggle_mix comment_create"}
posts=${POSTS:-100000} users=${USERS:-10000} pool=${POOL:-4} pg_port=${PG_PORT:-25432}
ours_port=18080 peer_port=18181
pg_dir=/tmp/posts-server-bench-pg

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir

bench_build_ours
bench_build_peer
url=$(bench_database "$pg_port" "$posts" "$users")

DATABASE_URL=$url PORT=$ours_port DB_POOL_SIZE=$pool AUTH_MODE=trust RATE_LIMIT_IP=0 \
    .build/release/posts-server serve --no-migrate >/dev/null &
bench_pids+=($!)
DATABASE_URL=$url PORT=$peer_port DB_POOL_SIZE=$pool LOG_LEVEL=error "$bench_peer" >/dev/null 2>&1 &
bench_pids+=($!)
for port in $ours_port $peer_port; do bench_wait_for_port "$port"; done

echo "A = posts-server, B = hb-peer; pool $pool each; $secs s per round" >&2
MAXID=$posts MAXUSER=$users SCENARIOS=$scenarios "$shared/bench/compare.sh" \
    "http://127.0.0.1:$ours_port" "http://127.0.0.1:$peer_port" "$secs"
