#!/usr/bin/env bash
# What recording changes costs the writes, in one run on one seeded database:
#   A  this build (each write also records its change; the feeds poll the table)
#   N  this build with a NOTIFY trigger on `changes` (what the feeds could LISTEN for)
#   B  BASELINE_BINARY, a build from before change recording (optional)
# Rounds alternate A, N, B; the trigger is created for N and dropped after it.
#
#   bench/write-cost.sh [BASELINE_BINARY] [seconds]     (default 8 s per scenario per round)
#
# Env: SCENARIOS ("like_toggle_mix comment_create"), ROUNDS (3), POOL (4), POSTS (100000),
# USERS (10000), PG_PORT (25435), SHARED (../shared). Build a baseline outside this repository:
#   git archive 66d4b0a --prefix=baseline/ | tar -x -C /tmp && (cd /tmp/baseline && swift build -c release)
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=${1:-}
[ -z "$baseline" ] || baseline=$(cd "$(dirname "$baseline")" && pwd)/$(basename "$baseline")
secs=${2:-8}
shared=$(cd "${SHARED:-../shared}" && pwd)
scenarios=${SCENARIOS:-"like_toggle_mix comment_create"}
rounds=${ROUNDS:-3} pool=${POOL:-4} posts=${POSTS:-100000} users=${USERS:-10000} pg_port=${PG_PORT:-25435}
ours_port=18084 base_port=18085 pg_dir=/tmp/posts-server-bench-writes-pg

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir

bench_build_ours
url=$(bench_database "$pg_port" "$posts" "$users")
psql -q "$url" -c "CREATE FUNCTION bench_notify_changes() RETURNS trigger LANGUAGE plpgsql AS \$\$
    BEGIN PERFORM pg_notify('posts_server_changes', ''); RETURN NULL; END \$\$"

start() {  # binary port
    DATABASE_URL=$url PORT=$2 DB_POOL_SIZE=$pool AUTH_MODE=trust "$1" serve --no-migrate >/dev/null 2>&1 &
    bench_pids+=($!)
    bench_wait_for_port "$2" $!
}
start .build/release/posts-server $ours_port
[ -z "$baseline" ] || start "$baseline" $base_port

declare -A results
measure() {  # label port
    while read -r scenario rps _; do
        results[$1.$scenario]="${results[$1.$scenario]:-} $rps"
    done < <(MAXID=$posts MAXUSER=$users SCENARIOS=$scenarios "$shared/bench/run.sh" "http://127.0.0.1:$2" "$secs" | tail -n +2)
}
for round in $(seq "$rounds"); do
    echo "round $round/$rounds" >&2
    measure A $ours_port
    psql -q "$url" -c "CREATE TRIGGER bench_notify AFTER INSERT ON changes FOR EACH STATEMENT EXECUTE FUNCTION bench_notify_changes()"
    measure N $ours_port
    psql -q "$url" -c "DROP TRIGGER bench_notify ON changes"
    [ -z "$baseline" ] || measure B $base_port
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { print (y > 0 ? sprintf("%.2f", x / y) : "-") }'; }
echo "A = this build (poll), N = with NOTIFY trigger, B = ${baseline:-none}; pool $pool; median of $rounds × $secs s" >&2
printf '%-16s %9s %9s %9s %6s %6s\n' scenario A_req/s N_req/s B_req/s N/A A/B
for s in $scenarios; do
    a=$(median <<<"${results[A.$s]}") n=$(median <<<"${results[N.$s]}") b=$(median <<<"${results[B.$s]:-0}")
    printf '%-16s %9.0f %9.0f %9.0f %6s %6s\n' "$s" "$a" "$n" "$b" "$(ratio "$n" "$a")" "$(ratio "$a" "$b")"
done
