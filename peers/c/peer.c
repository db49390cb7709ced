/* zmqperf peer on libzmq's C API: plays one node (source, sink, ping, echo) of a topology
 * for zmqperf's runner, as docs/peers.md describes. The hot loops are those of libzmq's own
 * perf tools: one zmq_msg_t, blocking calls, the 24-byte header written or read in place.
 *
 *   peer '<node spec as JSON>'   control lines on stdin/stdout
 *   peer --version               {"binding": ..., "engine": ...}
 */
#define _GNU_SOURCE
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

/* The peer's name in its errors; then everything but its sockets, shared with the czmq
 * peer: control lines, the spec, histograms, the ledger, the report. */
#define PEER_NAME "c"
#include "core.h"

#define MAX_FRAMES 8 /* frames of one request an echo sends back */

/* ---------- sockets ---------- */

/* Integer options of libzmq the peer applies as given. */
static const struct {
    const char *name;
    int option;
} INT_OPTIONS[] = {{"sndhwm", ZMQ_SNDHWM},
                   {"rcvhwm", ZMQ_RCVHWM},
                   {"linger", ZMQ_LINGER},
                   {"sndbuf", ZMQ_SNDBUF},
                   {"rcvbuf", ZMQ_RCVBUF},
                   {"immediate", ZMQ_IMMEDIATE},
                   {"conflate", ZMQ_CONFLATE},
                   {"xpub_verbose", ZMQ_XPUB_VERBOSE},
                   {"xpub_nodrop", ZMQ_XPUB_NODROP},
                   {"router_mandatory", ZMQ_ROUTER_MANDATORY},
                   {"tcp_keepalive", ZMQ_TCP_KEEPALIVE}};

static void set_int(void *sock, int option, int value, const char *what)
{
    if (zmq_setsockopt(sock, option, &value, sizeof value) != 0)
        fail(EXIT_UNSUPPORTED, "cannot set %s = %d: %s", what, value, zmq_strerror(zmq_errno()));
}

static void apply_options(const spec_t *s, void *sock, int type)
{
    const cJSON *opt;
    cJSON_ArrayForEach(opt, s->options)
    {
        if (cJSON_IsNull(opt) || strcmp(opt->string, "subscribe") == 0)
            continue;
        if (strcmp(opt->string, "routing_id") == 0) {
            if (!cJSON_IsString(opt))
                fail(EXIT_SPEC, "bad node spec: option routing_id must be a string");
            if (zmq_setsockopt(sock, ZMQ_ROUTING_ID, opt->valuestring, strlen(opt->valuestring)))
                fail(EXIT_UNSUPPORTED, "cannot set routing_id: %s", zmq_strerror(zmq_errno()));
            continue;
        }
        size_t i = 0;
        while (i < sizeof INT_OPTIONS / sizeof INT_OPTIONS[0] && strcmp(INT_OPTIONS[i].name, opt->string))
            i++;
        if (i == sizeof INT_OPTIONS / sizeof INT_OPTIONS[0])
            fail(EXIT_UNSUPPORTED,
                 "node %s: the c peer does not play socket option '%s' (remove it or play the node with zmqperf)",
                 s->name, opt->string);
        int value = cJSON_IsBool(opt) ? cJSON_IsTrue(opt) : (int)opt->valuedouble;
        set_int(sock, INT_OPTIONS[i].option, value, opt->string);
    }
    /* A SUB or XSUB takes its prefixes; none, or an empty list, is everything. */
    if (type == ZMQ_SUB || type == ZMQ_XSUB) {
        const cJSON *subs = cJSON_GetObjectItemCaseSensitive(s->options, "subscribe");
        int n = cJSON_IsArray(subs) ? cJSON_GetArraySize(subs) : 0;
        for (int i = 0; i < (n ? n : 1); i++) {
            const cJSON *p = n ? cJSON_GetArrayItem(subs, i) : NULL;
            const char *prefix = cJSON_IsString(p) ? p->valuestring : "";
            if (type == ZMQ_SUB) {
                zmq_setsockopt(sock, ZMQ_SUBSCRIBE, prefix, strlen(prefix));
            } else {
                char buf[256];
                size_t len = strlen(prefix);
                if (len + 1 > sizeof buf)
                    fail(EXIT_UNSUPPORTED, "subscription prefix longer than 254 bytes");
                buf[0] = 1;
                memcpy(buf + 1, prefix, len);
                if (zmq_send(sock, buf, len + 1, 0) < 0)
                    fail(EXIT_UNSUPPORTED, "XSUB cannot send its subscription: %s", zmq_strerror(zmq_errno()));
            }
        }
    }
}

/* Opens, binds and connects the node's socket, then writes `ready`. */
static void *open_socket(const spec_t *s, void *ctx, int *type_out)
{
    int subscribing;
    int type = socket_type(s, &subscribing);
    void *sock = zmq_socket(ctx, type);
    if (!sock)
        fail(EXIT_UNSUPPORTED, "cannot open a %s socket: %s", s->kind, zmq_strerror(zmq_errno()));
    set_int(sock, ZMQ_LINGER, 0, "linger");
    if (subscribing)
        set_int(sock, ZMQ_XPUB_VERBOSE, 1, "xpub_verbose");
    int slice = SLICE_MS;
    set_int(sock, ZMQ_RCVTIMEO, slice, "rcvtimeo");
    set_int(sock, ZMQ_SNDTIMEO, (int)s->timeout_ms, "sndtimeo");
    apply_options(s, sock, type == ZMQ_XPUB && subscribing ? ZMQ_PUB : type);

    cJSON *ready = control_line("ready");
    cJSON *endpoints = cJSON_AddArrayToObject(ready, "endpoints");
    const cJSON *ep;
    cJSON_ArrayForEach(ep, s->bind)
    {
        if (!cJSON_IsString(ep) || zmq_bind(sock, ep->valuestring) != 0)
            fail(EXIT_UNSUPPORTED, "node %s cannot bind %s: %s", s->name,
                 cJSON_IsString(ep) ? ep->valuestring : "(not a string)", zmq_strerror(zmq_errno()));
        char real[1024];
        size_t len = sizeof real;
        zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, real, &len);
        if (!g_bound[0])
            snprintf(g_bound, sizeof g_bound, "%s", real);
        cJSON_AddItemToArray(endpoints, cJSON_CreateString(real));
    }
    cJSON_ArrayForEach(ep, s->connect)
    {
        if (!cJSON_IsString(ep) || zmq_connect(sock, ep->valuestring) != 0)
            fail(EXIT_UNSUPPORTED, "node %s cannot connect to %s: %s", s->name,
                 cJSON_IsString(ep) ? ep->valuestring : "(not a string)", zmq_strerror(zmq_errno()));
    }
    emit(ready);
    *type_out = type;
    return sock;
}

/* ---------- typed frames and log lines ---------- */

/* Sends message `seq` of a source with typed frames (the first frame the header then the
 * type id, little-endian, then zeroed payload frames) or log lines (the level as the topic
 * frame, then the line: the header, then text filled with dots to `size`). -1 when a send
 * failed. */
static int send_shaped(const spec_t *s, void *sock, uint8_t flags, uint64_t seq, uint64_t stamp)
{
    zmq_msg_t m;
    size_t first = s->nframes ? s->frames[0] : s->size;
    if (s->nlevels) {
        const char *level = s->levels[seq % s->nlevels];
        if (zmq_send(sock, level, strlen(level), ZMQ_SNDMORE) < 0)
            return -1;
    }
    zmq_msg_init_size(&m, first);
    uint8_t *p = zmq_msg_data(&m);
    hdr_encode(p, flags, s->stream_id, seq, stamp);
    memset(p + HDR_LEN, 0, first - HDR_LEN);
    if (s->nframes) {
        for (int b = 0; b < 4; b++)
            p[HDR_LEN + b] = (uint8_t)(s->type_id >> (8 * b));
    } else {
        const char *level = s->levels[seq % s->nlevels];
        char text[256];
        int n = snprintf(text, sizeof text, " %s %s: line %" PRIu64 " of the log, written by the c peer ", level,
                         s->name, seq);
        size_t room = first - HDR_LEN, len = (size_t)n < room ? (size_t)n : room;
        memcpy(p + HDR_LEN, text, len);
        memset(p + HDR_LEN + len, '.', room - len);
    }
    int more = s->nframes > 1 ? ZMQ_SNDMORE : 0;
    if (zmq_msg_send(&m, sock, more) < 0)
        return -1;
    for (size_t k = 1; k < s->nframes; k++) {
        zmq_msg_init_size(&m, s->frames[k]);
        memset(zmq_msg_data(&m), 0, s->frames[k]);
        if (zmq_msg_send(&m, sock, k + 1 < s->nframes ? ZMQ_SNDMORE : 0) < 0)
            return -1;
    }
    return 0;
}

/* ---------- source ---------- */

static void run_source(const spec_t *s, void *ctx, void *sock, int type)
{
    cJSON *report = new_report();
    wait_for_start(s->timeout_ms);
    if (type == ZMQ_XPUB && s->subscriptions > 0) {
        uint64_t t0 = now_ns();
        int waited = 0;
        uint32_t seen = 0;
        zmq_msg_t sub;
        zmq_msg_init(&sub);
        while (seen < s->subscriptions) {
            if (zmq_msg_recv(&sub, sock, 0) < 0) {
                waited += SLICE_MS;
                if ((uint64_t)waited >= s->timeout_ms)
                    fail(EXIT_TIMEOUT, "saw %u of %u subscriptions within %" PRIu64 " ms on %s", seen,
                         s->subscriptions, s->timeout_ms, peer_name(s));
                continue;
            }
            if (zmq_msg_size(&sub) > 0 && ((uint8_t *)zmq_msg_data(&sub))[0] == 1)
                seen++;
        }
        zmq_msg_close(&sub);
        add_u64(report, "subscription_wait_ns", now_ns() - t0);
    }
    size_t size = s->size;
    int headed = size >= HDR_LEN;
    zmq_msg_t msg;
    int shaped = s->nframes || s->nlevels;
    for (uint64_t i = 0; i < s->warmup; i++) {
        if (shaped) {
            if (send_shaped(s, sock, HDR_WARMUP, i, 0) < 0)
                fail(EXIT_TIMEOUT, "warm-up message %" PRIu64 " not taken within %" PRIu64 " ms by %s", i,
                     s->timeout_ms, peer_name(s));
            continue;
        }
        zmq_msg_init_size(&msg, size);
        uint8_t *p = zmq_msg_data(&msg);
        if (headed) {
            hdr_encode(p, HDR_WARMUP, s->stream_id, i, 0);
            memset(p + HDR_LEN, 0, size - HDR_LEN);
        } else {
            memset(p, 0, size);
        }
        if (zmq_msg_send(&msg, sock, 0) < 0)
            fail(EXIT_TIMEOUT, "warm-up message %" PRIu64 " not taken within %" PRIu64 " ms by %s", i,
                 s->timeout_ms, peer_name(s));
    }
    hist_t delay;
    if (s->rate > 0)
        hist_init(&delay);
    double interval = s->rate > 0 ? 1e9 / s->rate : 0;
    uint64_t first = now_ns();
    for (uint64_t i = 0; i < s->count; i++) {
        uint64_t stamp;
        uint8_t flags = source_flags(s, i, first, interval, &delay, &stamp);
        if (shaped) {
            if (send_shaped(s, sock, flags, i, stamp) < 0)
                fail(EXIT_TIMEOUT, "message %" PRIu64 " not taken within %" PRIu64 " ms by %s", i, s->timeout_ms,
                     peer_name(s));
            continue;
        }
        zmq_msg_init_size(&msg, size);
        uint8_t *p = zmq_msg_data(&msg);
        if (headed) {
            hdr_encode(p, flags, s->stream_id, i, stamp);
            memset(p + HDR_LEN, 0, size - HDR_LEN);
        } else {
            memset(p, 0, size);
        }
        if (zmq_msg_send(&msg, sock, 0) < 0)
            fail(EXIT_TIMEOUT, "message %" PRIu64 " not taken within %" PRIu64 " ms by %s", i,
                 s->timeout_ms, peer_name(s));
    }
    uint64_t last = now_ns();
    cJSON *sent = control_line("sent");
    add_u64(sent, "first_send_ns", first);
    add_u64(sent, "last_send_ns", last);
    emit(sent);
    set(report, "send", span_json(s->count, s->count * size, first, last));
    if (s->rate > 0)
        set(report, "send_delay", hist_json(&delay));
    wait_for_stop(s->timeout_ms);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    add_u64(report, "closed_ns", now_ns());
    send_report(report, "source");
}

/* ---------- sink ---------- */

/* Receives one message: the frame that holds the payload (a ROUTER's identity and empty
 * delimiters skipped, frames after it read and dropped). 0, or -1 when the slice ran out. */
static int recv_payload(void *sock, int type, zmq_msg_t *msg, zmq_msg_t *rest)
{
    if (zmq_msg_recv(msg, sock, 0) < 0) {
        if (zmq_errno() == EAGAIN)
            return -1;
        fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
    }
    int skip = type == ZMQ_ROUTER;
    while (zmq_msg_more(msg) && (skip || zmq_msg_size(msg) == 0)) {
        skip = 0;
        zmq_msg_recv(msg, sock, 0);
    }
    for (int more = zmq_msg_more(msg); more; more = zmq_msg_more(rest))
        zmq_msg_recv(rest, sock, 0);
    return 0;
}

/* Receives a message of typed frames or a log line into `msg` (the frame with the header:
 * the first, or the line), the level copied into `level`; its frame count and type id are
 * checked. 0, or -1 when the slice ran out. */
static int recv_shaped(const spec_t *s, void *sock, int type, zmq_msg_t *msg, zmq_msg_t *rest, uint64_t nth,
                       char *level, size_t cap)
{
    if (zmq_msg_recv(msg, sock, 0) < 0) {
        if (zmq_errno() == EAGAIN)
            return -1;
        fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
    }
    if (type == ZMQ_ROUTER && zmq_msg_more(msg))
        zmq_msg_recv(msg, sock, 0);
    if (s->nlevels) {
        size_t n = zmq_msg_size(msg) < cap - 1 ? zmq_msg_size(msg) : cap - 1;
        memcpy(level, zmq_msg_data(msg), n);
        level[n] = 0;
        if (!zmq_msg_more(msg))
            fail(EXIT_PROTOCOL, "protocol error: message %" PRIu64 ": a log level without its line", nth);
        zmq_msg_recv(msg, sock, 0);
    }
    size_t frames = 1;
    for (int more = zmq_msg_more(msg); more; more = zmq_msg_more(rest)) {
        zmq_msg_recv(rest, sock, 0);
        frames++;
    }
    if (s->nframes) {
        if (frames != s->nframes)
            fail(EXIT_PROTOCOL, "protocol error: message %" PRIu64 ": %zu frames, %zu sent", nth, frames,
                 s->nframes);
        if (zmq_msg_size(msg) >= HDR_LEN + 4) {
            uint32_t id = (uint32_t)hdr_get_le((uint8_t *)zmq_msg_data(msg) + HDR_LEN, 4);
            if (id != s->type_id)
                fail(EXIT_PROTOCOL, "protocol error: message %" PRIu64 ": type id %u, %u sent", nth, id,
                     s->type_id);
        }
    }
    return 0;
}

static void run_sink(const spec_t *s, void *sock, int type)
{
    int expected = sink_streams(s);
    int shaped = s->nframes || s->nlevels;
    char level[64] = "";
    wait_for_start(s->timeout_ms);
    zmq_msg_t msg, spare;
    zmq_msg_init(&msg);
    zmq_msg_init(&spare);
    uint64_t received = 0, bytes = 0, start = 0, last_read = 0, idle_ms = 0, plain = 0;
    int ends = 0, headed = 0;
    char cut_short[256] = "";
    for (;;) {
        if ((shaped ? recv_shaped(s, sock, type, &msg, &spare, received + plain + 1, level, sizeof level)
                    : recv_payload(sock, type, &msg, &spare)) < 0) {
            if (sink_idle(s, &idle_ms, received, expected, ends, cut_short, sizeof cut_short))
                break;
            continue;
        }
        idle_ms = 0;
        size_t len = zmq_msg_size(&msg);
        header_t h;
        switch (hdr_decode(zmq_msg_data(&msg), len, &h)) {
        case HDR_BAD_VERSION:
            fail(EXIT_PROTOCOL, "protocol error: header version %u (this peer reads version 1)", h.version);
        case HDR_BAD_FLAGS:
            fail(EXIT_PROTOCOL, "protocol error: reserved header flags set (0x%02x)", h.flags);
        case HDR_PLAIN:
            if (++plain <= s->warmup)
                continue; /* the warm-up of a sender without the header */
            if (received == 0)
                start = last_read = now_ns();
            received++;
            bytes += len;
            continue;
        case HDR_OK:
            break;
        }
        if (sink_take(s, &h, len, level, expected, &ends, &headed, &received, &bytes, &start, &last_read))
            break;
    }
    cJSON *report = sink_report(received, bytes, start, last_read, headed, cut_short);
    send_report(report, "sink");
}

/* ---------- ping ---------- */

static void run_ping(const spec_t *s, void *sock, int type)
{
    size_t size = s->size;
    int headed = size >= HDR_LEN;
    hist_t latency;
    hist_init(&latency);
    zmq_msg_t msg;
    zmq_msg_init_size(&msg, size);
    memset(zmq_msg_data(&msg), 0, size);
    int delimited = type == ZMQ_DEALER && s->delimiter;
    uint64_t total = s->warmup + s->count, start = 0, end = 0;
    wait_for_start(s->timeout_ms);
    for (uint64_t i = 0; i < total; i++) {
        int warm = i < s->warmup;
        uint64_t seq = warm ? i : i - s->warmup;
        uint64_t t0 = now_ns();
        if (headed)
            hdr_encode(zmq_msg_data(&msg), (uint8_t)(HDR_TIMESTAMP | (warm ? HDR_WARMUP : 0)), s->stream_id,
                       seq, t0);
        if (delimited && zmq_send(sock, "", 0, ZMQ_SNDMORE) < 0)
            fail(EXIT_TIMEOUT, "request %" PRIu64 " not taken within %" PRIu64 " ms by %s", i, s->timeout_ms,
                 peer_name(s));
        if (zmq_msg_send(&msg, sock, 0) < 0)
            fail(EXIT_TIMEOUT, "request %" PRIu64 " not taken within %" PRIu64 " ms by %s", i, s->timeout_ms,
                 peer_name(s));
        uint64_t waited = 0;
        for (;;) {
            if (zmq_msg_recv(&msg, sock, 0) >= 0) {
                if (zmq_msg_more(&msg) && zmq_msg_size(&msg) == 0)
                    continue; /* the empty delimiter before a REP's reply */
                break;
            }
            if (zmq_errno() != EAGAIN)
                fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
            waited += SLICE_MS;
            if (waited >= s->timeout_ms)
                fail(EXIT_TIMEOUT, "no reply to request %" PRIu64 " within %" PRIu64 " ms from %s", seq,
                     s->timeout_ms, peer_name(s));
        }
        uint64_t t1 = now_ns();
        if (zmq_msg_size(&msg) != size)
            fail(EXIT_PROTOCOL, "protocol error: a reply of %zu bytes to a request of %zu bytes",
                 zmq_msg_size(&msg), size);
        if (headed) {
            header_t h;
            if (hdr_decode(zmq_msg_data(&msg), size, &h) != HDR_OK || h.sequence != seq)
                fail(EXIT_PROTOCOL, "protocol error: the reply to request %" PRIu64 " carries another header",
                     seq);
        }
        if (!warm) {
            if (!start)
                start = t0;
            end = t1;
            hist_record(&latency, (t1 - t0) / 2);
        }
    }
    emit(control_line("sent"));
    cJSON *report = new_report();
    set(report, "latency", hist_json(&latency));
    cJSON_AddItemToObject(report, "round_trips", span_json(s->count, s->count * size, start, end));
    send_report(report, "ping");
}

/* ---------- echo ---------- */

static void run_echo(const spec_t *s, void *ctx, void *sock)
{
    zmq_msg_t frames[MAX_FRAMES];
    for (int i = 0; i < MAX_FRAMES; i++)
        zmq_msg_init(&frames[i]);
    uint64_t answered = 0, bytes = 0, start = 0, end = 0, idle_ms = 0;
    char cut_short[128] = "";
    wait_for_start(s->timeout_ms);
    while (!(s->ends_itself && s->expect && answered >= s->expect)) {
        if (zmq_msg_recv(&frames[0], sock, 0) < 0) {
            if (zmq_errno() != EAGAIN)
                fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
            if (echo_idle(s, &idle_ms, cut_short, sizeof cut_short))
                break;
            continue;
        }
        idle_ms = 0;
        if (!answered)
            start = now_ns();
        int n = 1;
        while (zmq_msg_more(&frames[n - 1])) {
            if (n == MAX_FRAMES)
                fail(EXIT_UNSUPPORTED, "a request of more than %d frames", MAX_FRAMES);
            zmq_msg_recv(&frames[n++], sock, 0);
        }
        bytes += zmq_msg_size(&frames[n - 1]);
        for (int i = 0; i < n; i++)
            if (zmq_msg_send(&frames[i], sock, i + 1 < n ? ZMQ_SNDMORE : 0) < 0)
                fail(EXIT_TIMEOUT, "reply %" PRIu64 " not taken within %" PRIu64 " ms", answered, s->timeout_ms);
        end = now_ns();
        answered++;
    }
    /* The context ends too, so the last reply has left when the report goes. */
    int linger = echo_linger(s);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    echo_report(answered, bytes, start, end, cut_short);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        int major, minor, patch;
        zmq_version(&major, &minor, &patch);
        printf("{\"binding\":\"libzmq C API %d.%d.%d (cJSON %s)\",\"engine\":\"libzmq %d.%d.%d\"}\n",
               ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR, ZMQ_VERSION_PATCH, cJSON_Version(), major, minor,
               patch);
        return 0;
    }
    if (argc != 2)
        fail(EXIT_SPEC, "usage: peer '<node spec as JSON>' | peer --version");
    spec_t s = parse_spec(argv[1]);
    void *ctx = zmq_ctx_new();
    int type;
    void *sock = open_socket(&s, ctx, &type);
    pthread_t reader;
    pthread_create(&reader, NULL, read_control, NULL);
    pthread_detach(reader);
    if (strcmp(s.role, "source") == 0)
        run_source(&s, ctx, sock, type);
    else if (strcmp(s.role, "sink") == 0)
        run_sink(&s, sock, type);
    else if (strcmp(s.role, "ping") == 0)
        run_ping(&s, sock, type);
    else
        run_echo(&s, ctx, sock);
    return 0;
}
