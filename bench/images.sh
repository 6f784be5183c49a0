#!/usr/bin/env bash
# Issue 22's image and gzip figures, in one run against one release build:
#   storm     20 clients at once each upload a 24-megapixel phone photo (6000 x 4000 JPEG,
#             EXIF orientation 6: the turn that needs the whole image): statuses, seconds,
#             and the server's peak RSS (VmHWM, reset through clear_refs just before).
#   phone     UPLOADS 12-megapixel photos (4000 x 3000, orientation 6), 4 clients at once:
#             uploads per second.
#   sizes     wrk on one stored 12 MP photo: ?width=320 (made once, then a kept file) against
#             the original; req/s and bytes per answer.
#   gzip      recent50 (GET /api/posts/recent?limit=50) with and without Accept-Encoding:
#             gzip, ROUNDS rounds alternating; req/s, bytes per answer, compression ratio,
#             and what gzip costs in req/s.
#
#   bench/images.sh [seconds]       (default 10 s per wrk run)
#
# Env: ROUNDS (3), POOL (4), CONNECTIONS (64), THREADS (2), UPLOADS (40), POSTS (100000),
# USERS (10000), PG_PORT (25437), SHARED (../shared). Port 18088 on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
rounds=${ROUNDS:-3} pool=${POOL:-4} connections=${CONNECTIONS:-64} threads=${THREADS:-2} uploads=${UPLOADS:-40}
posts=${POSTS:-100000} users=${USERS:-10000} pg_port=${PG_PORT:-25437} port=18088
pg_dir=/tmp/posts-server-bench-images-pg
scratch=$(mktemp -d /tmp/posts-server-bench-images.XXXXXX)

source bench/lib.sh
bench_need_wrk
NEEDS_TEST_TOOLS=1 source scripts/system-packages.sh
source scripts/python-tools.sh
bench_pg_dir=$pg_dir
bench_remove+=("$scratch")

bench_build_ours
url=$(bench_database "$pg_port" "$posts" "$users")
DATABASE_URL=$url PORT=$port AUTH_MODE=trust DB_POOL_SIZE=$pool RATE_LIMIT_IP=0 UPLOAD_DIR=$scratch/uploads \
    .build/release/posts-server serve --no-migrate >"$scratch/server.log" 2>&1 &
server=$!
bench_pids+=("$server")
bench_wait_for_port "$port" "$server"

echo "making the photos…" >&2
"$SMTP_RELAY_PYTHON" - "$scratch" <<'PY'
import sys
from PIL import Image, ImageFilter
out = sys.argv[1]
def photo(width, height, name):
    # Smooth colour with fine noise: compresses like a photo (a few MB), not like a flat fill.
    base = Image.radial_gradient("L").resize((width, height)).convert("RGB")
    noise = Image.effect_noise((width, height), 40).convert("RGB")
    image = Image.blend(base, noise, 0.35).filter(ImageFilter.SMOOTH)
    exif = Image.Exif()
    exif[0x0112] = 6
    exif[0x010F] = "PhoneMaker"
    image.save(f"{out}/{name}", quality=88, exif=exif)
photo(6000, 4000, "24mp.jpg")
photo(4000, 3000, "12mp.jpg")
PY
ls -l "$scratch"/*.jpg | awk '{ printf "  %s: %.1f MB\n", $NF, $5 / 1e6 }' >&2


echo "storm: 20 x 24 MP at once" >&2
rss_start=$(awk '/VmRSS/ { print $2 }' /proc/$server/status)
echo 5 >/proc/$server/clear_refs
read -r storm_secs storm_created storm_statuses _ < <(bench_upload "$port" "$scratch/24mp.jpg" 20 20)
storm_hwm=$(awk '/VmHWM/ { print $2 }' /proc/$server/status)

echo "phone: $uploads x 12 MP, 4 at a time" >&2
read -r phone_secs phone_created phone_statuses _ < <(bench_upload "$port" "$scratch/12mp.jpg" "$uploads" 4)

name=$(ls "$scratch/uploads" | grep -E '^[0-9a-f]{32}\.jpg$' | head -1)
curl -sf -o /dev/null "http://127.0.0.1:$port/uploads/$name?width=320"
bytes() { curl -s -o /dev/null -w '%{size_download}' "$@"; }
wrk_rps() {  # path [header]
    wrk -t"$threads" -c"$connections" -d"${secs}s" ${2:+-H "$2"} "http://127.0.0.1:$port$1" | awk '/Requests\/sec/ { print $2 }'
}
echo "sizes: ?width=320 against the original" >&2
size_rps=$(wrk_rps "/uploads/$name?width=320")
original_rps=$(wrk_rps "/uploads/$name")
size_bytes=$(bytes "http://127.0.0.1:$port/uploads/$name?width=320")
original_bytes=$(bytes "http://127.0.0.1:$port/uploads/$name")

echo "gzip: recent50, $rounds rounds" >&2
plain=() gzipped=()
for round in $(seq "$rounds"); do
    echo "  round $round/$rounds" >&2
    gzipped+=("$(wrk_rps "/api/posts/recent?limit=50" "Accept-Encoding: gzip")")
    plain+=("$(wrk_rps "/api/posts/recent?limit=50")")
done
plain_rps=$(bench_median "${plain[@]}") gzip_rps=$(bench_median "${gzipped[@]}")
plain_bytes=$(bytes "http://127.0.0.1:$port/api/posts/recent?limit=50")
gzip_bytes=$(bytes -H "Accept-Encoding: gzip" "http://127.0.0.1:$port/api/posts/recent?limit=50")

echo
echo "## bench/images.sh ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pool $pool, wrk -t$threads -c$connections -d${secs}s)"
echo "- storm: 20 x 24 MP JPEG at once: $storm_created created (statuses $storm_statuses) in $storm_secs s;" \
     "peak RSS $((storm_hwm / 1024)) MiB (RSS before: $((rss_start / 1024)) MiB)"
echo "- phone photos: $phone_created of $uploads 12 MP uploads created (statuses $phone_statuses) in $phone_secs s:" \
     "$(awk -v n="$phone_created" -v s="$phone_secs" 'BEGIN { printf "%.1f", n / s }') uploads/s"
echo "- ?width=320: $size_rps req/s, $size_bytes bytes; original: $original_rps req/s, $original_bytes bytes" \
     "($(awk -v a="$size_rps" -v b="$original_rps" 'BEGIN { printf "%.1f", a / b }')x)"
echo "- recent50 plain: $plain_rps req/s (rounds: ${plain[*]}), $plain_bytes bytes"
echo "- recent50 gzip: $gzip_rps req/s (rounds: ${gzipped[*]}), $gzip_bytes bytes;" \
     "ratio $(awk -v p="$plain_bytes" -v g="$gzip_bytes" 'BEGIN { printf "%.1f", p / g }'):1;" \
     "gzip costs $(awk -v p="$plain_rps" -v g="$gzip_rps" 'BEGIN { printf "%.1f", (1 - g / p) * 100 }')% req/s"
