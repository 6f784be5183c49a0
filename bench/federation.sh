#!/usr/bin/env bash
# Issue 45's benchmark (API.md "Federation": "a post by an author with 10,000 remote
# followers on 500 hosts makes 500 deliveries, and its 201 is as fast as with none"). Two
# local authors: one with no follower, one with FOLLOWERS remote followers spread over
# HOSTS hosts (written by SQL: each a remote account whose shared inbox is on its own
# loopback address, 127.0.1.1 … 127.0.2.250, all answered by bench/federation-receiver.py).
# Their posts alternate: POSTS / 5 each with no delivery running (the write alone), then POSTS
# each one after another (each famous post's deliveries running meanwhile, for both); then
# one more post by the followed author, timed from its 201 until every host has received
# its Create. Release build, trust mode, curl's total time.
#
#   bench/federation.sh
#
# Env: FOLLOWERS (10000), HOSTS (500), POSTS (50), PG_PORT (25442), SHARED (../shared),
# SERVICES_NICE (19: the receiver's).
set -euo pipefail
cd "$(dirname "$0")/.."
followers=${FOLLOWERS:-10000} hosts=${HOSTS:-500} posts=${POSTS:-50}
shared=$(cd "${SHARED:-../shared}" && pwd)
pg_port=${PG_PORT:-25442} port=18097 receiver_port=18098 pg_dir=/tmp/posts-server-bench-federation-pg
api="http://127.0.0.1:$port"
log_dir=$(mktemp -d /tmp/posts-server-bench-federation.XXXXXX)

source bench/lib.sh
source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_remove+=("$log_dir")
bench_build_ours
url=$(bench_database "$pg_port")

# The hosts are other machines: niced, as bench/push.sh's stand-in, so that this one's two
# cores measure the server.
nice -n "${SERVICES_NICE:-19}" python3 bench/federation-receiver.py "$receiver_port" &
bench_pids+=($!)
bench_wait_for_port "$receiver_port" || { echo "federation: the receiver did not start" >&2; exit 1; }
DATABASE_URL=$url PORT=$port AUTH_MODE=trust RATE_LIMIT_IP=0 FEDERATION=on PUBLIC_URL="$api" FEDERATION_ALLOW_PRIVATE=1 \
    .build/release/posts-server serve --no-migrate >"$log_dir/server.log" 2>&1 &
server=$!
bench_pids+=($server)
bench_wait_for_port "$port" $server || { echo "federation: the server did not start: $(tail -5 "$log_dir/server.log")" >&2; exit 1; }

time_post() {  # email -> "seconds id"
    local answer
    answer=$(curl -s -w ' %{http_code} %{time_total}' -X POST -H "X-User-Email: $1" -H 'Content-Type: application/json' \
        -d '{"title":"t","summary":"s","body":"b"}' "$api/api/posts")
    read -r status seconds <<<"${answer##*\} }"
    [ "$status" = 201 ] || { echo "POST /api/posts answered $status" >&2; exit 1; }
    echo "$seconds $(sed -n 's/.*"post":{"id":\([0-9]*\).*/\1/p' <<<"$answer")"
}
user_id() { curl -s -H "X-User-Email: $1" "$api/api/me" | sed 's/.*"user":{"id":\([0-9]*\).*/\1/'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
percentile() { tr ' ' '\n' | grep . | sort -g | awk -v p="$1" '{ v[NR] = $1 } END { r = int(NR * p / 100 + 0.999); print v[r < 1 ? 1 : r] }'; }

quiet="quiet@example.com" famous="famous@example.com"
user_id "$quiet" >/dev/null
famous_id=$(user_id "$famous")
echo "writing $followers remote followers on $hosts hosts…" >&2
psql -q "$url" <<SQL
WITH remote AS (
    SELECT n, 'http://127.0.' || (1 + (n % $hosts) / 250) || '.' || (1 + (n % $hosts) % 250) || ':$receiver_port' AS origin
    FROM generate_series(1, $followers) n
), u AS (
    INSERT INTO users (email, created_at) SELECT md5(origin || n) || '@remote.invalid', now() FROM remote RETURNING id, email
), r AS (
    SELECT u.id, remote.n, remote.origin FROM u JOIN remote ON md5(remote.origin || remote.n) || '@remote.invalid' = u.email
), pr AS (
    INSERT INTO profiles (user_id, username, acct, following_count)
    SELECT id, 'f' || n || '@' || substr(origin, 8), 'f' || n || '@' || substr(origin, 8), 1 FROM r
), ra AS (
    INSERT INTO remote_actors (user_id, uri, domain, inbox, shared_inbox, key_id, public_key_pem, fetched_at, key_fetched_at)
    SELECT id, origin || '/users/f' || n, substr(origin, 8), origin || '/users/f' || n || '/inbox', origin || '/inbox',
           origin || '/users/f' || n || '#main-key', 'unused', now(), now() FROM r
)
INSERT INTO follows (follower_id, followee_id) SELECT id, $famous_id FROM r;
UPDATE profiles SET followers_count = $followers WHERE user_id = $famous_id;
VACUUM ANALYZE follows, remote_actors;
SQL

drain() {  # waits until no federation job is left (the deliveries of the posts before)
    for _ in $(seq 1200); do
        [ "$(psql -qtA "$url" -c "SELECT count(*) FROM jobs WHERE kind LIKE 'federation.%' AND state <> 'dead'")" = 0 ] && return
        sleep 0.25
    done
    echo "federation: deliveries still queued after 5 minutes" >&2
    exit 1
}
# Alone: each post with no delivery running (the write's own cost). Under deliveries: the
# posts one after another, each famous one's 500 deliveries running meanwhile.
quiet_alone="" famous_alone="" quiet_busy="" famous_busy=""
for _ in $(seq "$(( (posts + 4) / 5 ))"); do
    drain; read -r seconds _ < <(time_post "$quiet"); quiet_alone="$quiet_alone $seconds"
    drain; read -r seconds _ < <(time_post "$famous"); famous_alone="$famous_alone $seconds"
done
for _ in $(seq "$posts"); do
    read -r seconds _ < <(time_post "$quiet"); quiet_busy="$quiet_busy $seconds"
    read -r seconds _ < <(time_post "$famous"); famous_busy="$famous_busy $seconds"
done
printf '%-26s %11s %11s %11s %11s
' author alone_p50 alone_p99 busy_p50 busy_p99
row() {
    printf '%-26s %11s %11s %11s %11s
' "$1" "$(ms "$(percentile 50 <<<"$2")")" "$(ms "$(percentile 99 <<<"$2")")"         "$(ms "$(percentile 50 <<<"$3")")" "$(ms "$(percentile 99 <<<"$3")")"
}
row "no follower" "$quiet_alone" "$quiet_busy"
row "$followers remote, $hosts hosts" "$famous_alone" "$famous_busy"

# The earlier posts' deliveries first, so that the last one is timed alone.
drain
started=$(date +%s%N)
read -r seconds id < <(time_post "$famous")
activity="$api/posts/$id/activity"
encoded=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$activity")
reached=0
for _ in $(seq 12000); do
    reached=$(curl -s "http://127.0.0.1:$receiver_port/count?activity=$encoded")
    [ "$reached" -ge "$hosts" ] && break
    sleep 0.05
done
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
jobs=$(psql -qtA "$url" -c "SELECT count(*) FROM jobs WHERE kind = 'federation.deliver'")
echo "one more post: 201 in $(ms "$seconds") ms; its Create reached $reached of $hosts hosts in $elapsed_ms ms" \
    "(one delivery a host: $jobs deliveries left queued, dead ones included)"
