#!/usr/bin/env bash
# Issue 23's benchmark: what blocks cost a read (and issue 31's: what signing in costs).
# post_by_id, recent50, children and comments (the shared scenarios) read anonymously, by
# a caller with no blocks, and by a caller who blocked 200 users, in ROUNDS rounds that
# alternate the three in the same run, on the shared seeded database; median req/s and
# p99 of each, and each caller's cost against the anonymous read.
#
#   bench/blocks.sh [seconds]          (default 8 s per run)
#
# Env: SCENARIOS (those four), ROUNDS (3), POOL (4), POSTS (100000), USERS (10000),
# BLOCKS (200), PG_PORT (25437), SHARED (../shared). Port 18089 on 127.0.0.1 (trust mode: callers named by X-User-Email).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}
shared=$(cd "${SHARED:-../shared}" && pwd)
scenarios=${SCENARIOS:-"post_by_id recent50 children comments"}
rounds=${ROUNDS:-3} pool=${POOL:-4} posts=${POSTS:-100000} users=${USERS:-10000} blocks=${BLOCKS:-200}
pg_port=${PG_PORT:-25437} port=18089 pg_dir=/tmp/posts-server-bench-blocks-pg

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_build_ours
url=$(bench_database "$pg_port" "$posts" "$users")
# user1 blocks users spread over the whole id range (their posts are everywhere); user2
# blocks no one.
# (Written straight to the tables, so the users' relations_version is moved on by hand,
# as the block route does.)
psql -q "$url" -c "INSERT INTO blocks (blocker_id, blocked_id)
    SELECT 1, 2 + (n * ($users - 2) / $blocks) FROM generate_series(0, $blocks - 1) n ON CONFLICT DO NOTHING;
    UPDATE users SET relations_version = relations_version + 1
    WHERE id = 1 OR id IN (SELECT blocked_id FROM blocks WHERE blocker_id = 1)"
DATABASE_URL=$url PORT=$port AUTH_MODE=trust DB_POOL_SIZE=$pool RATE_LIMIT_IP=0 \
    .build/release/posts-server serve --no-migrate >/dev/null 2>&1 &
bench_pids+=($!)
bench_wait_for_port "$port" $!
export LUA_PATH="$shared/bench/lua/?.lua;;" MAXID=$posts MAXUSER=$users

declare -A results
run() {  # scenario caller
    local script path header=()
    case $1 in
        post_by_id) script=post_by_id.lua path=/ ;;
        recent50) script=static.lua path="/api/posts/recent?limit=50" ;;
        children) script=children.lua path=/ ;;
        comments) script=comments.lua path=/ ;;
    esac
    case $2 in
        blocks) header=(-H "X-User-Email: user1@example.com") ;;
        none) header=(-H "X-User-Email: user2@example.com") ;;
    esac
    local line
    line=$(wrk -t2 -c64 -d"${secs}s" --latency "${header[@]}" -s "$shared/bench/lua/$script" "http://127.0.0.1:$port$path" | grep '^RESULT')
    results[$1.$2]="${results[$1.$2]:-} $(echo "$line" | awk '{ print $2 "/" $4 }')"
}
for round in $(seq "$rounds"); do
    echo "round $round/$rounds" >&2
    for scenario in $scenarios; do
        for caller in anonymous none blocks; do run "$scenario" "$caller"; done
    done
done

echo
echo "## bench/blocks.sh ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pool $pool, wrk -t2 -c64 -d${secs}s, $rounds rounds, $blocks blocks)"
echo "| scenario | anonymous req/s | no blocks req/s | $blocks blocks req/s | p99 ms (anon / none / blocks) | cost of no blocks | cost of $blocks blocks |"
echo "|---|---|---|---|---|---|---|"
for scenario in $scenarios; do
    declare -A rps p99
    for caller in anonymous none blocks; do
        read -ra runs <<<"${results[$scenario.$caller]}"
        rps[$caller]=$(bench_median $(printf '%s\n' "${runs[@]}" | cut -d/ -f1))
        p99[$caller]=$(bench_median $(printf '%s\n' "${runs[@]}" | cut -d/ -f2))
    done
    cost() { awk -v a="${rps[anonymous]}" -v b="$1" 'BEGIN { printf "%.1f%%", (1 - b / a) * 100 }'; }
    echo "| $scenario | ${rps[anonymous]} | ${rps[none]} | ${rps[blocks]} | ${p99[anonymous]} / ${p99[none]} / ${p99[blocks]} | $(cost "${rps[none]}") | $(cost "${rps[blocks]}") |"
done
