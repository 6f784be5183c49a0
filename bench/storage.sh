#!/usr/bin/env bash
# Issue 25's storage figures, one release build, one database, two servers side by side:
# one keeping images in a folder (the default), one in a bucket of SeaweedFS (`weed mini`,
# the store of the tests) on this machine.
#   reads     wrk on one stored 12-megapixel photo's original and its ?width=320, from
#             each server, ROUNDS rounds alternating: req/s and p99.
#   uploads   UPLOADS 12 MP photos, 4 clients at once, to each: uploads per second.
#   storm     100 clients at once each upload a 10 MiB PNG (noise, 1,860 x 1,860: decoded
#             and written again, then streamed to the bucket): statuses, seconds and the
#             bucket server's peak RSS (VmHWM, reset through clear_refs just before).
#
#   bench/storage.sh [seconds]       (default 10 s per wrk run)
#
# Env: PARTS ("uploads reads storm": which to run; reads need uploads), ROUNDS (3), POOL (4),
# CONNECTIONS (64), THREADS (2), UPLOADS (20), STORM (100),
# PG_PORT (25438), SHARED (../shared). Ports 18090 (folder), 18091 (bucket), 18300-18304
# and 28300-28304 (the store).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
rounds=${ROUNDS:-3} pool=${POOL:-4} connections=${CONNECTIONS:-64} threads=${THREADS:-2}
uploads=${UPLOADS:-20} storm=${STORM:-100} pg_port=${PG_PORT:-25438} parts=${PARTS:-uploads reads storm}
file_port=18090 s3_port=18091
pg_dir=/tmp/posts-server-bench-storage-pg
scratch=$(mktemp -d /tmp/posts-server-bench-storage.XXXXXX)

source bench/lib.sh
bench_need_wrk
NEEDS_TEST_TOOLS=1 source scripts/system-packages.sh
source scripts/python-tools.sh
bench_pg_dir=$pg_dir
bench_remove+=("$scratch")

bench_build_ours
url=$(bench_database "$pg_port")

echo "starting SeaweedFS…" >&2
echo '{"identities":[{"name":"bench","credentials":[{"accessKey":"bench","secretKey":"bench-secret"}],"actions":["Admin","Read","Write","List"]}]}' \
    >"$scratch/s3.json"
mkdir -p "$scratch/weed"
"$WEED" mini -dir="$scratch/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port=18300 -volume.port=18301 \
    -filer.port=18302 -s3.port=18303 -admin.port=18304 -s3.port.iceberg=0 -s3.port.lance=0 -admin.ui=false \
    -webdav=false -s3.config="$scratch/s3.json" -bucket=bench >"$scratch/weed.log" 2>&1 &
bench_pids+=("$!")
bench_wait_for_port 18303 "$!" || { echo "SeaweedFS did not start: $(tail -5 "$scratch/weed.log")" >&2; exit 1; }
# The S3 port answers before the bucket is made, and a server refuses to start without it.
for _ in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:18302/buckets/bench/ && break; sleep 0.2; done

serve() {  # port [env…]: a server on the shared database; its pid in $served
    env DATABASE_URL="$url" PORT="$1" AUTH_MODE=trust DB_POOL_SIZE="$pool" RATE_LIMIT_IP=0 "${@:2}" \
        .build/release/posts-server serve --no-migrate >"$scratch/server-$1.log" 2>&1 &
    served=$!
    bench_pids+=("$served")
    bench_wait_for_port "$1" "$served" || { echo "the server on $1 did not start: $(tail -3 "$scratch/server-$1.log")" >&2; exit 1; }
}
serve "$file_port" UPLOAD_DIR="$scratch/file-uploads"
# The bucket may still be on its way up: the server rides that out (health says when).
serve "$s3_port" UPLOAD_DIR="$scratch/s3-uploads" \
    STORAGE_URL="s3://bench/images?endpoint=http://127.0.0.1:18303&path_style=true" \
    S3_ACCESS_KEY_ID=bench S3_SECRET_ACCESS_KEY=bench-secret
s3_server=$served
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$s3_port/api/health" | grep -q '"storage":"ok"' && break
    sleep 0.2
done

echo "making the photos…" >&2
"$SMTP_RELAY_PYTHON" - "$scratch" <<'PY'
import os, sys
from PIL import Image, ImageFilter
out = sys.argv[1]
base = Image.radial_gradient("L").resize((4000, 3000)).convert("RGB")
noise = Image.effect_noise((4000, 3000), 40).convert("RGB")
Image.blend(base, noise, 0.35).filter(ImageFilter.SMOOTH).save(f"{out}/12mp.jpg", quality=88)
# Noise does not compress: 1,860 x 1,860 x 3 bytes is a PNG just under the 10 MiB an image may have.
Image.frombytes("RGB", (1860, 1860), os.urandom(1860 * 1860 * 3)).save(f"{out}/10mib.png")
PY
ls -l "$scratch"/12mp.jpg "$scratch"/10mib.png | awk '{ printf "  %s: %.1f MiB\n", $NF, $5 / 1048576 }' >&2


wants() { [[ " $parts " == *" $1 "* ]]; }
report=()
if wants uploads || wants reads; then
echo "uploads: $uploads x 12 MP to each, 4 at a time" >&2
read -r file_up_secs file_up_created file_up_statuses file_image < <(bench_upload "$file_port" "$scratch/12mp.jpg" "$uploads" 4)
read -r s3_up_secs s3_up_created s3_up_statuses s3_image < <(bench_upload "$s3_port" "$scratch/12mp.jpg" "$uploads" 4)
report+=("- uploads, $uploads x 12 MP, 4 at a time: folder $file_up_created created ($file_up_statuses) in $file_up_secs s:"\
" $(awk -v n="$file_up_created" -v s="$file_up_secs" 'BEGIN { printf "%.2f", n / s }') uploads/s;"\
" bucket $s3_up_created created ($s3_up_statuses) in $s3_up_secs s:"\
" $(awk -v n="$s3_up_created" -v s="$s3_up_secs" 'BEGIN { printf "%.2f", n / s }') uploads/s")
fi

# wrk's req/s and p99 in ms: "<req/s> <p99>"
wrk_run() {  # url
    wrk -t"$threads" -c"$connections" -d"${secs}s" --latency "$1" | awk '
        /Requests\/sec/ { rps = $2 }
        $1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } p99 = v }
        END { printf "%s %.2f\n", rps, p99 }'
}
if wants reads; then
declare -A rps p99
for target in file-original s3-original file-320 s3-320; do rps[$target]="" p99[$target]=""; done
for port_image in "$file_port $file_image" "$s3_port $s3_image"; do
    read -r port image <<<"$port_image"
    curl -sf -o /dev/null "http://127.0.0.1:$port$image?width=320"    # made by this first request
done
echo "reads: $rounds rounds" >&2
for round in $(seq "$rounds"); do
    echo "  round $round/$rounds" >&2
    for target in file-original s3-original file-320 s3-320; do
        case $target in
            file-*) base="http://127.0.0.1:$file_port$file_image" ;;
            s3-*) base="http://127.0.0.1:$s3_port$s3_image" ;;
        esac
        [[ $target == *-320 ]] && base="$base?width=320"
        read -r r p < <(wrk_run "$base")
        rps[$target]+="$r " p99[$target]+="$p "
    done
done
bytes() { curl -s -o /dev/null -w '%{size_download}' "$1"; }
original_bytes=$(bytes "http://127.0.0.1:$file_port$file_image")
size_bytes=$(bytes "http://127.0.0.1:$file_port$file_image?width=320")
report+=("| read | folder req/s | bucket req/s | bucket/folder | folder p99 ms | bucket p99 ms |" "|---|---|---|---|---|---|")
for what in original 320; do
    f=$(bench_median ${rps[file-$what]}) s=$(bench_median ${rps[s3-$what]})
    label=$([ "$what" = original ] && echo "original ($original_bytes bytes)" || echo "?width=320 ($size_bytes bytes)")
    report+=("| $label | $f | $s | $(awk -v a="$s" -v b="$f" 'BEGIN { printf "%.2f", a / b }') | $(bench_median ${p99[file-$what]}) | $(bench_median ${p99[s3-$what]}) |")
done
fi

if wants storm; then
echo "storm: $storm x 10 MiB PNG at once to the bucket server" >&2
rss_start=$(awk '/VmRSS/ { print $2 }' "/proc/$s3_server/status")
echo 5 >"/proc/$s3_server/clear_refs"
read -r storm_secs storm_created storm_statuses _ < <(bench_upload "$s3_port" "$scratch/10mib.png" "$storm" "$storm")
storm_hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$s3_server/status")
left=$(find "$scratch/s3-uploads" -type f | wc -l)
# What the server answered, clients that gave up included (a client whose request was
# answered before its body was all sent sees a broken pipe instead of the status).
answered=$(grep 'route=/api/posts ' "$scratch/server-$s3_port.log" | grep -o 'status=[0-9]*' | sort | uniq -c | awk '{ printf "%s%s x %s", sep, $1, $2; sep = ", " }')
report+=("- storm: $storm x 10 MiB PNG at once to the bucket server: $storm_created created (statuses $storm_statuses)"\
" in $storm_secs s (the server's log: $answered); peak RSS $((storm_hwm / 1024)) MiB (RSS before: $((rss_start / 1024)) MiB);"\
" files left in its UPLOAD_DIR: $left")
fi

echo
echo "## bench/storage.sh ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, pool $pool, wrk -t$threads -c$connections -d${secs}s, medians of $rounds)"
printf '%s\n' "${report[@]}"
