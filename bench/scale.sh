#!/usr/bin/env bash
# Shows that pages cost the same at any size: seeds the shared bench data at each size
# given, then measures this server's recent50 and children scenarios (wrk, same settings as
# ../shared/bench/run.sh) and prints EXPLAIN ANALYZE of the two page queries.
#
#   bench/scale.sh [seconds] [sizes…]        (default 10 s, sizes 10000 1000000)
#
# Env: POOL (4), PG_PORT (25436), SHARED (../shared). 1,000,000 posts take ~90 s to seed
# and ~2 GB in /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}; shift || true
sizes=${*:-"10000 1000000"}
shared=$(cd "${SHARED:-../shared}" && pwd)
pool=${POOL:-4} pg_port=${PG_PORT:-25436} port=18084 pg_dir=/tmp/posts-server-bench-scale-pg

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
bench_pg_dir=$pg_dir
bench_build_ours

columns="p.id, p.user_id, p.parent_id, p.title, p.summary, p.body, p.image_url, p.created_at, p.timezone,
  p.location_tag, p.ai_generated, pr.username AS author_name, p.child_count, p.like_count, p.comment_count"
for size in $sizes; do
    url=$(bench_database "$pg_port" "$size" 10000)
    DATABASE_URL=$url PORT=$port DB_POOL_SIZE=$pool .build/release/posts-server serve --no-migrate >/dev/null &
    server=$!
    bench_pids=("$server")
    bench_wait_for_port "$port" "$server"
    echo "== $size posts" 
    MAXID=$size SCENARIOS="recent50 children" "$shared/bench/run.sh" "http://127.0.0.1:$port" "$secs"
    parent=$(psql -qAt -c "SELECT parent_id FROM posts WHERE parent_id IS NOT NULL GROUP BY parent_id ORDER BY count(*) DESC LIMIT 1" "$url")
    psql -qAt "$url" <<SQL | grep -E "Scan|Limit|Execution Time|Planning Time"
EXPLAIN (ANALYZE, BUFFERS) SELECT $columns FROM posts p LEFT JOIN profiles pr ON pr.user_id = p.user_id
  WHERE true ORDER BY p.created_at DESC, p.id DESC LIMIT 51;
EXPLAIN (ANALYZE, BUFFERS) SELECT c.* FROM (SELECT id FROM posts WHERE id = $parent) parent
  LEFT JOIN LATERAL (SELECT $columns FROM posts p LEFT JOIN profiles pr ON pr.user_id = p.user_id
  WHERE p.parent_id = parent.id ORDER BY p.created_at DESC, p.id DESC LIMIT 51) c ON true;
SQL
    kill "$server"; wait "$server" 2>/dev/null || true; bench_pids=()
    "$shared/bench/pg.sh" stop "$pg_dir" >/dev/null
done
