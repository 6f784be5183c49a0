#!/usr/bin/env bash
# Peak memory under many large uploads: N clients at once each post a post with a 10 MiB
# image (multipart, trust mode), then the server's peak RSS (VmHWM) is read from /proc.
# The "images" are random bytes behind JPEG's magic number: the bodies are received and
# written to disk in full, then the image pipeline refuses them (415). What this measures
# is receiving; bench/images.sh measures the pipeline with real photos.
#
#   bench/uploads.sh [clients] [MiB]          (default 100 clients, 10 MiB each)
#
# Env: PG_PORT (25437), SHARED (../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-100} mib=${2:-10}
shared=$(cd "${SHARED:-../shared}" && pwd)
pg_port=${PG_PORT:-25437} port=18085 pg_dir=/tmp/posts-server-bench-uploads-pg uploads=/tmp/posts-server-bench-uploads
source bench/lib.sh
source scripts/system-packages.sh
bench_pg_dir=$pg_dir bench_remove=("$uploads")
swift build -c release --product posts-server >/dev/null
rm -rf "$pg_dir" "$uploads"
url=$("$shared/bench/pg.sh" start "$pg_dir" "$pg_port")
DATABASE_URL=$url PORT=$port AUTH_MODE=trust UPLOAD_DIR=$uploads .build/release/posts-server serve >/dev/null &
server=$!
bench_pids+=("$server")
bench_wait_for_port "$port" "$server"
echo "after start: $(grep VmHWM /proc/$server/status)"
python3 - "$port" "$clients" "$mib" <<'PY'
import http.client, os, sys, threading, time
port, clients, mib = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
boundary = "bench-boundary-3f9a"
image = b"\xff\xd8\xff\xe0" + os.urandom(mib * 1024 * 1024 - 4)
def form(index):
    parts = b""
    for name, value in [("title", f"upload {index}"), ("summary", "s"), ("body", "b")]:
        parts += f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n".encode()
    parts += f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".encode()
    return parts + image + f"\r\n--{boundary}--\r\n".encode()
bodies = [form(i) for i in range(clients)]
statuses, start = [], threading.Barrier(clients)
def upload(index):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    start.wait()
    connection.request("POST", "/api/posts", body=bodies[index], headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}", "X-User-Email": f"user{index}@example.com"})
    statuses.append(connection.getresponse().status)
began = time.time()
threads = [threading.Thread(target=upload, args=(i,)) for i in range(clients)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print(f"{clients} uploads of {mib} MiB in {time.time() - began:.1f} s: statuses {sorted(set(statuses))}, {statuses.count(201)} created")
PY
echo "after uploads: $(grep VmHWM /proc/$server/status)"
echo "files left in the upload folder: $(ls -A "$uploads" | wc -l) (0: every refused upload's temporary file is gone)"
