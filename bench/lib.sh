# Shared by the bench scripts, sourced from the repository root once `shared` is set:
# wrk on demand, waiting for a port, and everything started stopped at exit (the servers
# in `bench_pids`, the cluster in `bench_pg_dir`, the paths in `bench_remove`).
# Default PostgreSQL ports are below Linux's ephemeral range (32768-60999): one there can
# be held in TIME_WAIT by an earlier run's client socket, and the cluster cannot bind it.
bench_pids=()
bench_pg_dir=""
bench_remove=()

bench_cleanup() {
    for pid in "${bench_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -z "$bench_pg_dir" ] || "$shared/bench/pg.sh" stop "$bench_pg_dir" >/dev/null 2>&1 || true
    for path in "${bench_remove[@]}"; do rm -rf "$path"; done
}
trap bench_cleanup EXIT

bench_need_wrk() {
    command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
}

# PORT [PID]: waits up to 10 s for 127.0.0.1:PORT to accept, giving up early if PID dies.
bench_wait_for_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        [ -z "${2:-}" ] || kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

bench_build_ours() {
    echo "building this server (release)…" >&2
    swift build -c release --product posts-server >/dev/null
}

# The peer (../shared/bench/hb-peer) built in a copy under /tmp, never inside this repository;
# the first build takes several minutes. Its binary: $bench_peer.
bench_peer_copy=/tmp/posts-server-bench-peer
bench_peer=$bench_peer_copy/.build/release/hb-peer
bench_build_peer() {
    [ -x "$bench_peer" ] && return 0
    echo "building the peer in $bench_peer_copy (several minutes the first time)…" >&2
    rm -rf "$bench_peer_copy" && cp -r "$shared/bench/hb-peer" "$bench_peer_copy"
    (cd "$bench_peer_copy" && swift build -c release >/dev/null)
}

# PORT [POSTS USERS]: a fresh cluster in $bench_pg_dir (set it first: it is stopped at
# exit), migrated by this build and, given POSTS, seeded with the shared data set. Prints
# its URL.
bench_database() {
    local url
    rm -rf "$bench_pg_dir"
    url=$("$shared/bench/pg.sh" start "$bench_pg_dir" "$1")
    DATABASE_URL=$url .build/release/posts-server migrate >/dev/null
    if [ -n "${2:-}" ]; then
        echo "seeding $2 posts, $3 users…" >&2
        psql -q -v posts="$2" -v users="$3" -f "$shared/bench/seed.sql" "$url" >/dev/null
    fi
    echo "$url"
}

# PORT FILE COUNT CONCURRENCY: COUNT posts each with FILE as its image (multipart, trust
# mode, 50 users), CONCURRENCY clients at a time. Prints "<seconds> <created> <statuses>
# <first image_url or ->".
bench_upload() {
    python3 - "$@" <<'PY'
import http.client, json, sys, threading, time
port, path, count, concurrency = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
boundary = "bench-boundary-7d2b"
image = open(path, "rb").read()
def form(index):
    parts = b""
    for name, value in [("title", f"photo {index}"), ("summary", "s"), ("body", "b")]:
        parts += f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n".encode()
    parts += f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image\"\r\nContent-Type: application/octet-stream\r\n\r\n".encode()
    return parts + image + f"\r\n--{boundary}--\r\n".encode()
statuses, urls, lock, next_index = [], [], threading.Lock(), [0]
def client():
    while True:
        with lock:
            index = next_index[0]
            next_index[0] += 1
        if index >= count: return
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        connection.request("POST", "/api/posts", body=form(index), headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "X-User-Email": f"photographer{index % 50}@example.com"})
        response = connection.getresponse()
        body = response.read()
        with lock:
            statuses.append(response.status)
            if response.status == 201: urls.append(json.loads(body)["post"]["image_url"])
began = time.time()
workers = [threading.Thread(target=client) for _ in range(concurrency)]
for worker in workers: worker.start()
for worker in workers: worker.join()
print(f"{time.time() - began:.2f} {statuses.count(201)} {','.join(map(str, sorted(set(statuses))))} {urls[0] if urls else '-'}")
PY
}

# The median of the numbers given as arguments.
bench_median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
