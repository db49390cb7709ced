/* Everything of a zmqperf peer in C but its sockets, shared by the c peer (libzmq's C API)
 * and the czmq peer (CZMQ): the runner's control lines, the node spec, the compact
 * histogram, the stream ledger, the usage and the report. A peer defines PEER_NAME (and
 * PEER_EXIT, if exit() will not do) before it includes this file. */
#ifndef ZMQPERF_PEER_CORE_H
#define ZMQPERF_PEER_CORE_H

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "header.h"

#ifndef PEER_NAME
#error "define PEER_NAME before including core.h"
#endif
#ifndef PEER_EXIT
#define PEER_EXIT exit
#endif

#define SLICE_MS 100 /* a receive gives up this often to look at the runner's stop */
/* After the stop, a sink ends once this long passes without a message: a TCP stream held
 * up for a delayed acknowledgement (up to 200 ms on Linux) is late, not lost. */
#define DRAIN_MS 1000

/* A peer's exit codes (docs/peers.md). */
enum exit_code { EXIT_SPEC = 2, EXIT_UNSUPPORTED = 3, EXIT_TIMEOUT = 4, EXIT_PROTOCOL = 9 };

/* ---------- output and errors ---------- */

static void emit(cJSON *line)
{
    char *text = cJSON_PrintUnformatted(line);
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    free(text);
    cJSON_Delete(line);
}

static cJSON *control_line(const char *type)
{
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "type", type);
    cJSON_AddNumberToObject(line, "v", 1);
    return line;
}

static void fail(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void fail(int code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fprintf(stderr, "peer " PEER_NAME ": %s\n", message);
    cJSON *line = control_line("error");
    cJSON_AddStringToObject(line, "message", message);
    cJSON_AddNumberToObject(line, "exit_code", code);
    emit(line);
    PEER_EXIT(code);
}

/* u64 figures are written as raw digits: a double would lose the last ones. */
static void add_u64(cJSON *obj, const char *key, uint64_t v)
{
    char digits[24];
    snprintf(digits, sizeof digits, "%" PRIu64, v);
    cJSON_AddRawToObject(obj, key, digits);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------- the runner's lines on stdin, read by a thread of their own ---------- */

static atomic_int g_started, g_stopped, g_not_start;

static void *read_control(void *unused)
{
    (void)unused;
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        cJSON *msg = cJSON_Parse(line);
        const cJSON *type = msg ? cJSON_GetObjectItemCaseSensitive(msg, "type") : NULL;
        const char *t = cJSON_IsString(type) ? type->valuestring : "";
        if (strcmp(t, "start") == 0)
            atomic_store(&g_started, 1);
        else if (strcmp(t, "stop") == 0)
            atomic_store(&g_stopped, 1);
        else if (!atomic_load(&g_started))
            atomic_store(&g_not_start, 1);
        cJSON_Delete(msg);
    }
    atomic_store(&g_stopped, 1); /* end of stdin is a stop */
    return NULL;
}

static void wait_for_start(uint64_t timeout_ms)
{
    uint64_t deadline = now_ns() + timeout_ms * 1000000u;
    struct timespec nap = {0, 200000};
    while (!atomic_load(&g_started)) {
        if (atomic_load(&g_not_start))
            fail(EXIT_PROTOCOL, "protocol error: expected start");
        if (atomic_load(&g_stopped) || now_ns() > deadline)
            fail(EXIT_PROTOCOL, "protocol error: no start signal from the runner");
        nanosleep(&nap, NULL);
    }
}

/* The runner's stop (or the end of stdin), waited for at most `timeout_ms`. */
static void wait_for_stop(uint64_t timeout_ms)
{
    uint64_t deadline = now_ns() + timeout_ms * 1000000u;
    struct timespec nap = {0, 1000000};
    while (!atomic_load(&g_stopped) && now_ns() < deadline)
        nanosleep(&nap, NULL);
}

/* ---------- compact histogram: value rounded down to 3 significant digits -> count ---------- */

#define HIST_DECADES 18
typedef struct {
    uint64_t *counts; /* [decade * 1000 + mantissa] */
    uint64_t n;
} hist_t;

static void hist_init(hist_t *h)
{
    h->counts = calloc(HIST_DECADES * 1000, sizeof(uint64_t));
    h->n = 0;
}

static inline void hist_record(hist_t *h, uint64_t v)
{
    unsigned e = 0;
    while (v >= 1000) {
        v /= 10;
        e++;
    }
    h->counts[e * 1000 + v]++;
    h->n++;
}

static void hist_merge(hist_t *into, const hist_t *from)
{
    for (int i = 0; i < HIST_DECADES * 1000; i++)
        into->counts[i] += from->counts[i];
    into->n += from->n;
}

static cJSON *hist_json(const hist_t *h)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON *buckets = cJSON_AddArrayToObject(obj, "buckets");
    for (int e = 0; e < HIST_DECADES; e++) {
        uint64_t scale = 1;
        for (int i = 0; i < e; i++)
            scale *= 10;
        for (int m = 0; m < 1000; m++) {
            uint64_t c = h->counts[e * 1000 + m];
            if (!c)
                continue;
            char pair[64];
            snprintf(pair, sizeof pair, "[%" PRIu64 ",%" PRIu64 "]", (uint64_t)m * scale, c);
            cJSON_AddItemToArray(buckets, cJSON_CreateRaw(pair));
        }
    }
    return obj;
}

/* ---------- the node spec ---------- */

typedef struct {
    const char *name, *role, *kind;
    cJSON *bind, *connect, *options;
    uint64_t size, count, warmup, stamp_every, timeout_ms, expect;
    double rate; /* 0: as fast as possible */
    uint32_t stream_id, subscriptions;
    int ends_itself, delimiter;
    cJSON *streams;
    /* Typed frames: every frame's size (the first holds the header, then the type id). */
    size_t nframes, *frames;
    uint32_t type_id;
    /* Log lines: the level of line i is levels[i % nlevels] (the topic frame). */
    size_t nlevels;
    const char **levels;
} spec_t;

static const cJSON *field(const cJSON *obj, const char *key, int required)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (required && !item)
        fail(EXIT_SPEC, "bad node spec: field '%s' is missing", key);
    return item;
}

static uint64_t num(const cJSON *obj, const char *key, int required, uint64_t dflt)
{
    const cJSON *item = field(obj, key, required);
    if (!item || cJSON_IsNull(item))
        return dflt;
    if (!cJSON_IsNumber(item) || item->valuedouble < 0)
        fail(EXIT_SPEC, "bad node spec: field '%s' must be a number >= 0", key);
    return (uint64_t)item->valuedouble;
}

static const char *str(const cJSON *obj, const char *key)
{
    const cJSON *item = field(obj, key, 1);
    if (!cJSON_IsString(item))
        fail(EXIT_SPEC, "bad node spec: field '%s' must be a string", key);
    return item->valuestring;
}

static spec_t parse_spec(const char *text)
{
    spec_t s = {0};
    cJSON *root = cJSON_Parse(text);
    if (!cJSON_IsObject(root))
        fail(EXIT_SPEC, "bad node spec: not a JSON object (give the node spec as the one argument)");
    s.name = str(root, "name");
    s.role = str(root, "role");
    const cJSON *sockets = field(root, "sockets", 1);
    if (cJSON_GetArraySize(sockets) != 1)
        fail(EXIT_UNSUPPORTED, "node %s: the " PEER_NAME " peer plays one socket, not %d", s.name,
             cJSON_GetArraySize(sockets));
    cJSON *sock = cJSON_GetArrayItem(sockets, 0);
    s.kind = str(sock, "kind");
    s.bind = cJSON_GetObjectItemCaseSensitive(sock, "bind");
    s.connect = cJSON_GetObjectItemCaseSensitive(sock, "connect");
    s.options = cJSON_GetObjectItemCaseSensitive(sock, "options");
    s.size = num(root, "size", 1, 0);
    s.count = num(root, "count", 1, 0);
    s.warmup = num(root, "warmup", 1, 0);
    s.stamp_every = num(root, "stamp_every", 1, 1);
    if (s.stamp_every == 0)
        s.stamp_every = 1;
    s.timeout_ms = num(root, "timeout_ms", 1, 10000);
    const cJSON *rate = field(root, "rate", 1);
    s.rate = cJSON_IsNumber(rate) ? rate->valuedouble : 0;
    s.stream_id = (uint32_t)num(root, "stream_id", 0, 0);
    s.streams = cJSON_GetObjectItemCaseSensitive(root, "streams");
    s.ends_itself = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "ends_itself"));
    s.expect = num(root, "expect", 0, 0);
    s.subscriptions = (uint32_t)num(root, "subscriptions", 0, 0);
    s.delimiter = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "delimiter"));
    const cJSON *frames = cJSON_GetObjectItemCaseSensitive(root, "frames"), *f;
    s.nframes = cJSON_IsArray(frames) ? (size_t)cJSON_GetArraySize(frames) : 0;
    s.frames = calloc(s.nframes + 1, sizeof *s.frames);
    size_t k = 0;
    cJSON_ArrayForEach(f, frames)
    {
        if (!cJSON_IsNumber(f) || f->valuedouble < 0)
            fail(EXIT_SPEC, "bad node spec: field 'frames' must list sizes >= 0");
        s.frames[k++] = (size_t)f->valuedouble;
    }
    if (s.nframes && s.frames[0] < HDR_LEN + 4)
        fail(EXIT_SPEC, "bad node spec: the first of 'frames' holds the header and the type id: %d bytes or more",
             HDR_LEN + 4);
    s.type_id = (uint32_t)num(root, "type_id", 0, 0);
    const cJSON *levels = cJSON_GetObjectItemCaseSensitive(root, "log_levels");
    s.nlevels = cJSON_IsArray(levels) ? (size_t)cJSON_GetArraySize(levels) : 0;
    s.levels = calloc(s.nlevels + 1, sizeof *s.levels);
    k = 0;
    cJSON_ArrayForEach(f, levels)
    {
        if (!cJSON_IsString(f))
            fail(EXIT_SPEC, "bad node spec: field 'log_levels' must list strings");
        s.levels[k++] = f->valuestring;
    }
    if (s.nlevels && s.size < HDR_LEN)
        fail(EXIT_SPEC, "bad node spec: a log line carries the %d-byte header: size %d or more", HDR_LEN, HDR_LEN);
    return s; /* root stays alive for the process's life: the strings point into it */
}

/* ---------- sockets ---------- */

static const struct {
    const char *name;
    int type;
} KINDS[] = {{"PAIR", ZMQ_PAIR},     {"PUB", ZMQ_PUB},   {"SUB", ZMQ_SUB},       {"XPUB", ZMQ_XPUB},
             {"XSUB", ZMQ_XSUB},     {"REQ", ZMQ_REQ},   {"REP", ZMQ_REP},       {"DEALER", ZMQ_DEALER},
             {"ROUTER", ZMQ_ROUTER}, {"PUSH", ZMQ_PUSH}, {"PULL", ZMQ_PULL}};

/* Which socket types each role may use (docs/peers.md). */
static int plays(const char *role, const char *kind)
{
    static const char *table[][7] = {
        {"source", "PUB", "XPUB", "PUSH", "PAIR", "DEALER", NULL},
        {"sink", "SUB", "XSUB", "PULL", "PAIR", "DEALER", "ROUTER"},
        {"ping", "REQ", "DEALER", "PAIR", NULL},
        {"echo", "REP", "ROUTER", "DEALER", "PAIR", NULL},
    };
    for (size_t r = 0; r < sizeof table / sizeof table[0]; r++) {
        if (strcmp(table[r][0], role) != 0)
            continue;
        for (int k = 1; k < 7 && table[r][k]; k++)
            if (strcmp(table[r][k], kind) == 0)
                return 1;
    }
    return 0;
}

/* ---------- usage and the report ---------- */

static cJSON *usage_json(const char *role)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    cJSON *u = cJSON_CreateObject();
    cJSON_AddStringToObject(u, "role", role);
    cJSON_AddStringToObject(u, "placement", "foreign");
    cJSON_AddNumberToObject(u, "cpu_user_ms", ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3);
    cJSON_AddNumberToObject(u, "cpu_sys_ms", ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
    uint64_t hwm = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %" SCNu64, &hwm) == 1)
            break;
    if (f)
        fclose(f);
    add_u64(u, "peak_rss_kib", hwm);
    return u;
}

static cJSON *span_json(uint64_t messages, uint64_t bytes, uint64_t start_ns, uint64_t end_ns)
{
    cJSON *t = cJSON_CreateObject();
    add_u64(t, "messages", messages);
    add_u64(t, "payload_bytes", bytes);
    add_u64(t, "start_ns", start_ns);
    add_u64(t, "end_ns", end_ns);
    return t;
}

/* An empty report: every field the runner reads, null until a role fills it in. */
static cJSON *new_report(void)
{
    cJSON *r = cJSON_CreateObject();
    const char *keys[] = {"latency", "send_delay", "send", "delivered", "ledger"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cJSON_AddNullToObject(r, keys[i]);
    return r;
}

static void set(cJSON *report, const char *key, cJSON *value)
{
    cJSON_ReplaceItemInObjectCaseSensitive(report, key, value);
}

static void send_report(cJSON *report, const char *role)
{
    cJSON_AddItemToObject(report, "usage", usage_json(role));
    cJSON *line = control_line("report");
    cJSON_AddItemToObject(line, "report", report);
    emit(line);
}

/* Which log lines pass a SUB's prefixes: before[i] lines of a cycle pass among its first
 * i; a line's rank among the passing ones is the sequence its ledger keeps. */
static uint64_t *g_before;

static void log_filter(const spec_t *s)
{
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(s->options, "subscribe");
    int np = cJSON_IsArray(subs) ? cJSON_GetArraySize(subs) : 0;
    g_before = calloc(s->nlevels + 1, sizeof *g_before);
    for (size_t i = 0; i < s->nlevels; i++) {
        int pass = np == 0;
        for (int k = 0; k < np && !pass; k++) {
            const cJSON *p = cJSON_GetArrayItem(subs, k);
            const char *prefix = cJSON_IsString(p) ? p->valuestring : "";
            pass = strncmp(s->levels[i], prefix, strlen(prefix)) == 0;
        }
        g_before[i + 1] = g_before[i] + (uint64_t)pass;
    }
}

/* ---------- the sink's ledger ---------- */

typedef struct {
    uint64_t first, len, at;
} run_t;

typedef struct {
    uint32_t id;
    uint64_t want; /* the lines a log stream should bring through the filter */
    int ended;
    run_t *runs;
    size_t n, cap;
    hist_t latency;
} stream_t;

static stream_t *g_streams;
static size_t g_nstreams, g_capstreams;

static stream_t *stream_of(uint32_t id)
{
    static size_t last;
    if (last < g_nstreams && g_streams[last].id == id)
        return &g_streams[last];
    for (size_t i = 0; i < g_nstreams; i++)
        if (g_streams[i].id == id)
            return &g_streams[last = i];
    if (g_nstreams == g_capstreams) {
        g_capstreams = g_capstreams ? 2 * g_capstreams : 4;
        g_streams = realloc(g_streams, g_capstreams * sizeof *g_streams);
    }
    stream_t *st = &g_streams[last = g_nstreams++];
    memset(st, 0, sizeof *st);
    st->id = id;
    hist_init(&st->latency);
    return st;
}

/* Ledger: a message extends the last run when it is the next number, else opens a run. */
static void ledger_record(stream_t *st, uint64_t seq)
{
    if (st->n && st->runs[st->n - 1].first + st->runs[st->n - 1].len == seq) {
        st->runs[st->n - 1].len++;
        return;
    }
    if (st->n == st->cap) {
        st->cap = st->cap ? 2 * st->cap : 16;
        st->runs = realloc(st->runs, st->cap * sizeof *st->runs);
    }
    st->runs[st->n++] = (run_t){seq, 1, now_ns()};
}

/* ---------- a source's pace ---------- */

/* The header flags of a source's message `i`, its send stamp in `*stamp`: with a rate, it
 * waits for the message's due time (`first` + i x `interval` ns), records how late it woke
 * in `delay` and stamps the due time; the last message carries the end mark; every
 * stamp_every-th (and the last) is stamped now when the rate did not stamp it. */
static inline uint8_t source_flags(const spec_t *s, uint64_t i, uint64_t first, double interval,
                                   hist_t *delay, uint64_t *stamp)
{
    uint8_t flags = 0;
    *stamp = 0;
    if (s->rate > 0) {
        uint64_t due = first + (uint64_t)(i * interval);
        struct timespec at = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
        }
        uint64_t now = now_ns();
        hist_record(delay, now > due ? now - due : 0);
        flags = HDR_TIMESTAMP;
        *stamp = due;
    }
    if (i + 1 == s->count)
        flags |= HDR_END;
    if (!*stamp && (i % s->stamp_every == 0 || i + 1 == s->count)) {
        flags |= HDR_TIMESTAMP;
        *stamp = now_ns();
    }
    return flags;
}

/* ---------- the endpoint errors name ---------- */

static char g_bound[1024]; /* the first endpoint bound (a wildcard port made real) */

/* The peer this node talks to, for errors: the endpoint it connects to, else the one it
 * bound. */
static const char *peer_name(const spec_t *s)
{
    const cJSON *ep = cJSON_GetArrayItem(s->connect, 0);
    if (!ep && g_bound[0])
        return g_bound;
    if (!ep)
        ep = cJSON_GetArrayItem(s->bind, 0);
    return cJSON_IsString(ep) ? ep->valuestring : "(no endpoint)";
}

/* ---------- a sink's wait ---------- */

/* A sink's receive slice ran out with nothing: 1 when the sink is done (after the stop,
 * once DRAIN_MS passed without a message, the queue drained; or after the timeout with
 * nothing), with why it was cut short in `cut_short`; 0 to wait on. Nothing at all within
 * the timeout is a failure for a sink whose stream ends by itself. */
static int sink_idle(const spec_t *s, uint64_t *idle_ms, uint64_t received, int expected, int ends,
                     char *cut_short, size_t cap)
{
    *idle_ms += SLICE_MS;
    if (atomic_load(&g_stopped)) {
        if (*idle_ms < DRAIN_MS)
            return 0;
        if (s->ends_itself && expected && ends < expected)
            snprintf(cut_short, cap,
                     "the end of the stream never came: %" PRIu64
                     " messages arrived before the senders finished and the queue ran dry",
                     received);
        return 1;
    }
    if (*idle_ms >= s->timeout_ms) {
        if (received == 0 && s->ends_itself)
            fail(EXIT_TIMEOUT, "nothing arrived within %" PRIu64 " ms on %s", s->timeout_ms,
                 peer_name(s));
        snprintf(cut_short, cap, "nothing arrived for %" PRIu64 " ms", *idle_ms);
        return 1;
    }
    return 0;
}

/* ---------- an echo's wait, linger and report ---------- */

/* An echo's receive slice ran out with nothing: 1 when it is done (told to stop, or nothing
 * for the timeout, said in `cut_short`), 0 to wait on. */
static int echo_idle(const spec_t *s, uint64_t *idle_ms, char *cut_short, size_t cap)
{
    *idle_ms += SLICE_MS;
    if (atomic_load(&g_stopped))
        return 1;
    if (*idle_ms >= s->timeout_ms) {
        snprintf(cut_short, cap, "nothing arrived for %" PRIu64 " ms", *idle_ms);
        return 1;
    }
    return 0;
}

/* The linger an echo closes its socket with: its last reply is only queued, and must leave
 * before the process does (with linger 0 and a plain exit, a busy machine lost it now and
 * then). The topology's linger, or 1 s. */
static int echo_linger(const spec_t *s)
{
    const cJSON *lg = cJSON_GetObjectItemCaseSensitive(s->options, "linger");
    return cJSON_IsNumber(lg) && lg->valuedouble >= 0 ? (int)lg->valuedouble : 1000;
}

/* An echo's report, sent once its socket is closed: its round trips from the first request
 * to the last reply, and why it was cut short (if it was). */
static void echo_report(uint64_t answered, uint64_t bytes, uint64_t start, uint64_t end,
                        const char *cut_short)
{
    cJSON *report = new_report();
    cJSON_AddItemToObject(report, "round_trips", span_json(answered, bytes, start, end));
    if (cut_short[0])
        cJSON_AddStringToObject(report, "cut_short", cut_short);
    send_report(report, "echo");
}

/* ---------- a sink's report ---------- */

/* A sink's report: what was delivered from its first message to its last read, whether the
 * stream carried the header, why it was cut short (if it was), and with the header each
 * stream's latency and ledger and the latency of all. */
static cJSON *sink_report(uint64_t received, uint64_t bytes, uint64_t start, uint64_t last_read,
                          int headed, const char *cut_short)
{
    cJSON *report = new_report();
    set(report, "delivered", span_json(received, bytes, start, received ? last_read : start));
    cJSON_AddBoolToObject(report, "header", headed);
    if (cut_short[0])
        cJSON_AddStringToObject(report, "cut_short", cut_short);
    if (headed) {
        hist_t all;
        hist_init(&all);
        cJSON *per = cJSON_AddArrayToObject(report, "stream_latency");
        cJSON *ledger = cJSON_CreateObject();
        cJSON *runs = cJSON_AddObjectToObject(ledger, "runs");
        for (size_t i = 0; i < g_nstreams; i++) {
            stream_t *st = &g_streams[i];
            hist_merge(&all, &st->latency);
            cJSON *entry = cJSON_CreateArray();
            char id[16];
            snprintf(id, sizeof id, "%u", st->id);
            cJSON_AddItemToArray(entry, cJSON_CreateRaw(id));
            cJSON_AddItemToArray(entry, hist_json(&st->latency));
            cJSON_AddItemToArray(per, entry);
            cJSON *list = cJSON_AddArrayToObject(runs, id);
            for (size_t r = 0; r < st->n; r++) {
                char triple[80];
                snprintf(triple, sizeof triple, "[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", st->runs[r].first,
                         st->runs[r].len, st->runs[r].at);
                cJSON_AddItemToArray(list, cJSON_CreateRaw(triple));
            }
        }
        set(report, "latency", hist_json(&all));
        set(report, "ledger", ledger);
    }
    return report;
}

/* ---------- a sink's message ---------- */

/* A sink takes one message that carried the header `h` (`len` bytes; a log line's level in
 * `level`): a warm-up is skipped; else it is counted, its stream's ledger and latency get
 * it (a log line's rank among those its filter passes is the sequence kept), and its
 * stream's end is noted. 1 when every expected stream has ended. */
static inline int sink_take(const spec_t *s, const header_t *h, size_t len, const char *level,
                            int expected, int *ends, int *headed, uint64_t *received,
                            uint64_t *bytes, uint64_t *start, uint64_t *last_read)
{
    if (h->flags & HDR_WARMUP)
        return 0;
    *headed = 1;
    uint64_t now = (h->flags & HDR_TIMESTAMP) || *received == 0 ? now_ns() : 0;
    if (*received == 0)
        *start = now;
    if (now)
        *last_read = now;
    (*received)++;
    *bytes += len;
    stream_t *st = stream_of(h->stream_id);
    uint64_t seq = h->sequence;
    if (s->nlevels) {
        /* A log line: the level it was written with, through the filter; its rank among
         * the lines that pass is the sequence kept. */
        size_t i = h->sequence % s->nlevels;
        if (strcmp(level, s->levels[i]) != 0)
            fail(EXIT_PROTOCOL,
                 "protocol error: line %" PRIu64 " of stream %u came with level '%s', but it was written as %s",
                 h->sequence, h->stream_id, level, s->levels[i]);
        if (g_before[i + 1] == g_before[i])
            fail(EXIT_PROTOCOL,
                 "protocol error: line %" PRIu64 " (%s) of stream %u came through a filter that should have stopped it",
                 h->sequence, s->levels[i], h->stream_id);
        seq = h->sequence / s->nlevels * g_before[s->nlevels] + g_before[i];
    }
    ledger_record(st, seq);
    if (h->flags & HDR_TIMESTAMP)
        hist_record(&st->latency, now > h->send_ns ? now - h->send_ns : 0);
    if (s->nlevels) {
        /* A filtered stream ends at the last line the filter lets through. */
        if (!st->ended && st->want == seq + 1) {
            st->ended = 1;
            if (s->ends_itself && expected && ++*ends >= expected)
                return 1;
        }
    } else if ((h->flags & HDR_END) && !st->ended) {
        st->ended = 1;
        if (s->ends_itself && expected && ++*ends >= expected)
            return 1;
    }
    return 0;
}

/* ---------- the socket's type ---------- */

/* The libzmq type of the node's socket, checked against what its role may use; a source
 * that must see its subscribers first opens its PUB as an XPUB (`*subscribing`). */
static int socket_type(const spec_t *s, int *subscribing)
{
    int type = -1;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (strcmp(KINDS[i].name, s->kind) == 0)
            type = KINDS[i].type;
    if (type < 0)
        fail(EXIT_SPEC, "bad node spec: unknown socket type '%s'", s->kind);
    if (!plays(s->role, s->kind))
        fail(EXIT_UNSUPPORTED, "node %s: the " PEER_NAME " peer does not play role '%s' on a %s socket",
             s->name, s->role, s->kind);
    *subscribing = strcmp(s->role, "source") == 0 && s->subscriptions > 0 &&
                   (type == ZMQ_PUB || type == ZMQ_XPUB);
    return *subscribing ? ZMQ_XPUB : type;
}

/* ---------- a sink's streams ---------- */

/* The streams a sink expects, each with its length, in the ledger (and a log sink's
 * filter worked out): how many there are. */
static int sink_streams(const spec_t *s)
{
    const cJSON *pair;
    cJSON_ArrayForEach(pair, s->streams)
    {
        stream_t *st = stream_of((uint32_t)cJSON_GetArrayItem(pair, 0)->valuedouble);
        st->want = (uint64_t)cJSON_GetArrayItem(pair, 1)->valuedouble;
    }
    if (s->nlevels)
        log_filter(s);
    return cJSON_GetArraySize(s->streams);
}

#endif
