#!/usr/bin/env bash
# The search benchmark (API.md "Search and hashtags": a two-word search over 1,000,000 posts
# in p99 under 30 ms): p50/p99 of a one-word and a two-word post search, a people prefix
# search and a tag page at each database size; then POST /api/posts req/s with the search
# column and its index, and without them (the aim: under 10% lower with them).
#
#   bench/search.sh [seconds] [sizes…]        (default 8 s per run, sizes 10000 1000000)
#
# Env: POOL (4), USERS (10000), PG_PORT (25439), SHARED (../shared), WORD_LO/WORD_HI (the
# ranks query words are drawn from, 300 and 20000). Port 18091 on 127.0.0.1 (trust mode).
# 1,000,000 posts take several minutes to seed and re-text, and ~3 GB in /tmp.
#
# The shared seed writes the same lorem ipsum into every post, where every word matches
# every post: no search looks like that. So each post's text is written again from a
# vocabulary of 50,000 words (w1 … w50000), a word of rank r drawn with probability ~1/r
# as natural languages' are (Zipf): title 6 words, summary 15, body 100. A query word of
# rank 300 is in ~3% of the posts, one of rank 20,000 in ~0.05%. Each post gets one of
# 1,000 tags the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}; shift || true
sizes=${*:-"10000 1000000"}
shared=$(cd "${SHARED:-../shared}" && pwd)
pool=${POOL:-4} users=${USERS:-10000}
pg_port=${PG_PORT:-25439} port=18091 pg_dir=/tmp/posts-server-bench-search-pg

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_build_ours
export LUA_PATH="$PWD/bench/lua/?.lua;$shared/bench/lua/?.lua;;"
export MAXUSER=$users

retext_sql() {
    cat <<'SQL'
DROP INDEX posts_search_idx;
CREATE FUNCTION pg_temp.words(n int, salt bigint) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT string_agg('w' || floor(exp(random() * ln(50000)))::int, ' ') FROM generate_series(1, n + 0 * salt)
$$;
UPDATE posts SET title = pg_temp.words(6, id), summary = pg_temp.words(15, id), body = pg_temp.words(100, id);
CREATE INDEX posts_search_idx ON posts USING gin (search);
INSERT INTO tags (name) SELECT 'tag' || g FROM generate_series(1, 1000) g;
INSERT INTO post_tags (tag_id, post_id, author_id, created_at)
SELECT t.id, p.id, p.user_id, p.created_at
FROM (SELECT id, user_id, created_at, floor(exp(random() * ln(1000)))::int AS k FROM posts) p
JOIN tags t ON t.name = 'tag' || p.k;
SQL
}

start_server() {
    DATABASE_URL=$1 PORT=$port AUTH_MODE=trust DB_POOL_SIZE=$pool RATE_LIMIT_IP=0 \
        .build/release/posts-server serve --no-migrate >/dev/null 2>&1 &
    server=$!
    bench_pids=("$server")
    bench_wait_for_port "$port" "$server"
}

stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; bench_pids=(); }

run() {  # kind connections -> "req/s p50 p99 errors"
    SEARCH=$1 wrk -t"$(( $2 < 2 ? 1 : 2 ))" -c"$2" -d"${secs}s" --latency -s bench/lua/search.lua "http://127.0.0.1:$port" |
        awk '$1 == "RESULT" { printf "%.0f %.1f %.1f %d\n", $2, $3, $4, $5 }'
}

table="" writes=""
for size in $sizes; do
    url=$(bench_database "$pg_port" "$size" "$users")
    echo "re-texting $size posts…" >&2
    psql -q "$url" -c "$(retext_sql)" >/dev/null
    psql -q "$url" -c "VACUUM ANALYZE" >/dev/null
    start_server "$url"
    # Latency with one connection (a request's own time) and with as many as the pool has
    # (four requests sharing two cores with wrk and PostgreSQL).
    for kind in one two people tag; do
        read -r _ p50 p99 errors <<<"$(run "$kind" 1)"
        read -r rps p50_pool p99_pool errors_pool <<<"$(run "$kind" "$pool")"
        table+="| $size | $kind | $p50 | $p99 | $rps | $p50_pool | $p99_pool | $((errors + errors_pool)) |"$'\n'
    done
    # The database's own time for a two-word query, first page.
    echo "== $size posts: EXPLAIN ANALYZE of a two-word search (w1000 w2000)" >&2
    psql -qAt "$url" >&2 <<SQL
EXPLAIN (ANALYZE, BUFFERS) SELECT p.id, ts_rank(p.search, s.q)::float8 AS rank
FROM (SELECT search_query('w1000 w2000') AS q) s JOIN posts p ON p.search @@ s.q
WHERE NOT p.deleted ORDER BY rank DESC, p.id DESC LIMIT 21;
SQL
    # Writes: with the column and its index, then without them (same database, same run),
    # posts as long as the seed's (121 words) and as short as a status (35 words).
    with=$(run create 64 | cut -d' ' -f1)
    with_short=$(TITLE_WORDS=5 SUMMARY_WORDS=5 BODY_WORDS=25 run create 64 | cut -d' ' -f1)
    stop_server
    psql -q "$url" -c "ALTER TABLE posts DROP COLUMN search" >/dev/null
    start_server "$url"
    without=$(run create 64 | cut -d' ' -f1)
    without_short=$(TITLE_WORDS=5 SUMMARY_WORDS=5 BODY_WORDS=25 run create 64 | cut -d' ' -f1)
    stop_server
    cost() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", (1 - a / b) * 100 }'; }
    writes+="| $size | 121 | $with | $without | $(cost "$with" "$without") |"$'\n'
    writes+="| $size | 35 | $with_short | $without_short | $(cost "$with_short" "$without_short") |"$'\n'
    "$shared/bench/pg.sh" stop "$pg_dir" >/dev/null
done

echo
echo "## bench/search.sh ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pool $pool, wrk -t2 -c$pool -d${secs}s)"
echo "| posts | query | p50 ms (1 connection) | p99 ms (1) | req/s ($pool connections) | p50 ms ($pool) | p99 ms ($pool) | errors |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s' "$table"
echo
echo "POST /api/posts (wrk -c64), req/s with the search column and index, and without:"
echo "| posts | words a post | with | without | cost |"
echo "|---|---|---|---|---|"
printf '%s' "$writes"
