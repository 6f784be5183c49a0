#!/usr/bin/env bash
# Issue 44's benchmark: direct pushes to APNs (API.md "Push to every device"; aim: 10,000
# notifications to one local HTTP/2 test server at ≥ 1,000 a second from one instance,
# over one connection). The APNs stand-in is the tests' (Tests/TestSupport/push_services.py:
# HTTP/2 over TLS, each provider token's signature verified), niced like another machine's
# service. NOTIFICATIONS notifications are written at once (RECIPIENTS people with an
# iPhone each, as many notifications each, a `push.deliver` job each, as a write queues
# them), then timed from their commit until the stand-in has accepted the last: pushes/s,
# the connections the stand-in saw, and the server's CPU seconds meanwhile.
#
#   bench/push.sh
#
# Env: NOTIFICATIONS (10000), RECIPIENTS (10: the server keeps 1,000 notifications a
# person), PG_PORT (25438), SHARED (../shared), PROGRESS (set: what is accepted and what
# waits, every second), SERVICES_NICE (19).
set -euo pipefail
cd "$(dirname "$0")/.."
notifications=${NOTIFICATIONS:-10000} recipients=${RECIPIENTS:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
pg_port=${PG_PORT:-25438} port=18096 pg_dir=/tmp/posts-server-bench-push-pg
api="http://127.0.0.1:$port"
services_dir=$(mktemp -d /tmp/posts-server-bench-push.XXXXXX)

source bench/lib.sh
NEEDS_TEST_TOOLS=1 source scripts/system-packages.sh
source scripts/python-tools.sh
bench_pg_dir=$pg_dir
bench_remove+=("$services_dir")

bench_build_ours
url=$(bench_database "$pg_port")

nice -n "${SERVICES_NICE:-19}" "$SMTP_RELAY_PYTHON" Tests/TestSupport/push_services.py --dir "$services_dir" >"$services_dir/services.log" 2>&1 &
bench_pids+=($!)
for _ in $(seq 300); do [ -s "$services_dir/ready" ] && break; sleep 0.1; done
origin="https://127.0.0.1:$(cat "$services_dir/ready")"

DATABASE_URL=$url PORT=$port AUTH_MODE=trust RATE_LIMIT_IP=0 \
    APNS_KEY_FILE="$services_dir/apns.p8" APNS_KEY_ID=ABC123DEFG APNS_TEAM_ID=DEF123GHIJ APNS_TOPIC=app.posts.test \
    APNS_URL="$origin" PUSH_CA_FILE="$services_dir/ca.pem" \
    .build/release/posts-server serve --no-migrate >"$services_dir/server.log" 2>&1 &
server=$!
bench_pids+=($server)
bench_wait_for_port "$port" $server

# The people: an actor, and recipients with an iPhone each (a token of 64 hex digits).
curl -sf -o /dev/null -H 'X-User-Email: bench-actor@example.com' "$api/api/me"
for i in $(seq "$recipients"); do
    curl -sf -o /dev/null -H "X-User-Email: bench-recipient-$i@example.com" -H 'Content-Type: application/json' \
        -X PUT "$api/api/me/push-tokens" -d "{\"platform\":\"apns\",\"token\":\"$(printf '%064x' "$i")\"}"
done

cpu() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
accepted() { grep -c '"service": "apns".*"status": 200' "$services_dir/records.jsonl" || true; }
ticks=$(getconf CLK_TCK)
cpu_before=$(cpu)
started=$(date +%s%N)
# What a like's statement queues, written at once: the notifications and their jobs.
psql -q "$url" <<SQL
WITH recipients AS (
    SELECT user_id FROM profiles p JOIN users u ON u.id = p.user_id WHERE u.email LIKE 'bench-recipient-%'
), actor AS (
    SELECT u.id FROM users u WHERE u.email = 'bench-actor@example.com'
), made AS (
    INSERT INTO notifications (recipient_id, actor_id, type)
    SELECT r.user_id, a.id, 'followed'
    FROM recipients r CROSS JOIN actor a CROSS JOIN generate_series(1, $notifications / $recipients)
    RETURNING id
)
INSERT INTO jobs (kind, payload, run_at, created_at)
SELECT 'push.deliver', json_build_object('notification_id', id, 'delivery_id', gen_random_uuid()), now(), now()
FROM made ORDER BY id;
SQL
total=$(( notifications / recipients * recipients ))
pending() { psql -qtA "$url" -c "SELECT count(*) FILTER (WHERE kind = 'push.deliver') || ' notifications, ' ||
    count(*) FILTER (WHERE kind = 'push.send') || ' devices' FROM jobs WHERE kind LIKE 'push.%' AND state <> 'dead'"; }
last_report=$started
while [ "$(accepted)" -lt "$total" ]; do
    sleep 0.05
    if [ -n "${PROGRESS:-}" ] && [ $(( $(date +%s%N) - last_report )) -gt 1000000000 ]; then
        last_report=$(date +%s%N)
        echo "  $(( (last_report - started) / 1000000 )) ms: $(accepted) accepted; waiting: $(pending)" >&2
    fi
    if [ $(( ($(date +%s%N) - started) / 1000000000 )) -gt 300 ]; then
        echo "push: only $(accepted) of $total accepted after 300 s" >&2
        exit 1
    fi
done
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
cpu_seconds=$(awk -v a="$cpu_before" -v b="$(cpu)" -v t="$ticks" 'BEGIN { printf "%.1f", (b - a) / t }')
connections=$(grep -c '"event": "connection"' "$services_dir/records.jsonl")
rate=$(awk -v n="$total" -v ms="$elapsed_ms" 'BEGIN { printf "%.0f", n * 1000 / ms }')
echo "push: $total notifications to the APNs stand-in in $elapsed_ms ms: $rate a second;" \
    "$connections connection(s); the server's CPU $cpu_seconds s"
