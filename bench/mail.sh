#!/usr/bin/env bash
# What the mailer costs the request path, and how fast it delivers, in one run:
#   on   send-code against a server whose mailer delivers to an aiosmtpd relay on loopback
#   off  send-code against a server without SMTP_URL (its messages only wait in the outbox)
# Each has a database of its own in one cluster (a mailer would otherwise deliver the other
# server's rows too); rounds alternate on, off. Then `drain`: DRAIN messages put straight
# into the mailer's outbox at once, timed until the last is marked sent: messages/s.
#
#   bench/mail.sh [seconds]      (default 10 s per scenario per round)
#
# Env: ROUNDS (3), POOL (4), CONNECTIONS (32), THREADS (2), DRAIN (2000), PG_PORT (25437),
# SHARED (../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
rounds=${ROUNDS:-3} pool=${POOL:-4} connections=${CONNECTIONS:-32} threads=${THREADS:-2} drain=${DRAIN:-2000}
pg_port=${PG_PORT:-25437} on_port=18086 off_port=18087 pg_dir=/tmp/posts-server-bench-mail-pg
relay_dir=$(mktemp -d /tmp/posts-server-bench-relay.XXXXXX)

source bench/lib.sh
bench_need_wrk
NEEDS_TEST_TOOLS=1 source scripts/system-packages.sh
source scripts/python-tools.sh
bench_pg_dir=$pg_dir
bench_remove+=("$relay_dir")

bench_build_ours
on_url=$(bench_database "$pg_port")
off_url=${on_url%/bench}/bench_off
psql -q "$on_url" -c "CREATE DATABASE bench_off"
DATABASE_URL=$off_url .build/release/posts-server migrate >/dev/null

# The relay stands in for another machine: niced, so that on a small box its Python takes
# the CPU the server leaves rather than the server's (it still shares the cores).
nice -n 19 "$SMTP_RELAY_PYTHON" Tests/TestSupport/smtp_relay.py --record "$relay_dir/messages.jsonl" \
    --rules "$relay_dir/rules" --ready "$relay_dir/ready" >"$relay_dir/relay.log" 2>&1 &
bench_pids+=($!)
for _ in $(seq 100); do [ -s "$relay_dir/ready" ] && break; sleep 0.1; done
relay_port=$(cat "$relay_dir/ready")

start() {  # port url [SMTP_URL]
    DATABASE_URL=$2 PORT=$1 DB_POOL_SIZE=$pool RATE_LIMIT_IP=0 AUTH_MODE=token SMTP_URL=${3:-} \
        MAIL_FROM='Bench <bench@posts.test>' .build/release/posts-server serve --no-migrate >/dev/null 2>&1 &
    bench_pids+=($!)
    bench_wait_for_port "$1" $!
}
start $on_port "$on_url" "smtp://127.0.0.1:$relay_port?starttls=off"
start $off_port "$off_url"

unsent() { psql -qtA "$on_url" -c "SELECT count(*) FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL"; }
wait_drained() { for _ in $(seq 1200); do [ "$(unsent)" = 0 ] && return 0; sleep 0.05; done; return 1; }
now() { date +%s.%N; }

declare -A results
measure() {  # label port
    local rps
    rps=$(wrk -t"$threads" -c"$connections" -d"${secs}s" -s bench/lua/send-code.lua "http://127.0.0.1:$2" \
        | awk '/Requests\/sec/ { print $2 }')
    results[$1]="${results[$1]:-} $rps"
}
for round in $(seq "$rounds"); do
    echo "round $round/$rounds" >&2
    measure on $on_port
    # The backlog the load left is delivered before the next round, so each round starts alike.
    start_drain=$(now) sent_before=$(wc -l <"$relay_dir/messages.jsonl")
    wait_drained || echo "the mailer did not drain the queue in 60 s" >&2
    echo "  backlog after the round: $(( $(wc -l <"$relay_dir/messages.jsonl") - sent_before )) messages delivered in $(awk -v s="$start_drain" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }') s" >&2
    measure off $off_port
done

echo "drain: $drain messages queued at once" >&2
before=$(wc -l <"$relay_dir/messages.jsonl")
psql -q "$on_url" -c "INSERT INTO outbox (recipient, subject, body)
    SELECT 'drain' || n || '@bench.test', 'Your sign-in code: 123456', 'Your sign-in code is 123456.' FROM generate_series(1, $drain) n"
started=$(now)
wait_drained || echo "the mailer did not drain the queue in 60 s" >&2
elapsed=$(awk -v s="$started" -v e="$(now)" 'BEGIN { print e - s }')
delivered=$(( $(wc -l <"$relay_dir/messages.jsonl") - before ))

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
on=$(median <<<"${results[on]}") off=$(median <<<"${results[off]}")
echo "send-code, pool $pool, wrk -t$threads -c$connections, median of $rounds × $secs s (rounds: on${results[on]}; off${results[off]})"
printf 'mailer on   %8.0f req/s\nmailer off  %8.0f req/s\non/off      %8.2f\n' "$on" "$off" "$(awk -v a="$on" -v b="$off" 'BEGIN { print a / b }')"
printf 'delivery    %8.0f messages/s (%d to the loopback relay in %.2f s)\n' \
    "$(awk -v n="$delivered" -v t="$elapsed" 'BEGIN { print n / t }')" "$delivered" "$elapsed"
