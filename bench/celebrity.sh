#!/usr/bin/env bash
# What an author's audience costs (API.md "Feeds at any scale"): for an author with N
# followers, the latency of a post of theirs (p50 and p99 of POSTS), the time until their
# last follower's feed shows the last of them (the fan-out job's delay; an author past
# FEED_FANOUT_LIMIT is merged as feeds are read, so at once), and the latency of a follow
# of them, of a block of them by a follower, and of their account's deletion, each against
# the same with no follower, in the same run. Release build, trust mode (users named by
# X-User-Email), curl's total time.
#
#   bench/celebrity.sh [followers…]        (default 0 1000 9000 100000 1000000)
#
# Env: POSTS (20: posts timed per size), PG_PORT (25441), SHARED (../shared). Port 18091.
# The followers are written by SQL (users, profiles, follows, counters), not through the
# API: 200,000 in a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${*:-"0 1000 9000 100000 1000000"}
shared=$(cd "${SHARED:-../shared}" && pwd)
posts=${POSTS:-20} pg_port=${PG_PORT:-25441} port=18091 pg_dir=/tmp/posts-server-bench-celebrity-pg

source bench/lib.sh
source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_build_ours
url=$(bench_database "$pg_port")
DATABASE_URL=$url PORT=$port AUTH_MODE=trust RATE_LIMIT_IP=0 .build/release/posts-server serve --no-migrate >/dev/null &
bench_pids+=($!)
bench_wait_for_port "$port"

api=http://127.0.0.1:$port
time_of() {  # email method path [json] -> seconds (curl's total), failing on a non-2xx
    local email=$1 method=$2 path=$3 body=${4:-}
    local args=(-s -o /dev/null -w '%{http_code} %{time_total}' -X "$method" -H "X-User-Email: $email")
    [ -z "$body" ] || args+=(-H 'Content-Type: application/json' -d "$body")
    read -r status seconds < <(curl "${args[@]}" "$api$path")
    [[ $status == 2* ]] || { echo "$method $path answered $status" >&2; exit 1; }
    echo "$seconds"
}
user_id() { curl -s -H "X-User-Email: $1" "$api/api/me" | sed 's/.*"user":{"id":\([0-9]*\).*/\1/'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
# STDIN numbers -> the nearest-rank percentile P of them.
percentile() { tr ' ' '\n' | grep . | sort -g | awk -v p="$1" '{ v[NR] = $1 } END { r = int(NR * p / 100 + 0.999); print v[r < 1 ? 1 : r] }'; }
now() { date +%s.%N; }

printf '%-10s %8s %8s %10s %10s %10s %12s\n' followers post_p50 post_p99 in_feed_ms follow_ms block_ms delete_ms
for size in $sizes; do
    star="star$size@example.com"
    id=$(user_id "$star")
    psql -q "$url" <<SQL
WITH u AS (
    INSERT INTO users (email) SELECT 'fan' || $size || '-' || n || '@example.com' FROM generate_series(1, $size) n RETURNING id
), pr AS (
    INSERT INTO profiles (user_id, username, following_count) SELECT id, 'fan' || id, 1 FROM u
)
INSERT INTO follows (follower_id, followee_id) SELECT id, $id FROM u;
UPDATE profiles SET followers_count = $size WHERE user_id = $id;
VACUUM ANALYZE follows;
SQL
    timings=""
    for n in $(seq "$posts"); do
        timings="$timings $(time_of "$star" POST /api/posts '{"title":"t","summary":"s","body":"b"}')"
    done
    posted=$(now)
    p50=$(percentile 50 <<<"$timings") p99=$(percentile 99 <<<"$timings")
    # Until the last follower's feed starts with the author's last post (polled every 10 ms).
    in_feed=0
    if [ "$size" != 0 ]; then
        last=$(psql -qAt "$url" -c "SELECT max(id) FROM posts WHERE user_id = $id")
        for _ in $(seq 3000); do
            first=$(curl -s -H "X-User-Email: fan$size-$size@example.com" "$api/api/feed?limit=1" | sed -n 's/.*"posts":\[{"id":\([0-9]*\).*/\1/p')
            [ "$first" = "$last" ] && break
            sleep 0.01
        done
        in_feed=$(awk -v a="$posted" -v b="$(now)" 'BEGIN { print b - a }')
    fi
    newcomer="newcomer$size@example.com"
    follow=$(time_of "$newcomer" PUT "/api/users/$id/follow")
    # A follower blocks them (with no follower of old, the newcomer does).
    blocker=$newcomer
    [ "$size" = 0 ] || blocker="fan$size-1@example.com"
    block=$(time_of "$blocker" PUT "/api/users/$id/block")
    delete=$(time_of "$star" DELETE /api/me)
    printf '%-10s %8s %8s %10s %10s %10s %12s\n' "$size" "$(ms "$p50")" "$(ms "$p99")" "$(ms "$in_feed")" "$(ms "$follow")" \
        "$(ms "$block")" "$(ms "$delete")"
done
