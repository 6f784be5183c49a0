#!/usr/bin/env bash
# The feed benchmark: GET /api/feed?limit=20 at each database size, for callers who follow
# 10, 100 and 1,000 people, 5 of them large authors (past FEED_FANOUT_LIMIT: merged as the
# feed is read, API.md "Feeds at any scale": p99 under 20 ms, flat across all six), with
# /api/posts/recent?limit=20 as a control in the same run: req/s under 64 connections,
# p50/p99 under as many as the pool has.
#
#   bench/feed.sh [seconds] [sizes…]        (default 8 s per run, sizes 10000 1000000)
#
# Env: ROUNDS (3), POOL (4), USERS (10000), PG_PORT (25438), SHARED (../shared). Port
# 18090 on 127.0.0.1 (trust mode: callers named by X-User-Email). 1,000,000 posts take
# ~2 minutes to seed and ~2 GB in /tmp.
#
# The callers are user1, user2, user3 (following 10, 100, 1,000 users spread over the id
# range), their follows written as the route writes them: counters, and each followee's
# newest FollowService.backfillLimit posts copied into the caller's feed; then each
# caller's 5 lowest followees are made large authors (their rows leave the feeds, as a
# large author's posts are never copied). (The shared seed loads without the write path,
# so posts_count is settled once by hand first.)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}; shift || true
sizes=${*:-"10000 1000000"}
shared=$(cd "${SHARED:-../shared}" && pwd)
rounds=${ROUNDS:-3} pool=${POOL:-4} users=${USERS:-10000}
pg_port=${PG_PORT:-25438} port=18090 pg_dir=/tmp/posts-server-bench-feed-pg
backfill=1000

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_build_ours
export LUA_PATH="$shared/bench/lua/?.lua;;"

follow_sql() {  # caller count
    cat <<SQL
WITH made AS (
    INSERT INTO follows (follower_id, followee_id)
    SELECT $1, 10 + (n * ($users - 20) / $2) FROM generate_series(0, $2 - 1) n
    ON CONFLICT DO NOTHING RETURNING follower_id, followee_id
), counted AS (
    UPDATE profiles SET following_count = following_count + (SELECT count(*) FROM made) WHERE user_id = $1
), followees AS (
    UPDATE profiles SET followers_count = followers_count + 1 WHERE user_id IN (SELECT followee_id FROM made)
)
INSERT INTO feed_entries (user_id, post_id, author_id, created_at)
SELECT made.follower_id, recent.id, recent.user_id, recent.created_at FROM made, LATERAL (
    SELECT id, user_id, created_at FROM posts WHERE user_id = made.followee_id AND NOT deleted
    ORDER BY created_at DESC, id DESC LIMIT $backfill
) recent ON CONFLICT DO NOTHING;
SQL
}

declare -A results
table=""
for size in $sizes; do
    url=$(bench_database "$pg_port" "$size" "$users")
    psql -q "$url" -c "UPDATE profiles pr SET posts_count = n.n
        FROM (SELECT user_id, count(*) AS n FROM posts GROUP BY user_id) n WHERE pr.user_id = n.user_id"
    for caller in 1 2 3; do
        count=$((caller == 1 ? 10 : caller == 2 ? 100 : 1000))
        psql -q "$url" -c "$(follow_sql "$caller" "$count")"
        psql -q "$url" -c "INSERT INTO feed_large_authors (user_id, since)
            SELECT followee_id, '-infinity' FROM follows WHERE follower_id = $caller ORDER BY followee_id LIMIT 5 ON CONFLICT DO NOTHING"
    done
    psql -q "$url" -c "DELETE FROM feed_entries WHERE author_id IN (SELECT user_id FROM feed_large_authors)"
    # Each feed as the pruner keeps it (FeedService.depth rows): untrimmed, its first sweep
    # would delete ~100,000 rows of user3's during the measurement.
    psql -q "$url" -c "DELETE FROM feed_entries fe USING (
        SELECT user_id, created_at, post_id FROM (
            SELECT user_id, created_at, post_id, row_number() OVER (PARTITION BY user_id ORDER BY created_at DESC, post_id DESC) AS n
            FROM feed_entries) r WHERE n = 1000) cut
        WHERE fe.user_id = cut.user_id AND (fe.created_at, fe.post_id) < (cut.created_at, cut.post_id)"
    psql -q "$url" -c "VACUUM ANALYZE"
    echo "== $size posts: feed rows per caller" >&2
    psql -qAt "$url" -c "SELECT user_id, count(*) FROM feed_entries GROUP BY user_id ORDER BY user_id" >&2
    DATABASE_URL=$url PORT=$port AUTH_MODE=trust DB_POOL_SIZE=$pool RATE_LIMIT_IP=0 \
        .build/release/posts-server serve --no-migrate >/dev/null 2>&1 &
    server=$!
    bench_pids=("$server")
    bench_wait_for_port "$port" "$server"
    for round in $(seq "$rounds"); do
        echo "round $round/$rounds" >&2
        for caller in 1 2 3 recent; do
            # "recent" is the control: /api/posts/recent?limit=20 for user3, the same run, so
            # that a tail the whole machine gives shows as such.
            path="/api/feed?limit=20" email=user$caller@example.com
            [ "$caller" != recent ] || path="/api/posts/recent?limit=20" email=user3@example.com
            # Throughput with 64 connections (the shared scenarios' load, queueing included);
            # latency with as many connections as the pool has (a request's own time).
            load=$(wrk -t2 -c64 -d"${secs}s" --latency -H "X-User-Email: $email" \
                -s "$shared/bench/lua/static.lua" "http://127.0.0.1:$port$path" | grep '^RESULT')
            alone=$(wrk -t2 -c"$pool" -d"${secs}s" --latency -H "X-User-Email: $email" \
                -s "$shared/bench/lua/static.lua" "http://127.0.0.1:$port$path" | grep '^RESULT')
            results[$size.$caller]="${results[$size.$caller]:-} $(echo "$load $alone" | awk '{ print $2 "/" $4 "/" $9 "/" $10 "/" $5 + $11 }')"
        done
    done
    # The database's own time for the first page of the 1,000-followee caller.
    echo "== $size posts: EXPLAIN ANALYZE, user3's first page" >&2
    psql -qAt "$url" <<SQL >&2
EXPLAIN (ANALYZE, BUFFERS) SELECT p.id FROM (
    (SELECT fe.post_id AS id, fe.created_at FROM feed_entries fe JOIN posts ep ON ep.id = fe.post_id
     LEFT JOIN profiles epr ON epr.user_id = ep.user_id
     WHERE fe.user_id = 3 AND NOT ep.deleted AND epr.suspended IS NOT TRUE
     ORDER BY fe.created_at DESC, fe.post_id DESC LIMIT 21)
    UNION ALL
    (SELECT o.id, o.created_at FROM posts o LEFT JOIN profiles opr ON opr.user_id = o.user_id
     WHERE o.user_id = 3 AND NOT o.deleted AND opr.suspended IS NOT TRUE ORDER BY o.created_at DESC, o.id DESC LIMIT 21)
    UNION ALL
    (SELECT m.id, m.created_at FROM feed_large_authors l JOIN follows f ON f.follower_id = 3 AND f.followee_id = l.user_id,
     LATERAL (SELECT lp.id, lp.created_at FROM posts lp LEFT JOIN profiles lpr ON lpr.user_id = lp.user_id
              WHERE lp.user_id = l.user_id AND lp.created_at >= l.since AND NOT lp.deleted AND lpr.suspended IS NOT TRUE
              ORDER BY lp.created_at DESC, lp.id DESC LIMIT 21) m
     ORDER BY m.created_at DESC, m.id DESC LIMIT 21)
) e JOIN posts p ON p.id = e.id LEFT JOIN profiles pr ON pr.user_id = p.user_id
ORDER BY e.created_at DESC, e.id DESC LIMIT 21;
SQL
    kill "$server"; wait "$server" 2>/dev/null || true; bench_pids=()
    for caller in 1 2 3 recent; do
        read -ra runs <<<"${results[$size.$caller]}"
        field() { bench_median $(printf '%s\n' "${runs[@]}" | cut -d/ -f"$1"); }
        case $caller in 1) count=10 ;; 2) count=100 ;; 3) count=1000 ;; *) count="recent (control)" ;; esac
        table+="| $size | $count | $(field 1) | $(field 2) | $(field 3) | $(field 4) | $(field 5) |"$'\n'
    done

    "$shared/bench/pg.sh" stop "$pg_dir" >/dev/null
done

echo
echo "## bench/feed.sh ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pool $pool, wrk -t2 -d${secs}s, $rounds rounds, medians)"
echo "| posts | followees | req/s (64 connections) | p99 ms (64) | p50 ms ($pool connections) | p99 ms ($pool) | errors |"
echo "|---|---|---|---|---|---|---|"
printf '%s' "$table"
