#!/usr/bin/env bash
# Measures live-event delivery (GET /api/events): SUBSCRIBERS open streams, then WRITES posts
# are created one at a time on the first instance, and bench/events/sse-load.c reports
# how many events reached every subscriber, how late (send of the write's request → event
# read), duplicates and order, and events/s; then each server's memory (VmRSS, VmHWM).
#
#   bench/events.sh
#   SUBSCRIBERS=50 WRITES=20 bench/events.sh                  (a smoke test)
#   INSTANCES=2 bench/events.sh                               (subscribers split over both
#                                                              instances: half of them
#                                                              measure cross-instance delivery)
#   INSTANCES=2 CROSS=1 bench/events.sh                       (all subscribers on the second
#                                                              instance, writes on the first)
#   MODE=throughput WRITES=2000 bench/events.sh               (writes back to back: events/s)
#
# Env: SUBSCRIBERS (1000), WRITES (200), INTERVAL_MS (20; 0 = back to back), MODE (latency |
# throughput), INSTANCES (1 | 2; ports 18090, 18091), CROSS (0 | 1), TIMEOUT (60 s, for the
# set-up and again for the run), BATCH (200 streams being set up at once), POOL (4),
# MAX_CONNECTIONS (20000), NOTIFY (1: a NOTIFY trigger on `changes`, to compare with
# polling alone), SERVER_ENV (extra server environment, e.g. "LOG_FORMAT=json"),
# PG_PORT (25434), SHARED (../shared). A fresh cluster in /tmp/posts-server-bench-events-pg;
# server logs in /tmp/posts-server-bench-events-<port>.log. Everything listens on loopback
# and stops at the end. The exit status is sse-load's: 0 when every event arrived once, in
# order.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=$(cd "${SHARED:-../shared}" && pwd)
subscribers=${SUBSCRIBERS:-1000} writes=${WRITES:-200} interval=${INTERVAL_MS:-20} mode=${MODE:-latency}
instances=${INSTANCES:-1} cross=${CROSS:-0} timeout=${TIMEOUT:-60} batch=${BATCH:-200}
pool=${POOL:-4} max_connections=${MAX_CONNECTIONS:-20000} pg_port=${PG_PORT:-25434}
read -r -a server_env <<<"${SERVER_ENV:-}"
pg_dir=/tmp/posts-server-bench-events-pg load=/tmp/sse-load
all_ports=(18090 18091)
case "$instances" in 1 | 2) ;; *) echo "INSTANCES must be 1 or 2" >&2; exit 2 ;; esac
case "$mode" in latency | throughput) ;; *) echo "MODE must be latency or throughput" >&2; exit 2 ;; esac
if [ "$cross" = 1 ] && [ "$instances" != 2 ]; then echo "CROSS=1 needs INSTANCES=2" >&2; exit 2; fi
ports=("${all_ports[@]:0:$instances}")

source bench/lib.sh
source scripts/system-packages.sh
# Streams hold a descriptor each, on both sides: as many as allowed (sse-load raises its own).
ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((subscribers + 1024)) ]; then
    echo "ulimit -n is $(ulimit -n): too few descriptors for $subscribers subscribers" >&2
    exit 2
fi

bench_pg_dir=$pg_dir

for port in "${ports[@]}"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "port $port is in use" >&2; exit 1; fi
done

echo "building this server (release) and sse-load…" >&2
swift build -c release --product posts-server >/dev/null
cc -O2 -Wall -o "$load" bench/events/sse-load.c

url=$(bench_database "$pg_port")
if [ "${NOTIFY:-0}" = 1 ]; then
    # The alternative to polling: every statement that records changes wakes the feeds.
    psql -q "$url" -c "CREATE FUNCTION bench_notify_changes() RETURNS trigger LANGUAGE plpgsql AS \$\$
        BEGIN PERFORM pg_notify('posts_server_changes', ''); RETURN NULL; END \$\$" \
        -c "CREATE TRIGGER bench_notify AFTER INSERT ON changes FOR EACH STATEMENT EXECUTE FUNCTION bench_notify_changes()"
fi

for port in "${ports[@]}"; do
    # Every subscriber comes from 127.0.0.1: the per-address stream and connection limits are off here.
    env DATABASE_URL="$url" PORT="$port" DB_POOL_SIZE="$pool" AUTH_MODE=trust RATE_LIMIT_IP=0 MAX_STREAMS_PER_IP=0 \
        MAX_CONNECTIONS_PER_IP=0 \
        MAX_CONNECTIONS="$max_connections" "${server_env[@]}" \
        .build/release/posts-server serve --no-migrate >"/tmp/posts-server-bench-events-$port.log" 2>&1 &
    bench_pids+=($!)
done
for i in "${!ports[@]}"; do
    port=${ports[$i]}
    if ! bench_wait_for_port "$port" "${bench_pids[$i]}"; then
        echo "the server on port $port did not start; its log:" >&2
        tail -n 20 "/tmp/posts-server-bench-events-$port.log" >&2
        exit 1
    fi
done

args=(-s "$subscribers" -w "$writes" -i "$interval" -m "$mode" -t "$timeout" -b "$batch" -W "${ports[0]}")
if [ "$cross" = 1 ]; then
    args+=(-p "${ports[1]}")
else
    for port in "${ports[@]}"; do args+=(-p "$port"); done
fi
where="subscribers over ports ${ports[*]}, writes on ${ports[0]}"
[ "$cross" = 1 ] && where="subscribers all on ${ports[1]}, writes on ${ports[0]}"
echo "$instances instance(s), pool $pool each; $subscribers subscribers, $writes writes every $interval ms" \
    "($mode); $where" >&2
rc=0
"$load" "${args[@]}" || rc=$?

for i in "${!ports[@]}"; do
    pid=${bench_pids[$i]} port=${ports[$i]}
    if [ -r "/proc/$pid/status" ]; then
        memory=$(awk '/^VmRSS|^VmHWM/ { printf "%s=%s%s ", $1, $2, $3 }' "/proc/$pid/status" | tr -d ':')
        feed=$(curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null |
            awk '/^events_(subscribers|delivered_total|lag_seconds) / { printf "%s=%s ", $1, $2 }' || true)
        echo "server port=$port pid=$pid ${memory}${feed% }"
    else
        echo "server port=$port pid=$pid is gone; its log:" >&2
        tail -n 20 "/tmp/posts-server-bench-events-$port.log" >&2
        rc=1
    fi
done
exit "$rc"
