// sse-load: measures how live events reach GET /api/events (Server-Sent Events) subscribers.
//
//   sse-load -p PORT [-p PORT…] [-s SUBSCRIBERS] [-w WRITES] [-i INTERVAL_MS] [-W WRITE_PORT]
//            [-m latency|throughput] [-t TIMEOUT_S] [-b BATCH]
//
// Opens SUBSCRIBERS streams (round-robin over the -p ports, host 127.0.0.1; at most BATCH
// being set up at once, so the listen backlog and the server's worker queue are not
// overrun) and waits until each has the response head and the `retry:` line. Then one
// keep-alive connection to WRITE_PORT (default: the first -p) creates WRITES posts titled
// bench-0 … bench-(WRITES-1), one request in flight, each started INTERVAL_MS after the
// previous one was due (a fixed schedule; 0 = back to back; throughput mode forces 0).
// Every subscriber should see each post.created event (`"type":"post.created"` and a
// `"title"` of bench-<k>; spaces around the colon allowed) once, in order; any other event
// counts as other_events. Latency = time the event's blank line was read − time just before
// that write's request was sent: it includes the write itself and its commit, so it is an
// upper bound on commit → subscriber.
//
// Prints one line of key=value on stdout (and, with several ports, one `per_port` line per
// port): delivered = distinct (subscriber, write) pairs received, missing = subscribers ×
// writes − delivered, duplicates = events received again, out_of_order = events that did
// not follow the subscriber's previous one directly (a gap or a late one), p50/p99/max_ms
// (exact in latency mode; from a histogram, ±0.2 %, in throughput mode and per port),
// elapsed_s = first write sent → last event read, events_per_s = delivered / elapsed_s,
// writes_per_s = successful writes / (first sent → last answered), setup_s = time to open
// every stream. Details of anything missing go to stderr. Exit status 0 when nothing was
// missing, duplicated or out of order and every write succeeded; 1 otherwise; 2 when the
// set-up failed (a subscriber refused, closed or answered something other than 200).
//
// Build: cc -O2 -o /tmp/sse-load bench/events/sse-load.c   (Linux; glibc ≥ 2.34 for pthreads in libc)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MAX_PORTS = 16, MAX_LINE = 1 << 20, MAX_HEAD = 16384 };
enum { ST_IDLE, ST_CONNECTING, ST_HEAD, ST_BODY, ST_CLOSED };
enum { CS_SIZE, CS_EXT, CS_DATA, CS_DATA_END, CS_TRAILER, CS_END };

typedef struct {
    int fd;
    uint8_t state, port, chunked, cstate, ready, ev_other, saw_digit;
    int64_t ev_k;   // bench index of the event being read, -1 for none
    int64_t last_k; // highest bench index seen, -1 before the first
    uint64_t crem;  // chunk size being parsed / bytes left in the chunk / trailer line length
    char *line;     // the response head, then the current SSE line (reused, never per event)
    uint32_t len, cap;
    uint32_t got;   // distinct bench events received
} sub_t;

// Options.
static uint32_t S = 100, W = 100, batch = 200;
static uint64_t interval_ns = 20 * 1000000ull;
static int timeout_s = 60;
static int throughput_mode = 0;
static int ports[MAX_PORTS], nports = 0, write_port = 0;

// Subscriber side (main thread only).
static sub_t *subs;
static int ep;
static int setup_phase = 1;
static uint32_t ready_count, pending, complete, closed_count, closed_incomplete;
static uint64_t *bitmap;     // S*W bits: (subscriber, write) received
static uint32_t *per_write;  // per write: subscribers that got it
static uint32_t *lat;        // latency mode: S*W microseconds, UINT32_MAX = not received
static uint64_t delivered, duplicates, out_of_order, other_events, max_us, last_event_ns;
static uint64_t port_subs[MAX_PORTS], port_delivered[MAX_PORTS];
enum { HIST_BUCKETS = 1024 + 22 * 512 };
static uint64_t hist[MAX_PORTS][HIST_BUCKETS];

// Writer thread → main (atomics).
static uint64_t *send_ns; // per write: CLOCK_MONOTONIC just before its request was sent
static uint64_t first_send_ns, last_resp_ns;
static uint32_t writes_ok;
static int writer_done, writer_failed;
static char writer_error[512];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("sse-load: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

// Log-linear histogram of microseconds: exact below 1024 µs, then 512 buckets per power of
// two (≤ 0.2 % error).
static unsigned hist_index(uint64_t v) {
    if (v < 1024) return (unsigned)v;
    unsigned msb = 63 - (unsigned)__builtin_clzll(v);
    if (msb > 31) return HIST_BUCKETS - 1;
    unsigned shift = msb - 9;
    return 1024 + (msb - 10) * 512 + (unsigned)((v >> shift) - 512);
}

static uint64_t hist_value(unsigned idx) {
    if (idx < 1024) return idx;
    unsigned m = (idx - 1024) / 512 + 10, shift = m - 9;
    return (uint64_t)((idx - 1024) % 512 + 512) << shift;
}

// Nearest-rank percentile of a histogram, in µs.
static uint64_t hist_percentile(const uint64_t *h, uint64_t n, double p) {
    if (n == 0) return 0;
    uint64_t rank = (uint64_t)(p * (double)n + 0.999999999);
    if (rank < 1) rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h[i];
        if (seen >= rank) return hist_value(i);
    }
    return hist_value(HIST_BUCKETS - 1);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

// MARK: subscribers

static void sub_closed(uint32_t i, const char *why, int err) {
    sub_t *s = &subs[i];
    if (setup_phase)
        die("subscriber %u (port %d) failed during set-up (%u of %u ready): %s%s%s", i, ports[s->port], ready_count,
            S, why, err ? ": " : "", err ? strerror(err) : "");
    if (s->state == ST_CLOSED) return;
    if (closed_count < 5)
        fprintf(stderr, "sse-load: subscriber %u (port %d) closed after %u of %u events: %s%s%s\n", i,
                ports[s->port], s->got, W, why, err ? ": " : "", err ? strerror(err) : "");
    closed_count++;
    if (s->got < W) closed_incomplete++;
    epoll_ctl(ep, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->state = ST_CLOSED;
    free(s->line);
    s->line = NULL;
    s->len = s->cap = 0;
}

static int line_append(sub_t *s, const char *p, size_t n) {
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 512;
        while (cap < s->len + n + 1) cap *= 2;
        if (cap > MAX_LINE) return -1;
        char *grown = realloc(s->line, cap);
        if (!grown) return -1;
        s->line = grown;
        s->cap = (uint32_t)cap;
    }
    memcpy(s->line + s->len, p, n);
    s->len += (uint32_t)n;
    return 0;
}

static void record(uint32_t i, int64_t k, uint64_t t) {
    sub_t *s = &subs[i];
    if (k < 0 || k >= (int64_t)W) {
        other_events++;
        return;
    }
    uint64_t bit = (uint64_t)i * W + (uint64_t)k;
    if (bitmap[bit >> 6] & (1ull << (bit & 63))) {
        duplicates++;
        return;
    }
    bitmap[bit >> 6] |= 1ull << (bit & 63);
    per_write[k]++;
    delivered++;
    port_delivered[s->port]++;
    if (k != s->last_k + 1) out_of_order++;
    if (k > s->last_k) s->last_k = k;
    uint64_t sent = __atomic_load_n(&send_ns[k], __ATOMIC_ACQUIRE);
    uint64_t us = (sent && t > sent) ? (t - sent) / 1000 : 0;
    if (us >= UINT32_MAX) us = UINT32_MAX - 1;
    if (lat) lat[bit] = (uint32_t)us;
    hist[s->port][hist_index(us)]++;
    if (us > max_us) max_us = us;
    if (t > last_event_ns) last_event_ns = t;
    if (++s->got == W) complete++;
}

// The start of the value of the first `key` (quoted) followed by a colon, or NULL.
static const char *json_value(const char *p, const char *end, const char *key) {
    size_t klen = strlen(key);
    while (p < end) {
        const char *q = memmem(p, (size_t)(end - p), key, klen);
        if (!q) return NULL;
        p = q + klen;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p < end && *p == ':') {
            p++;
            while (p < end && (*p == ' ' || *p == '\t')) p++;
            return p;
        }
    }
    return NULL;
}

// One SSE line, without its '\n'.
static void on_line(uint32_t i, const char *p, size_t n, uint64_t t) {
    sub_t *s = &subs[i];
    if (n && p[n - 1] == '\r') n--;
    if (n == 0) { // blank line: the event is complete
        if (s->ev_k >= 0) record(i, s->ev_k, t);
        else if (s->ev_other) other_events++;
        s->ev_k = -1;
        s->ev_other = 0;
        return;
    }
    if (p[0] == ':') return; // comment (keep-alive)
    if (n >= 6 && !memcmp(p, "retry:", 6)) {
        if (!s->ready) {
            s->ready = 1;
            ready_count++;
            pending--;
        }
        return;
    }
    if (n >= 5 && !memcmp(p, "data:", 5)) {
        // The post's members come from PostgreSQL's json text: `"title" : "bench-7"`.
        const char *end = p + n, *v;
        if ((v = json_value(p, end, "\"type\"")) && (size_t)(end - v) >= 14 && !memcmp(v, "\"post.created\"", 14) &&
            (v = json_value(p, end, "\"title\"")) && (size_t)(end - v) > 7 && !memcmp(v, "\"bench-", 7)) {
            v += 7;
            int64_t k = 0;
            int digits = 0;
            while (v < end && *v >= '0' && *v <= '9' && digits < 12) k = k * 10 + (*v++ - '0'), digits++;
            if (digits && v < end && *v == '"') {
                s->ev_k = k;
                return;
            }
        }
        s->ev_other = 1;
    }
}

static int sse_feed(uint32_t i, const char *p, size_t n, uint64_t t) {
    sub_t *s = &subs[i];
    while (n) {
        const char *nl = memchr(p, '\n', n);
        if (!nl) return line_append(s, p, n);
        size_t seg = (size_t)(nl - p);
        if (s->len == 0) {
            on_line(i, p, seg, t);
        } else {
            if (line_append(s, p, seg) < 0) return -1;
            on_line(i, s->line, s->len, t);
            s->len = 0;
        }
        p = nl + 1;
        n -= seg + 1;
    }
    return 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Response body bytes: de-chunks them into the SSE parser. 0 = fine, 1 = the response
// ended (last chunk), -1 = malformed.
static int body_feed(uint32_t i, const char *p, size_t n, uint64_t t) {
    sub_t *s = &subs[i];
    if (!s->chunked) return sse_feed(i, p, n, t);
    while (n) {
        switch (s->cstate) {
        case CS_SIZE:
        case CS_EXT: {
            char c = *p++;
            n--;
            if (c == '\n') {
                if (!s->saw_digit) return -1;
                s->saw_digit = 0;
                s->cstate = s->crem ? CS_DATA : CS_TRAILER;
            } else if (s->cstate == CS_SIZE) {
                int v = hexval(c);
                if (v >= 0) {
                    if (s->crem >> 40) return -1;
                    s->crem = s->crem * 16 + (uint64_t)v;
                    s->saw_digit = 1;
                } else if (c == '\r' || c == ';' || c == ' ' || c == '\t') {
                    s->cstate = CS_EXT;
                } else {
                    return -1;
                }
            }
            break;
        }
        case CS_DATA: {
            size_t take = n < s->crem ? n : (size_t)s->crem;
            if (sse_feed(i, p, take, t) < 0) return -1;
            p += take;
            n -= take;
            s->crem -= take;
            if (!s->crem) s->cstate = CS_DATA_END;
            break;
        }
        case CS_DATA_END: {
            char c = *p++;
            n--;
            if (c == '\n') {
                s->cstate = CS_SIZE;
                s->crem = 0;
            } else if (c != '\r') {
                return -1;
            }
            break;
        }
        case CS_TRAILER: {
            char c = *p++;
            n--;
            if (c == '\n') {
                if (s->crem == 0) {
                    s->cstate = CS_END;
                    return 1;
                }
                s->crem = 0;
            } else if (c != '\r') {
                s->crem++;
            }
            break;
        }
        case CS_END:
            return 1;
        }
    }
    return s->cstate == CS_END ? 1 : 0;
}

static const char sub_request[] = "GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n";

static void sub_launch(uint32_t i) {
    sub_t *s = &subs[i];
    s->port = (uint8_t)(i % (uint32_t)nports);
    s->ev_k = -1;
    s->last_k = -1;
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) die("subscriber %u: socket: %s", i, strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)ports[s->port])};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)
        die("subscriber %u (port %d): connect: %s", i, ports[s->port], strerror(errno));
    s->state = ST_CONNECTING;
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.u32 = i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &ev) < 0) die("epoll_ctl: %s", strerror(errno));
}

// The response head is complete: 200, text/event-stream, chunked (or unframed).
static void sub_head(uint32_t i, size_t head_len) {
    sub_t *s = &subs[i];
    s->line[head_len - 2] = 0; // ends the head after its last field's CRLF
    int status = 0;
    if (sscanf(s->line, "HTTP/%*d.%*d %d", &status) != 1 || status != 200) {
        char *eol = strchr(s->line, '\r');
        if (eol) *eol = 0;
        die("subscriber %u (port %d): GET /api/events answered \"%s\" (%u of %u ready)", i, ports[s->port], s->line,
            ready_count, S);
    }
    if (!strcasestr(s->line, "text/event-stream"))
        fprintf(stderr, "sse-load: subscriber %u: response is not text/event-stream\n", i);
    for (char *f = strstr(s->line, "\r\n"); f; f = strstr(f + 2, "\r\n"))
        if (!strncasecmp(f + 2, "transfer-encoding:", 18) && strcasestr(f + 2, "chunked")) s->chunked = 1;
}

static void sub_read(uint32_t i, uint64_t t) {
    static char buf[1 << 16];
    sub_t *s = &subs[i];
    ssize_t r = read(s->fd, buf, sizeof buf);
    const char *why = NULL;
    int err = 0;
    if (r == 0) {
        why = s->state == ST_HEAD ? "closed by the server before a response" : "closed by the server";
    } else if (r < 0) {
        if (errno == EAGAIN || errno == EINTR) return;
        why = "read", err = errno;
    } else {
        const char *p = buf;
        size_t n = (size_t)r;
        if (s->state == ST_HEAD) {
            size_t from = s->len > 3 ? s->len - 3 : 0;
            int appended = line_append(s, buf, n) == 0;
            char *end = appended ? memmem(s->line + from, s->len - from, "\r\n\r\n", 4) : NULL;
            if (!end) {
                if (!appended || s->len >= MAX_HEAD) sub_closed(i, "response head too long", 0);
                return;
            }
            size_t head_len = (size_t)(end - s->line) + 4;
            // The head ends in this read, so the bytes after it are this read's last ones.
            size_t rest = s->len - head_len;
            sub_head(i, head_len);
            s->len = 0;
            s->state = ST_BODY;
            p = buf + n - rest;
            n = rest;
        }
        int ended = body_feed(i, p, n, t);
        if (ended < 0) why = "malformed chunked framing or an over-long line";
        else if (ended > 0) why = "the server ended the stream (last chunk)";
    }
    if (why) sub_closed(i, why, err);
}

static void sub_event(uint32_t i, uint32_t events, uint64_t t) {
    sub_t *s = &subs[i];
    if (s->state == ST_CLOSED) return;
    if (s->state != ST_CONNECTING) {
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) sub_read(i, t);
        return;
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        sub_closed(i, "connect", err);
    } else if (events & EPOLLOUT) {
        ssize_t w = send(s->fd, sub_request, sizeof sub_request - 1, MSG_NOSIGNAL);
        if (w != (ssize_t)(sizeof sub_request - 1)) {
            sub_closed(i, "sending the request", w < 0 ? errno : 0);
            return;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};
        epoll_ctl(ep, EPOLL_CTL_MOD, s->fd, &ev);
        s->state = ST_HEAD;
    }
}

static void poll_once(int timeout_ms) {
    static struct epoll_event evs[1024];
    int n = epoll_wait(ep, evs, 1024, timeout_ms);
    if (n < 0) {
        if (errno == EINTR) return;
        die("epoll_wait: %s", strerror(errno));
    }
    uint64_t t = now_ns();
    for (int k = 0; k < n; k++) sub_event(evs[k].data.u32, evs[k].events, t);
}

// MARK: the writer (its own thread, one blocking keep-alive connection)

static int connect_blocking(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

// Length of a complete chunked body at p, 0 if incomplete, -1 if malformed.
static ssize_t chunked_length(const char *p, size_t n) {
    size_t at = 0;
    for (;;) {
        const char *eol = memmem(p + at, n - at, "\r\n", 2);
        if (!eol) return 0;
        char *e;
        unsigned long long size = strtoull(p + at, &e, 16);
        if (e == p + at) return -1;
        at = (size_t)(eol - p) + 2;
        if (size == 0) { // trailer fields, then an empty line
            for (;;) {
                const char *l = memmem(p + at, n - at, "\r\n", 2);
                if (!l) return 0;
                size_t line = (size_t)(l - (p + at));
                at += line + 2;
                if (line == 0) return (ssize_t)at;
            }
        }
        if (n - at < size + 2) return 0;
        at += size + 2;
    }
}

// Reads one response: its status, whether the server closes the connection after it, and
// (for errors) the start of its body.
static int read_response(int fd, int *status, int *conn_close, char *snippet, size_t snippet_len) {
    static char *buf;
    static size_t cap;
    size_t len = 0, head_len = 0;
    long long content_length = -1;
    int chunked = 0;
    *conn_close = 0;
    for (;;) {
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            if (cap > (64u << 20) || !(buf = realloc(buf, cap))) return -1;
        }
        if (head_len) { // body
            if (content_length >= 0 && len >= head_len + (size_t)content_length) break;
            if (chunked) {
                ssize_t c = chunked_length(buf + head_len, len - head_len);
                if (c < 0) return -1;
                if (c > 0) break;
            }
            if (content_length < 0 && !chunked && (*status == 204 || *status == 304 || *status < 200)) break;
        }
        ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) {
            if (head_len && content_length < 0 && !chunked) { // ends with the connection
                *conn_close = 1;
                break;
            }
            errno = ECONNRESET;
            return -1;
        }
        len += (size_t)r;
        if (!head_len) {
            buf[len] = 0;
            char *end = memmem(buf, len, "\r\n\r\n", 4);
            if (!end) continue;
            head_len = (size_t)(end - buf) + 4;
            *end = 0;
            if (sscanf(buf, "HTTP/%*d.%*d %d", status) != 1) return -1;
            if (!strncmp(buf, "HTTP/1.0", 8)) *conn_close = 1;
            for (char *f = strstr(buf, "\r\n"); f; f = strstr(f + 2, "\r\n")) {
                char *field = f + 2;
                if (!strncasecmp(field, "content-length:", 15)) content_length = strtoll(field + 15, NULL, 10);
                else if (!strncasecmp(field, "transfer-encoding:", 18) && strcasestr(field, "chunked")) chunked = 1;
                else if (!strncasecmp(field, "connection:", 11)) {
                    char *eol = strstr(field, "\r\n");
                    char c = eol ? *eol : 0;
                    if (eol) *eol = 0;
                    if (strcasestr(field, "close")) *conn_close = 1;
                    else if (strcasestr(field, "keep-alive")) *conn_close = 0;
                    if (eol) *eol = c;
                }
            }
            *end = '\r';
        }
    }
    size_t body = len - head_len, k = 0;
    for (size_t j = 0; j < body && k + 1 < snippet_len; j++) {
        char c = buf[head_len + j];
        snippet[k++] = (c >= 32 && c < 127) ? c : ' ';
    }
    if (snippet_len) snippet[k] = 0;
    return 0;
}

static void writer_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void writer_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(writer_error, sizeof writer_error, fmt, ap);
    va_end(ap);
    __atomic_store_n(&writer_failed, 1, __ATOMIC_RELEASE);
}

static void *writer_main(void *arg) {
    (void)arg;
    int fd = -1;
    char body[128], req[512], snippet[200];
    uint64_t t0 = now_ns();
    for (uint32_t k = 0; k < W; k++) {
        if (fd < 0 && (fd = connect_blocking(write_port)) < 0) {
            writer_fail("write %u: connect to port %d: %s", k, write_port, strerror(errno));
            break;
        }
        if (interval_ns) {
            uint64_t due = t0 + (uint64_t)k * interval_ns;
            struct timespec ts = {.tv_sec = (time_t)(due / 1000000000ull), .tv_nsec = (long)(due % 1000000000ull)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
        }
        int blen = snprintf(body, sizeof body, "{\"title\":\"bench-%u\",\"summary\":\"s\",\"body\":\"b\"}", k);
        int rlen = snprintf(req, sizeof req,
                            "POST /api/posts HTTP/1.1\r\nHost: localhost\r\nX-User-Email: bench@example.com\r\n"
                            "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                            blen, body);
        uint64_t t = now_ns();
        if (k == 0) __atomic_store_n(&first_send_ns, t, __ATOMIC_RELEASE);
        __atomic_store_n(&send_ns[k], t, __ATOMIC_RELEASE);
        int status = 0, conn_close = 0;
        if (write_all(fd, req, (size_t)rlen) < 0) {
            writer_fail("write %u: send: %s", k, strerror(errno));
            break;
        }
        if (read_response(fd, &status, &conn_close, snippet, sizeof snippet) < 0) {
            writer_fail("write %u: reading the response: %s", k, strerror(errno));
            break;
        }
        if (status != 201) {
            writer_fail("write %u: POST /api/posts answered %d: %s", k, status, snippet);
            break;
        }
        __atomic_store_n(&last_resp_ns, now_ns(), __ATOMIC_RELEASE);
        __atomic_add_fetch(&writes_ok, 1, __ATOMIC_RELEASE);
        if (conn_close) {
            close(fd);
            fd = -1;
        }
    }
    if (fd >= 0) close(fd);
    __atomic_store_n(&writer_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

// MARK: main

static void usage(void) {
    fprintf(stderr, "usage: sse-load -p PORT [-p PORT…] [-s SUBSCRIBERS] [-w WRITES] [-i INTERVAL_MS] [-W WRITE_PORT]\n"
                    "                [-m latency|throughput] [-t TIMEOUT_S] [-b BATCH]\n");
    exit(2);
}

static long parse_num(const char *text, long min, long max, char opt) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < min || v > max) {
        fprintf(stderr, "sse-load: -%c wants a number in %ld…%ld, not \"%s\"\n", opt, min, max, text);
        usage();
    }
    return v;
}

int main(int argc, char **argv) {
    int c;
    while ((c = getopt(argc, argv, "s:w:i:p:W:m:t:b:h")) != -1) {
        switch (c) {
        case 's': S = (uint32_t)parse_num(optarg, 1, 1000000, 's'); break;
        case 'w': W = (uint32_t)parse_num(optarg, 1, 10000000, 'w'); break;
        case 'i': interval_ns = (uint64_t)parse_num(optarg, 0, 3600000, 'i') * 1000000ull; break;
        case 'p':
            if (nports == MAX_PORTS) usage();
            ports[nports++] = (int)parse_num(optarg, 1, 65535, 'p');
            break;
        case 'W': write_port = (int)parse_num(optarg, 1, 65535, 'W'); break;
        case 'm':
            if (!strcmp(optarg, "latency")) throughput_mode = 0;
            else if (!strcmp(optarg, "throughput")) throughput_mode = 1;
            else usage();
            break;
        case 't': timeout_s = (int)parse_num(optarg, 1, 86400, 't'); break;
        case 'b': batch = (uint32_t)parse_num(optarg, 1, 1000000, 'b'); break;
        default: usage();
        }
    }
    if (optind != argc || nports == 0) usage();
    if (!write_port) write_port = ports[0];
    if (throughput_mode) interval_ns = 0;
    signal(SIGPIPE, SIG_IGN);

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    getrlimit(RLIMIT_NOFILE, &rl);
    if ((uint64_t)S + 32 > (uint64_t)rl.rlim_cur)
        die("%u subscribers need more descriptors than RLIMIT_NOFILE allows (%llu)", S, (unsigned long long)rl.rlim_cur);

    uint64_t cells = (uint64_t)S * W;
    subs = calloc(S, sizeof *subs);
    bitmap = calloc((cells + 63) / 64, sizeof *bitmap);
    per_write = calloc(W, sizeof *per_write);
    send_ns = calloc(W, sizeof *send_ns);
    if (!throughput_mode) {
        lat = malloc(cells * sizeof *lat);
        if (lat) memset(lat, 0xff, cells * sizeof *lat);
    }
    if (!subs || !bitmap || !per_write || !send_ns || (!throughput_mode && !lat)) die("out of memory");
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1: %s", strerror(errno));
    for (uint32_t i = 0; i < S; i++) port_subs[i % (uint32_t)nports]++;

    // Set-up: every subscriber has its response head and the retry line.
    uint64_t setup_start = now_ns(), deadline = setup_start + (uint64_t)timeout_s * 1000000000ull;
    uint32_t launched = 0;
    while (ready_count < S) {
        while (launched < S && pending < batch) {
            sub_launch(launched++);
            pending++;
        }
        poll_once(100);
        if (now_ns() > deadline)
            die("set-up timed out after %d s: %u of %u subscribers ready, %u launched", timeout_s, ready_count, S,
                launched);
    }
    setup_phase = 0;
    double setup_s = (double)(now_ns() - setup_start) / 1e9;
    fprintf(stderr, "sse-load: %u subscribers ready in %.2f s; %u writes to port %d, %s\n", S, setup_s, W, write_port,
            throughput_mode || !interval_ns ? "back to back" : "on a fixed schedule");

    // The writes, and delivery until complete or the timeout.
    pthread_t writer;
    if (pthread_create(&writer, NULL, writer_main, NULL)) die("pthread_create failed");
    uint64_t run_start = now_ns(), writer_end = 0;
    deadline = run_start + (uint64_t)timeout_s * 1000000000ull;
    int timed_out = 0, joined = 0;
    for (;;) {
        uint64_t t = now_ns();
        if (__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE)) {
            if (!writer_end) writer_end = t;
            if (complete + closed_incomplete >= S) break;
            // Failed writes: what was written has had 2 s to arrive.
            if (__atomic_load_n(&writer_failed, __ATOMIC_ACQUIRE) && t > writer_end + 2000000000ull) break;
        }
        if (t > deadline) {
            timed_out = 1;
            break;
        }
        poll_once(20);
    }
    if (__atomic_load_n(&writer_done, __ATOMIC_ACQUIRE)) {
        pthread_join(writer, NULL);
        joined = 1;
    }

    // Report.
    uint64_t missing = cells - delivered;
    uint64_t first = __atomic_load_n(&first_send_ns, __ATOMIC_ACQUIRE);
    uint64_t last_resp = __atomic_load_n(&last_resp_ns, __ATOMIC_ACQUIRE);
    uint32_t wok = __atomic_load_n(&writes_ok, __ATOMIC_ACQUIRE);
    double elapsed = first && last_event_ns > first ? (double)(last_event_ns - first) / 1e9 : 0;
    double write_span = first && last_resp > first ? (double)(last_resp - first) / 1e9 : 0;
    uint64_t p50, p99;
    if (lat) {
        uint64_t n = 0;
        for (uint64_t j = 0; j < cells; j++)
            if (lat[j] != UINT32_MAX) lat[n++] = lat[j];
        qsort(lat, n, sizeof *lat, cmp_u32);
        p50 = n ? lat[(n + 1) / 2 - 1] : 0;
        uint64_t r99 = (uint64_t)(0.99 * (double)n + 0.999999999);
        p99 = n ? lat[(r99 ? r99 : 1) - 1] : 0;
    } else {
        static uint64_t all[HIST_BUCKETS];
        for (int p = 0; p < nports; p++)
            for (unsigned b = 0; b < HIST_BUCKETS; b++) all[b] += hist[p][b];
        p50 = hist_percentile(all, delivered, 0.50);
        p99 = hist_percentile(all, delivered, 0.99);
    }
    char portlist[MAX_PORTS * 7] = "";
    for (int p = 0; p < nports; p++)
        snprintf(portlist + strlen(portlist), sizeof portlist - strlen(portlist), "%s%d", p ? "," : "", ports[p]);
    printf("mode=%s subscribers=%u ports=%s write_port=%d writes=%u writes_ok=%u interval_ms=%.0f delivered=%llu "
           "missing=%llu duplicates=%llu out_of_order=%llu other_events=%llu closed=%u p50_ms=%.3f p99_ms=%.3f "
           "max_ms=%.3f elapsed_s=%.3f events_per_s=%.0f writes_per_s=%.1f setup_s=%.2f timed_out=%d\n",
           throughput_mode ? "throughput" : "latency", S, portlist, write_port, W, wok, (double)interval_ns / 1e6,
           (unsigned long long)delivered, (unsigned long long)missing, (unsigned long long)duplicates,
           (unsigned long long)out_of_order, (unsigned long long)other_events, closed_count, (double)p50 / 1000,
           (double)p99 / 1000, (double)max_us / 1000, elapsed, elapsed > 0 ? (double)delivered / elapsed : 0,
           write_span > 0 ? (double)wok / write_span : 0, setup_s, timed_out);
    if (nports > 1) {
        for (int p = 0; p < nports; p++) {
            uint64_t pmax = 0;
            for (unsigned b = HIST_BUCKETS; b-- > 0;)
                if (hist[p][b]) {
                    pmax = hist_value(b);
                    break;
                }
            printf("per_port port=%d subscribers=%llu delivered=%llu missing=%llu p50_ms=%.3f p99_ms=%.3f "
                   "max_ms=%.3f\n",
                   ports[p], (unsigned long long)port_subs[p], (unsigned long long)port_delivered[p],
                   (unsigned long long)(port_subs[p] * W - port_delivered[p]),
                   (double)hist_percentile(hist[p], port_delivered[p], 0.50) / 1000,
                   (double)hist_percentile(hist[p], port_delivered[p], 0.99) / 1000, (double)pmax / 1000);
        }
    }
    fflush(stdout);

    if (__atomic_load_n(&writer_failed, __ATOMIC_ACQUIRE)) fprintf(stderr, "sse-load: writer: %s\n", writer_error);
    if (!joined) fprintf(stderr, "sse-load: the writer had not finished at the timeout (%u of %u writes done)\n", wok, W);
    if (missing) {
        uint32_t incomplete = 0, shown = 0;
        for (uint32_t i = 0; i < S; i++) {
            if (subs[i].got == W) continue;
            incomplete++;
            if (shown++ >= 5) continue;
            uint64_t firstmiss = 0;
            for (; firstmiss < W; firstmiss++) {
                uint64_t bit = (uint64_t)i * W + firstmiss;
                if (!(bitmap[bit >> 6] & (1ull << (bit & 63)))) break;
            }
            fprintf(stderr, "sse-load: subscriber %u (port %d%s) got %u of %u; first missing bench-%llu\n", i,
                    ports[subs[i].port], subs[i].state == ST_CLOSED ? ", closed" : "", subs[i].got, W,
                    (unsigned long long)firstmiss);
        }
        fprintf(stderr, "sse-load: %llu events missing; %u of %u subscribers incomplete\n", (unsigned long long)missing,
                incomplete, S);
        shown = 0;
        for (uint32_t k = 0; k < W && shown < 10; k++)
            if (per_write[k] < S) {
                fprintf(stderr, "sse-load: bench-%u reached %u of %u subscribers%s\n", k, per_write[k], S,
                        k >= wok ? " (its write did not succeed)" : "");
                shown++;
            }
    }
    int bad = missing || duplicates || out_of_order || wok != W || timed_out;
    _exit(bad ? 1 : 0); // the writer may still be blocked at a timeout
}
