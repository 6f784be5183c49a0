#!/usr/bin/env bash
# Issue 13's benchmark in one command: this server against the reference peer
# (../shared/bench/hb-peer) in the same run, on the same freshly seeded database, plus the
# same-run ceilings, live events, scale, memory and a soak; writes bench/RESULTS.md.
#
#   bench/results.sh                                                (~26 min: 16 plus the 10-min soak)
#   SOAK_MINUTES=2 bench/results.sh                                 (~15 min)
#   SECS=2 ROUNDS=1 SCALE=0 SOAK_MINUTES=0 bench/results.sh        (a smoke test, ~3 min)
#
# Sections, in the order they run (write scenarios grow the database, so reads come first):
#   compare   ping post_by_id recent50 children comments like_toggle_mix comment_create:
#             ROUNDS rounds alternating ours, peer (wrk -t2 -c64 --latency, SECS s after a
#             2 s warm-up, as ../shared/bench/run.sh does); median req/s, p50, p99, errors;
#             each server's peak RSS during the scenario (VmHWM, reset through clear_refs).
#   solo      likes and changes (routes the peer lacks): the same figures, ours only. The
#             changes pages start at a position taken before the write scenarios.
#   ceiling   for each DB-bound read: pgbench -M prepared -c 8 -j 2 running the SQL the server
#             sends for it (bench/pgbench/*.sql), and ping as measured here;
#             ceiling = 1 / (1/ping + 1/pgbench), and each figure as a share of it.
#   memory    peak RSS under 256 connections (post_by_id, MEMORY_SECS s), both servers.
#   events    live-event fan-out: bench/events/sse-load.c against a fresh instance of ours
#             (latency: SUBSCRIBERS streams, 200 writes 20 ms apart; throughput: 1,000 writes
#             back to back). Run here rather than through bench/events.sh, whose ports
#             (18090/18091) are fixed and may be taken by a profiling session.
#   soak      SOAK_MINUTES of bench/lua/mixed.lua against ours; RSS each minute; non-2xx.
#   scale     recent50 and children at 10k and 1M posts (two databases, two instances of
#             ours, SCALE_ROUNDS rounds alternating after SCALE_WARMUP s of unmeasured load
#             on each), and the ratio 1M/10k.
#
# Env: SECS (10, per round), ROUNDS (2), POSTS (100000), USERS (10000), POOL (4, both
# servers), SCALE (1; 0 skips the 1M-post section: seeding it takes ~90 s and ~2 GB),
# SCALE_POSTS (1000000), SCALE_ROUNDS (3), SCALE_WARMUP (20), SOAK_MINUTES (10; 0 skips), SUBSCRIBERS (1000), MEMORY_SECS (15),
# PG_PORT (25437), OUT (bench/RESULTS.md), SHARED (../shared).
# Ports: ours 18080, the peer 18181, events 18082, scale 18086/18087, all on 127.0.0.1.
# Everything it starts stops at exit; its cluster and scratch files live in one folder
# under /tmp that is deleted at exit.
set -Eeuo pipefail
trap 'echo "bench/results.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
run_started=$(date +%s)
shared=$(cd "${SHARED:-../shared}" && pwd)
secs=${SECS:-10} rounds=${ROUNDS:-2} posts=${POSTS:-100000} users=${USERS:-10000} pool=${POOL:-4}
scale=${SCALE:-1} scale_posts=${SCALE_POSTS:-1000000} scale_rounds=${SCALE_ROUNDS:-3}
scale_warmup=${SCALE_WARMUP:-20} soak_minutes=${SOAK_MINUTES:-10}
subscribers=${SUBSCRIBERS:-1000} memory_secs=${MEMORY_SECS:-15} pg_port=${PG_PORT:-25437}
out=${OUT:-bench/RESULTS.md}
ours_port=18080 peer_port=18181 events_port=18082 small_port=18086 large_port=18087
pgbin=/usr/lib/postgresql/15/bin
[ "$secs" -ge 1 ] && [ "$secs" -le 30 ] || { echo "SECS must be 1..30" >&2; exit 2; }
command_line="SECS=$secs ROUNDS=$rounds POSTS=$posts USERS=$users POOL=$pool SCALE=$scale SCALE_POSTS=$scale_posts SCALE_ROUNDS=$scale_rounds SCALE_WARMUP=$scale_warmup SOAK_MINUTES=$soak_minutes SUBSCRIBERS=$subscribers MEMORY_SECS=$memory_secs bench/results.sh"
# The machine is shared: the load before and after says how quiet it was.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

source bench/lib.sh
bench_need_wrk
source scripts/system-packages.sh
# 256 connections (and 1,000 event streams) need descriptors on both sides.
ulimit -n "$(ulimit -Hn)"

# One scratch folder: the cluster, logs, the sse-load binary. Readable by `postgres`, which
# owns the cluster (pg.sh runs it as that user when we are root).
work=$(mktemp -d /tmp/posts-server-bench-results.XXXXXX)
chmod 755 "$work"
bench_remove+=("$work")
bench_pg_dir=$work/pg

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# ---------------------------------------------------------------------------------------
# Set-up

# A build that fails (a half-saved file in the working tree, say) is retried a minute later.
build_ours() {
    for attempt in 1 2 3; do
        swift build -c release --product posts-server >"$work/build.log" 2>&1 && return 0
        log "build failed (attempt $attempt); retrying in 60 s"; tail -n 5 "$work/build.log" >&2
        sleep 60
    done
    cat "$work/build.log" >&2; return 1
}

psql_db() { PGOPTIONS="-c client_min_messages=warning" psql -qAtX -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:$pg_port/$1" "${@:2}"; }

# DB POSTS: a fresh database, our migrations, the shared data set.
make_database() {
    psql_db postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
    DATABASE_URL=postgres://postgres@127.0.0.1:$pg_port/$1 .build/release/posts-server migrate >/dev/null
    psql_db "$1" -v posts="$2" -v users="$users" -f "$shared/bench/seed.sql" >/dev/null
}

# NAME PORT DB [ENV…]: ours in trust mode; its pid in `started_pid`. Rate limiting and the
# per-address connection cap off: the load comes from one address.
start_ours() {
    local name=$1 port=$2 db=$3; shift 3
    env DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/$db" PORT="$port" DB_POOL_SIZE="$pool" \
        AUTH_MODE=trust RATE_LIMIT_IP=0 MAX_CONNECTIONS_PER_IP=0 "$@" .build/release/posts-server serve --no-migrate >"$work/$name.log" 2>&1 &
    started_pid=$!
    bench_pids+=("$started_pid")
    bench_wait_for_port "$port" "$started_pid" || { tail -n 20 "$work/$name.log" >&2; exit 1; }
}

start_peer() {
    DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/bench" PORT=$peer_port DB_POOL_SIZE=$pool LOG_LEVEL=error \
        "$bench_peer" >"$work/peer.log" 2>&1 &
    started_pid=$!
    bench_pids+=("$started_pid")
    bench_wait_for_port "$peer_port" "$started_pid" || { tail -n 20 "$work/peer.log" >&2; exit 1; }
}

# Stops one server and forgets it, so that the exit trap never signals a reused pid.
stop_pid() {
    kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true
    local kept=() pid
    for pid in "${bench_pids[@]}"; do [ "$pid" = "$1" ] || kept+=("$pid"); done
    bench_pids=("${kept[@]}")
}

# ---------------------------------------------------------------------------------------
# Measuring

export LUA_PATH="$PWD/bench/lua/?.lua;$shared/bench/lua/?.lua;;"
export MAXID=$posts MAXUSER=$users

target() {  # scenario -> "script path"
    local s=$shared/bench/lua m=$PWD/bench/lua
    case $1 in
        ping)            echo "$s/static.lua /api/ping" ;;
        post_by_id)      echo "$s/post_by_id.lua /" ;;
        recent50)        echo "$s/static.lua /api/posts/recent?limit=50" ;;
        children)        echo "$s/children.lua /" ;;
        comments)        echo "$s/comments.lua /" ;;
        like_toggle_mix) echo "$s/like_toggle.lua /" ;;
        comment_create)  echo "$s/comment_create.lua /" ;;
        likes)           echo "$m/likes.lua /" ;;
        changes)         echo "$m/changes.lua /" ;;
        mixed)           echo "$m/mixed.lua /" ;;
        *) echo "unknown scenario: $1" >&2; return 1 ;;
    esac
}

# SCENARIO PORT [CONNECTIONS] [SECONDS] -> "req/s p50_ms p99_ms errors" ("0 - - failed" when
# wrk printed no result). Same wrk settings as the shared run.sh, bounded by `timeout`.
wrk_run() {
    local script path conns=${3:-64} seconds=${4:-$secs} out line
    read -r script path <<<"$(target "$1")"
    timeout 15 wrk -t2 -c"$conns" -d2s -s "$script" "http://127.0.0.1:$2$path" >/dev/null 2>&1 || true
    out=$(timeout $((seconds + 15)) wrk -t2 -c"$conns" -d"${seconds}s" --latency -s "$script" \
        "http://127.0.0.1:$2$path" 2>&1) || true
    line=$(grep '^RESULT ' <<<"$out" | tail -1)
    if [ -z "$line" ]; then
        sed 's/^/    wrk: /' <<<"$out" | tail -5 >&2
        echo "0 - - failed"; return
    fi
    read -r _ rps p50 p99 errors _ <<<"$line"
    echo "$rps $p50 $p99 $errors"
}

# Peak RSS: clear_refs 5 resets VmHWM to the current RSS; VmHWM is then the peak since.
rss_reset() { for pid; do echo 5 >"/proc/$pid/clear_refs"; done; }
rss_peak() { awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }   # MiB
rss_now() { awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }    # MiB

# Results: r[KEY] holds the values of every round ("KEY" = side.scenario.field), m[KEY] one value.
declare -A r m
record() {  # SIDE SCENARIO "rps p50 p99 errors"
    local rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$3"
    r[$1.$2.rps]+=" $rps" r[$1.$2.p50]+=" $p50" r[$1.$2.p99]+=" $p99" r[$1.$2.err]+=" $errors"
    log "  $1 $2: $rps req/s, p50 $p50 ms, p99 $p99 ms, errors $errors"
}
median() { tr ' ' '\n' | { grep -E '^[0-9.]+$' || true; } | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
med() { median <<<"${r[$1]:-}"; }
# Errors: the sum over rounds ("failed" if a round gave no result).
errsum() { awk '{ for (i = 1; i <= NF; i++) { if ($i == "failed") f = 1; else s += $i } } END { print (f ? "failed" : s + 0) }' <<<"${r[$1]:-}"; }

# SCENARIO: ROUNDS × (ours, peer), alternating; peak RSS of each over the scenario.
compare() {
    log "$1: $rounds round(s), ours and the peer alternating"
    rss_reset "$ours_pid" "$peer_pid"
    for _ in $(seq "$rounds"); do
        record ours "$1" "$(wrk_run "$1" $ours_port)"
        record peer "$1" "$(wrk_run "$1" $peer_port)"
    done
    m[ours.$1.rss]=$(rss_peak "$ours_pid") m[peer.$1.rss]=$(rss_peak "$peer_pid")
}

# SCENARIO: ROUNDS × ours (routes the peer lacks).
solo() {
    log "$1: $rounds round(s), ours"
    rss_reset "$ours_pid"
    for _ in $(seq "$rounds"); do record ours "$1" "$(wrk_run "$1" $ours_port)"; done
    m[ours.$1.rss]=$(rss_peak "$ours_pid")
}

# SCENARIO [pgbench -D…]: transactions/s of bench/pgbench/SCENARIO.sql alone.
pgbench_tps() {
    local file=bench/pgbench/$1.sql tps; shift
    log "pgbench $file"
    tps=$(timeout $((secs + 30)) "$pgbin/pgbench" -n -M prepared -c 8 -j 2 -T "$secs" -D maxid="$posts" "$@" \
        -f "$file" -h 127.0.0.1 -p "$pg_port" -U postgres bench 2>"$work/pgbench.err" | awk '/^tps = / { print $3; exit }')
    [ -n "$tps" ] || { tail -n 5 "$work/pgbench.err" >&2; tps=0; }
    echo "$tps"
}

# The position of GET /api/changes (no since): the changes after it are the ones still to come.
changes_position() {
    curl -fsS "http://127.0.0.1:$ours_port/api/changes" | sed -n 's/.*"next_since":"\([^"]*\)".*/\1/p'
}

# A since token (base64url of two big-endian int64) -> "txid position", for pgbench.
decode_position() {
    local t=${1//-/+} hex
    t=${t//_//}
    while [ $(( ${#t} % 4 )) -ne 0 ]; do t+="="; done
    hex=$(base64 -d <<<"$t" | od -An -tx1 | tr -d ' \n')
    echo "$((16#${hex:0:16})) $((16#${hex:16:16}))"
}

# ---------------------------------------------------------------------------------------
# Sections

section_compare_and_ceilings() {
    local s
    for s in ping post_by_id recent50 children comments; do
        compare "$s"
        [ "$s" = ping ] || m[pg.$s]=$(pgbench_tps "$s")
    done
    solo likes
    m[pg.likes]=$(pgbench_tps likes)
    m[pg.select1]=$(pgbench_tps select1)

    # Before the writes: the changes they make are what the changes pages will hold.
    since=$(changes_position)
    [ -n "$since" ] || { echo "GET /api/changes gave no next_since" >&2; exit 1; }
    for s in like_toggle_mix comment_create; do compare "$s"; done
    local page
    page=$(curl -fsS "http://127.0.0.1:$ours_port/api/changes?since=$since&limit=100")
    m[changes.count]=$(grep -o '"seq":' <<<"$page" | wc -l)
    [ "${m[changes.count]}" -gt 0 ] || { echo "the changes page after the writes is empty: $page" >&2; exit 1; }
    SINCE=$since solo changes
    local txid position
    read -r txid position <<<"$(decode_position "$since")"
    m[pg.changes]=$(pgbench_tps changes -D txid="$txid" -D position="$position")
}

section_memory() {
    local pid side port
    for side in ours peer; do
        if [ $side = ours ]; then pid=$ours_pid port=$ours_port; else pid=$peer_pid port=$peer_port; fi
        log "memory: $side, post_by_id under 256 connections for $memory_secs s"
        rss_reset "$pid"
        record "$side" mem256 "$(wrk_run post_by_id "$port" 256 "$memory_secs")"
        m[$side.mem256.rss]=$(rss_peak "$pid")
        m[$side.mem256.after]=$(rss_now "$pid")
    done
}

# key=value words of sse-load's line -> m[events.MODE.key]
section_events() {
    log "events: building sse-load; a fresh instance of ours on $events_port"
    cc -O2 -Wall -o "$work/sse-load" bench/events/sse-load.c
    # Every subscriber comes from 127.0.0.1: the per-address stream quota is off here.
    start_ours events $events_port bench MAX_CONNECTIONS=20000 MAX_STREAMS_PER_IP=0
    local pid=$started_pid mode line word args
    for mode in latency throughput; do
        if [ $mode = latency ]; then args=(-w 200 -i 20); else args=(-w 1000 -i 0); fi
        log "events: $mode, $subscribers subscribers"
        line=$(timeout 300 "$work/sse-load" -p $events_port -s "$subscribers" "${args[@]}" -m $mode -t 60 -b 200 \
            2>"$work/sse-$mode.err" | grep '^mode=' | tail -1) || true
        [ -n "$line" ] || { tail -n 5 "$work/sse-$mode.err" >&2; line="failed=1"; }
        m[events.$mode.line]=$line
        for word in $line; do m[events.$mode.${word%%=*}]=${word#*=}; done
    done
    m[events.rss]=$(rss_now "$pid") m[events.hwm]=$(rss_peak "$pid")
    stop_pid "$pid"
}

section_soak() {
    local total=$((soak_minutes * 60)) out line minute
    log "soak: $soak_minutes min of the mixed load against ours"
    rss_reset "$ours_pid"
    # A little longer than the samples, so that the last one is taken under load.
    timeout $((total + 30)) wrk -t2 -c64 -d"$((total + 5))s" --latency -s bench/lua/mixed.lua \
        "http://127.0.0.1:$ours_port/" >"$work/soak.out" 2>&1 &
    local wrk_pid=$!
    bench_pids+=("$wrk_pid")
    for minute in $(seq "$soak_minutes"); do
        sleep 60
        m[soak.rss.$minute]=$(rss_now "$ours_pid")
        log "  soak minute $minute: RSS ${m[soak.rss.$minute]} MiB"
    done
    wait "$wrk_pid" || true
    stop_pid "$wrk_pid"
    m[soak.hwm]=$(rss_peak "$ours_pid")
    line=$(grep '^RESULT ' "$work/soak.out" | tail -1) || true
    read -r _ m[soak.rps] m[soak.p50] m[soak.p99] m[soak.err] m[soak.requests] <<<"${line:-RESULT 0 - - failed 0}"
    line=$(grep '^STATUS ' "$work/soak.out" | tail -1) || true
    read -r _ m[soak.2xx] m[soak.3xx] m[soak.4xx] m[soak.5xx] <<<"${line:-STATUS - - - -}"
}

section_scale() {
    log "scale: seeding 10,000 and $scale_posts posts (the large one takes a while)"
    make_database small 10000
    make_database large "$scale_posts"
    start_ours small $small_port small; local small_pid=$started_pid
    start_ours large $large_port large; local large_pid=$started_pid
    local s
    for s in recent50 children; do
        # Freshly seeded, the large database's rows are in neither PostgreSQL's buffers nor
        # the CPU's caches; a first round then measures the warming (children at 1M: about
        # 0.8 of its later rounds). A server in use has its working set warm.
        log "scale $s: ${scale_warmup} s warm-up on each, then $scale_rounds round(s), 10k and ${scale_posts} alternating"
        if [ "$scale_warmup" -gt 0 ]; then
            MAXID=10000 wrk_run "$s" $small_port 64 "$scale_warmup" >/dev/null
            MAXID=$scale_posts wrk_run "$s" $large_port 64 "$scale_warmup" >/dev/null
        fi
        for _ in $(seq "$scale_rounds"); do
            record small "$s" "$(MAXID=10000 wrk_run "$s" $small_port)"
            record large "$s" "$(MAXID=$scale_posts wrk_run "$s" $large_port)"
        done
    done
    stop_pid "$small_pid"; stop_pid "$large_pid"
    psql_db postgres -c "DROP DATABASE small" -c "DROP DATABASE large" >/dev/null
}

# ---------------------------------------------------------------------------------------
# RESULTS.md

fmt0() { awk -v v="$1" 'BEGIN { if (v == "-" || v == "") print "-"; else printf "%.0f", v }'; }
fmt2() { awk -v v="$1" 'BEGIN { if (v == "-" || v == "") print "-"; else printf "%.2f", v }'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { print (x != "-" && y != "-" && y > 0 ? sprintf("%.2f", x / y) : "-") }'; }
pct() { awk -v x="$1" -v y="$2" 'BEGIN { print (x != "-" && y != "-" && y > 0 ? sprintf("%.0f%%", 100 * x / y) : "-") }'; }
# VALUE OP LIMIT -> met / **missed** (or "-" without a value)
verdict() {
    awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN {
        if (v == "-" || v == "" || v == "failed") { print "-"; exit }
        ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0)
        print (ok ? "met" : "**missed**") }'
}
both() {  # two verdicts -> one
    if [ "$1" = met ] && [ "$2" = met ]; then echo met; elif [ "$1" = - ] || [ "$2" = - ]; then echo -; else echo "**missed**"; fi
}
# The HTTP ceiling of this machine: the faster ping of the two servers.
ping_ceiling() { awk -v a="$(med ours.ping.rps)" -v b="$(med peer.ping.rps)" 'BEGIN { print (a > b ? a : b) }'; }
ceiling() { awk -v p="$(ping_ceiling)" -v q="$1" 'BEGIN { print (p > 0 && q > 0 ? 1 / (1 / p + 1 / q) : "-") }'; }

write_results() {
    local s ro rp ratio_v target verdict_v p99o p99p cell elapsed commit dirty
    elapsed=$(( $(date +%s) - run_started ))
    commit=$(git rev-parse --short HEAD)
    dirty=$(git status --porcelain -- Sources Package.swift | wc -l)
    {
        echo "# Benchmark results"
        echo
        echo "Written by \`bench/results.sh\` (issue 13). Ratios are what count: both servers run in the same"
        echo "run, on the same database, rounds alternating; absolute figures move 15–50% between runs on"
        echo "this shared machine."
        echo
        echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); run took $((elapsed / 60)) min $((elapsed % 60)) s"
        echo "- machine: $(nproc) cores ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory, $(uname -sr); PostgreSQL $("$pgbin/postgres" --version | awk '{ print $3 }') on the same host (shared/bench/pg.sh: fsync off)"
        echo "- load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- commit: $commit$([ "$dirty" -eq 0 ] || echo " plus $dirty uncommitted file(s) in Sources/ (built as found)")"
        echo "- command: \`$command_line\`"
        echo "- data: shared/bench/seed.sql, $posts posts, $users users; pool $pool connections each; wrk -t2 -c64 --latency, $secs s per round after a 2 s warm-up, $rounds round(s) alternating ours / peer; figures are medians over rounds, errors the sum"
        echo "- peer: hb-peer (Hummingbird 2 + PostgresNIO), shared/bench/hb-peer"
        echo
        echo "## Ours vs the peer"
        echo
        echo "| scenario | ours req/s | peer req/s | ours/peer | ours p50 ms | ours p99 ms | peer p50 ms | peer p99 ms | errors ours / peer | peak RSS MiB ours / peer | target | |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
        for s in ping post_by_id recent50 children comments like_toggle_mix comment_create; do
            ro=$(med ours.$s.rps) rp=$(med peer.$s.rps) ratio_v=$(ratio "$ro" "$rp")
            p99o=$(med ours.$s.p99) p99p=$(med peer.$s.p99)
            case $s in
                post_by_id | recent50 | children | comments)
                    target="≥ 2.0× and p99 ≤ peer's"
                    verdict_v=$(both "$(verdict "$ratio_v" ">=" 2.0)" "$(verdict "$p99o" "<=" "$p99p")") ;;
                *) target="≥ 1.5×"; verdict_v=$(verdict "$ratio_v" ">=" 1.5) ;;
            esac
            echo "| $s | $(fmt0 "$ro") | $(fmt0 "$rp") | $ratio_v | $(fmt2 "$(med ours.$s.p50)") | $(fmt2 "$p99o") | $(fmt2 "$(med peer.$s.p50)") | $(fmt2 "$p99p") | $(errsum ours.$s.err) / $(errsum peer.$s.err) | ${m[ours.$s.rss]:-} / ${m[peer.$s.rss]:-} | $target | $verdict_v |"
        done
        for s in likes changes; do
            echo "| $s (ours only) | $(fmt0 "$(med ours.$s.rps)") | - | - | $(fmt2 "$(med ours.$s.p50)") | $(fmt2 "$(med ours.$s.p99)") | - | - | $(errsum ours.$s.err) / - | ${m[ours.$s.rss]:-} / - | | |"
        done
        echo
        echo "changes: pages from a position taken before the write scenarios (each page held ${m[changes.count]} changes)."
        echo
        echo "## Share of the same-run ceiling"
        echo
        echo "ceiling = 1 / (1/ping + 1/pgbench): the HTTP round trip alone (the faster ping of the two servers"
        echo "here, $(fmt0 "$(ping_ceiling)") req/s) plus the scenario's SQL alone (\`pgbench -n -M prepared -c 8 -j 2 -T $secs\`"
        echo "with bench/pgbench/<scenario>.sql, the statements the server sends). pgbench \`SELECT 1\`: $(fmt0 "${m[pg.select1]}") tps."
        echo
        echo "| scenario | pgbench tps | ceiling req/s | ours req/s | ours share | peer share | target | |"
        echo "|---|---:|---:|---:|---:|---:|---|---|"
        for s in post_by_id recent50 children comments likes changes; do
            local c share
            c=$(ceiling "${m[pg.$s]}") ro=$(med ours.$s.rps) rp=$(med peer.$s.rps)
            share=$(pct "$ro" "$c")
            target="" verdict_v=""
            [ $s != post_by_id ] || { target="≥ 50%"; verdict_v=$(verdict "$(ratio "$ro" "$c")" ">=" 0.5); }
            echo "| $s | $(fmt0 "${m[pg.$s]}") | $(fmt0 "$c") | $(fmt0 "$ro") | $share | $(pct "$rp" "$c") | $target | $verdict_v |"
        done
        echo
        echo "## Memory"
        echo
        echo "post_by_id with wrk -t2 -c256 for $memory_secs s (after a 2 s warm-up); peak RSS = VmHWM since a reset just before."
        echo
        echo "| server | req/s | p99 ms | errors | peak RSS MiB | RSS after MiB | target | |"
        echo "|---|---:|---:|---:|---:|---:|---|---|"
        for s in ours peer; do
            target="" verdict_v=""
            [ $s != ours ] || { target="≤ 64 MiB"; verdict_v=$(verdict "${m[ours.mem256.rss]}" "<=" 64); }
            echo "| $s | $(fmt0 "$(med $s.mem256.rps)") | $(fmt2 "$(med $s.mem256.p99)") | $(errsum $s.mem256.err) | ${m[$s.mem256.rss]} | ${m[$s.mem256.after]} | $target | $verdict_v |"
        done
        echo
        echo "## Live events (SSE fan-out, ours)"
        echo
        echo "bench/events/sse-load.c against a fresh instance of ours (same database, pool $pool): $subscribers"
        echo "subscribers on GET /api/events; latency = the write's request sent → the event read by a subscriber."
        echo
        echo "| mode | writes | delivered | missing | p50 ms | p99 ms | max ms | events/s | set-up s |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        for s in latency throughput; do
            echo "| $s | ${m[events.$s.writes_ok]:-failed} of ${m[events.$s.writes]:-?}$([ $s = latency ] && echo ", ${m[events.$s.interval_ms]:-?} ms apart" || echo ", back to back") | ${m[events.$s.delivered]:-} | ${m[events.$s.missing]:-} | ${m[events.$s.p50_ms]:-} | ${m[events.$s.p99_ms]:-} | ${m[events.$s.max_ms]:-} | $(fmt0 "${m[events.$s.events_per_s]:--}") | ${m[events.$s.setup_s]:-} |"
        done
        echo
        echo "Server RSS after both runs: ${m[events.rss]} MiB (peak ${m[events.hwm]} MiB)."
        echo
        echo "## Soak"
        echo
        if [ "$soak_minutes" -eq 0 ]; then
            echo "Skipped (SOAK_MINUTES=0)."
        else
            local first=${m[soak.rss.1]} last=${m[soak.rss.$soak_minutes]} growth
            growth=$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%+.1f%%", 100 * (b - a) / a }')
            echo "$soak_minutes min of bench/lua/mixed.lua (post_by_id 30%, recent50 10%, children 15%, comments 15%,"
            echo "likes 10%, like/unlike 12%, comment create 8%) with wrk -t2 -c64 against ours."
            echo
            echo "| req/s | p50 ms | p99 ms | requests | 2xx | 3xx | 4xx | 5xx | socket errors + non-2xx/3xx | RSS after min 1 MiB | RSS at the end MiB | change | peak MiB | target | |"
            echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
            echo "| $(fmt0 "${m[soak.rps]}") | $(fmt2 "${m[soak.p50]}") | $(fmt2 "${m[soak.p99]}") | ${m[soak.requests]} | ${m[soak.2xx]} | ${m[soak.3xx]} | ${m[soak.4xx]} | ${m[soak.5xx]} | ${m[soak.err]} | $first | $last | $growth | ${m[soak.hwm]} | within ±10% | $(awk -v a="$first" -v b="$last" 'BEGIN { d = (b - a) / a; print (d <= 0.10 && d >= -0.10 ? "met" : "**missed**") }') |"
            echo
            echo "RSS each minute (MiB): $(for i in $(seq "$soak_minutes"); do printf '%s ' "${m[soak.rss.$i]}"; done)"
        fi
        echo
        echo "## Scale"
        echo
        if [ "$scale" != 1 ]; then
            echo "Skipped (SCALE=0)."
        else
            echo "Two databases seeded with shared/bench/seed.sql (10,000 and $scale_posts posts, $users users), one"
            echo "instance of ours on each; ${scale_warmup} s of unmeasured load on each per scenario, then $scale_rounds rounds alternating."
            echo
            echo "| scenario | 10k req/s | 10k p99 ms | $((scale_posts / 1000))k req/s | $((scale_posts / 1000))k p99 ms | errors | large/small | target | |"
            echo "|---|---:|---:|---:|---:|---:|---:|---|---|"
            for s in recent50 children; do
                ro=$(med small.$s.rps) rp=$(med large.$s.rps) ratio_v=$(ratio "$rp" "$ro")
                echo "| $s | $(fmt0 "$ro") | $(fmt2 "$(med small.$s.p99)") | $(fmt0 "$rp") | $(fmt2 "$(med large.$s.p99)") | $(errsum small.$s.err) / $(errsum large.$s.err) | $ratio_v | ≥ 0.85 | $(verdict "$ratio_v" ">=" 0.85) |"
            done
        fi
        echo
        echo "## Errors"
        echo
        local total=0 e
        for e in "${!r[@]}"; do
            case $e in *.err) total=$(awk -v t="$total" -v v="$(errsum "$e")" 'BEGIN { print (v == "failed" || t == "failed") ? "failed" : t + v }') ;; esac
        done
        echo "Non-2xx/3xx answers, socket errors and timeouts over every wrk run above (no scenario intends any): $total$([ "$soak_minutes" -eq 0 ] || echo ", soak: ${m[soak.err]}") — target zero: $(verdict "$total" "<=" 0)."
        echo
        echo "## Profile"
        echo
        # Profiles are taken by hand (perf needs a quiet machine and a person reading it):
        # bench/PROFILE.md holds them, and each run carries them along.
        if [ -f bench/PROFILE.md ]; then cat bench/PROFILE.md; else echo "<!-- profile -->"; fi
        echo
        echo "## Every round"
        echo
        echo "Each round's figure, rounds in the order run (small/large: the scale section's 10k and large databases)."
        echo
        echo '```'
        for e in $(printf '%s\n' "${!r[@]}" | sort); do printf '%-32s %s\n' "$e" "${r[$e]}"; done
        echo "events.latency    ${m[events.latency.line]:-}"
        echo "events.throughput ${m[events.throughput.line]:-}"
        echo '```'
    } >"$out"
    log "wrote $out"
}

# ---------------------------------------------------------------------------------------

log "building this server (release)"
build_ours
bench_build_peer
url=$("$shared/bench/pg.sh" start "$bench_pg_dir" "$pg_port")
log "seeding $posts posts, $users users"
make_database bench "$posts"
start_ours ours $ours_port bench; ours_pid=$started_pid
start_peer; peer_pid=$started_pid
log "ours pid $ours_pid on $ours_port, peer pid $peer_pid on $peer_port; pool $pool each; $url"

section_compare_and_ceilings
section_memory
section_events
[ "$soak_minutes" -eq 0 ] || section_soak
# The scale section runs alone: its own two instances on its own databases.
stop_pid "$peer_pid"; stop_pid "$ours_pid"
[ "$scale" != 1 ] || section_scale
write_results
