#!/usr/bin/env bash
# Issue 43's benchmark: saving and restoring a snapshot (API.md "Snapshots"; aim: a restore
# of 1,000 posts and 100 users with their likes and comments under 50 ms at p50, of 100,000
# posts under 2 s). A throwaway `posts-server dev` (its own cluster in a temporary folder),
# demo data written by POST /api/dev/seed; for each size: the save's time, the snapshot's
# bytes, and RESTORES restores timed by curl, p50 and p99, each after what a test writes (a
# post, a like, a comment, a saved post edited: the restore puts back what changed).
#
#   bench/snapshots.sh [small-restores] [large-restores]     (default 40 and 5)
#
# Env: SHARED (../shared). Port 18095 on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
small_runs=${1:-40} large_runs=${2:-5}
shared=$(cd "${SHARED:-../shared}" && pwd)
port=18095 api="http://127.0.0.1:18095"

source bench/lib.sh
source scripts/system-packages.sh
bench_build_ours
workdir=$(mktemp -d /tmp/posts-server-bench-snapshots-XXXXXX)
chmod 755 "$workdir"
bench_remove+=("$workdir")
(cd "$workdir" && exec env PORT=$port HOST=127.0.0.1 UPLOAD_DIR="$workdir/uploads" \
    "$OLDPWD/.build/release/posts-server" dev --data-dir "$workdir/postgres") >"$workdir/server.log" 2>&1 &
bench_pids+=($!)
for _ in $(seq 600); do curl -sf "$api/api/health" >/dev/null && break; sleep 0.1; done

# A seed of 10,000 posts can outlast a statement's 3 s on a busy machine (503): tried again.
post() {
    for _ in 1 2 3 4 5; do
        curl -sf --max-time 600 -X POST -H 'Content-Type: application/json' "$api$1" ${2:+-d "$2"} && return 0
        echo "($1 failed; trying again)" >&2
        sleep 2
    done
    return 1
}
# What a test between two restores writes (not timed): a post, a like given, a comment, a
# saved post edited; the restore then puts back what they changed.
a_tests_writes() {
    local as=(-H 'X-User-Email: bench-test@example.com' -H 'Content-Type: application/json')
    curl -sf -o /dev/null "${as[@]}" -X POST "$api/api/posts" -d '{"title":"t","summary":"s","body":"b"}'
    curl -sf -o /dev/null "${as[@]}" -X PUT "$api/api/posts/$1/like"
    curl -sf -o /dev/null "${as[@]}" -X POST "$api/api/posts/$1/comments" -d '{"body":"hi"}'
    curl -sf -o /dev/null -H 'X-User-Email: bench-author@example.com' -H 'Content-Type: application/json' \
        -X PATCH "$api/api/posts/$2" -d '{"title":"edited"}'
}
# NAME RUNS POST: the restores' times in ms, sorted, one a line; a test's writes before each.
restores() {
    for i in $(seq "$2"); do
        a_tests_writes $(( i % 50 + 1 )) "$3"
        curl -sf -o /dev/null -w '%{time_total}\n' -X POST "$api/api/dev/snapshots/$1/restore"
    done | awk '{ printf "%.1f\n", $1 * 1000 }' | sort -n
}
percentile() { awk -v p="$1" '{ v[NR] = $1 } END { i = int((NR - 1) * p + 0.5) + 1; print v[i] }'; }
measure() {  # NAME RUNS
    local started saved bytes times post
    # A post of the tests' author, in the snapshot, for them to edit.
    post=$(curl -sf -H 'X-User-Email: bench-author@example.com' -H 'Content-Type: application/json' \
        -X POST "$api/api/posts" -d '{"title":"saved","summary":"s","body":"b"}' | sed -n 's/.*"post":{"id":\([0-9]*\).*/\1/p')
    started=$(date +%s%N)
    saved=$(post /api/dev/snapshots "{\"name\":\"$1\"}")
    bytes=$(echo "$saved" | sed -n 's/.*"bytes":\([0-9]*\).*/\1/p')
    echo "$1: saved in $(( ($(date +%s%N) - started) / 1000000 )) ms, $bytes bytes, $(echo "$saved" | sed -n 's/.*"users":\([0-9]*\),"posts":\([0-9]*\).*/\1 users, \2 posts/p')"
    times=$(restores "$1" "$2" "$post")
    echo "$1: $2 restores after a test's writes, p50 $(echo "$times" | percentile 0.5) ms, p99 $(echo "$times" | percentile 0.99) ms"
}

post /api/dev/reset >/dev/null
post /api/dev/seed '{"users":100,"posts":1000}' >/dev/null
measure small "$small_runs"

post /api/dev/reset >/dev/null
post /api/dev/seed '{"users":100,"posts":10000}' >/dev/null
for _ in $(seq 9); do post /api/dev/seed '{"users":0,"posts":10000}' >/dev/null; done
measure large "$large_runs"
