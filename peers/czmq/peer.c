/* zmqperf peer on CZMQ, the high-level C binding (zsock, zframe, zmsg) that PTMP and Ruby's
 * rbczmq are built on: plays one node (source, sink, ping, echo) of a topology for
 * zmqperf's runner, as docs/peers.md describes. Every message goes through CZMQ's own
 * objects, as a CZMQ program's would: a zframe_t per single-frame message sent or received,
 * a zmsg_t where there are several frames (a ROUTER's envelope, an echo's request), the
 * socket a zsock_t with CZMQ's option setters. Its figures beside the c peer's (libzmq's
 * C API on the same Debian libzmq5) are CZMQ's own cost.
 *
 *   peer '<node spec as JSON>'   control lines on stdin/stdout
 *   peer --version               {"binding": ..., "engine": ...}
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <czmq.h>
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

/* The measurement header, shared with the c peer (peers/c stays beside this folder). */
#include "../c/header.h"

/* The peer's name in its errors, its exit (not exit(): CZMQ's atexit would wait on
 * sockets still open); then everything but its sockets, shared with the c peer. */
#define PEER_NAME "czmq"
#define PEER_EXIT _exit
#include "../c/core.h"


/* ---------- the socket ---------- */

/* The integer options, each through CZMQ's own setter. */
static const struct {
    const char *name;
    void (*set)(void *, int);
} INT_OPTIONS[] = {{"sndhwm", zsock_set_sndhwm},
                   {"rcvhwm", zsock_set_rcvhwm},
                   {"linger", zsock_set_linger},
                   {"sndbuf", zsock_set_sndbuf},
                   {"rcvbuf", zsock_set_rcvbuf},
                   {"immediate", zsock_set_immediate},
                   {"conflate", zsock_set_conflate},
                   {"xpub_verbose", zsock_set_xpub_verbose},
                   {"xpub_nodrop", zsock_set_xpub_nodrop},
                   {"router_mandatory", zsock_set_router_mandatory},
                   {"tcp_keepalive", zsock_set_tcp_keepalive}};

static void apply_options(const spec_t *s, zsock_t *sock, int type)
{
    const cJSON *opt;
    cJSON_ArrayForEach(opt, s->options)
    {
        if (cJSON_IsNull(opt) || strcmp(opt->string, "subscribe") == 0)
            continue;
        if (strcmp(opt->string, "routing_id") == 0) {
            if (!cJSON_IsString(opt))
                fail(EXIT_SPEC, "bad node spec: option routing_id must be a string");
            zsock_set_identity(sock, opt->valuestring); /* CZMQ's name for ZMQ_ROUTING_ID */
            continue;
        }
        size_t i = 0, n = sizeof INT_OPTIONS / sizeof INT_OPTIONS[0];
        while (i < n && strcmp(INT_OPTIONS[i].name, opt->string))
            i++;
        if (i == n)
            fail(EXIT_UNSUPPORTED,
                 "node %s: the czmq peer does not play socket option '%s' (remove it or play the node with zmqperf)",
                 s->name, opt->string);
        INT_OPTIONS[i].set(sock, cJSON_IsBool(opt) ? cJSON_IsTrue(opt) : (int)opt->valuedouble);
    }
    if (type != ZMQ_SUB && type != ZMQ_XSUB)
        return;
    /* Its prefixes; none, or an empty list, is everything. */
    const cJSON *subs = cJSON_GetObjectItemCaseSensitive(s->options, "subscribe");
    int n = cJSON_IsArray(subs) ? cJSON_GetArraySize(subs) : 0;
    for (int i = 0; i < (n ? n : 1); i++) {
        const cJSON *p = n ? cJSON_GetArrayItem(subs, i) : NULL;
        const char *prefix = cJSON_IsString(p) ? p->valuestring : "";
        if (type == ZMQ_SUB) {
            zsock_set_subscribe(sock, prefix);
            continue;
        }
        size_t len = strlen(prefix);
        zframe_t *sub = zframe_new(NULL, len + 1);
        zframe_data(sub)[0] = 1;
        memcpy(zframe_data(sub) + 1, prefix, len);
        if (zframe_send(&sub, sock, 0) != 0)
            fail(EXIT_UNSUPPORTED, "XSUB cannot send its subscription: %s", zmq_strerror(zmq_errno()));
    }
}


/* Opens the node's zsock, binds and connects it, then writes `ready`. */
static zsock_t *open_socket(const spec_t *s, int *type_out)
{
    int subscribing;
    int type = socket_type(s, &subscribing);
    zsock_t *sock = zsock_new(type);
    if (!sock)
        fail(EXIT_UNSUPPORTED, "cannot open a %s socket: %s", s->kind, zmq_strerror(zmq_errno()));
    zsock_set_linger(sock, 0);
    if (subscribing)
        zsock_set_xpub_verbose(sock, 1);
    zsock_set_rcvtimeo(sock, SLICE_MS);
    zsock_set_sndtimeo(sock, (int)s->timeout_ms);
    apply_options(s, sock, subscribing ? ZMQ_PUB : type);

    cJSON *ready = control_line("ready");
    cJSON *endpoints = cJSON_AddArrayToObject(ready, "endpoints");
    const cJSON *ep;
    cJSON_ArrayForEach(ep, s->bind)
    {
        if (!cJSON_IsString(ep) || zsock_bind(sock, "%s", ep->valuestring) < 0)
            fail(EXIT_UNSUPPORTED, "node %s cannot bind %s: %s", s->name,
                 cJSON_IsString(ep) ? ep->valuestring : "(not a string)", zmq_strerror(zmq_errno()));
        char *real = zsock_last_endpoint(sock);
        if (!g_bound[0])
            snprintf(g_bound, sizeof g_bound, "%s", real);
        cJSON_AddItemToArray(endpoints, cJSON_CreateString(real));
        zstr_free(&real);
    }
    cJSON_ArrayForEach(ep, s->connect)
    {
        if (!cJSON_IsString(ep) || zsock_connect(sock, "%s", ep->valuestring) != 0)
            fail(EXIT_UNSUPPORTED, "node %s cannot connect to %s: %s", s->name,
                 cJSON_IsString(ep) ? ep->valuestring : "(not a string)", zmq_strerror(zmq_errno()));
    }
    emit(ready);
    *type_out = type;
    return sock;
}

/* ---------- typed frames and log lines ---------- */

/* A frame of `size` bytes: the header (when it fits) and zeros. */
static zframe_t *headed_frame(size_t size, uint8_t flags, uint32_t stream, uint64_t seq, uint64_t stamp)
{
    zframe_t *f = zframe_new(NULL, size);
    byte *p = zframe_data(f);
    if (size >= HDR_LEN) {
        hdr_encode(p, flags, stream, seq, stamp);
        memset(p + HDR_LEN, 0, size - HDR_LEN);
    } else {
        memset(p, 0, size);
    }
    return f;
}

/* Message `seq` of a source with typed frames or log lines, its header written as given.
 * Typed: the first frame is the header then the type id (little-endian), then zeroed
 * payload frames. Log: the level as the topic frame, then the line (the header, then text,
 * filled with dots to `size`), as a ZeroMQ logger writes it. */
static zmsg_t *shaped_msg(const spec_t *s, uint8_t flags, uint64_t seq, uint64_t stamp)
{
    zmsg_t *msg = zmsg_new();
    if (s->nframes) {
        zframe_t *first = headed_frame(s->frames[0], flags, s->stream_id, seq, stamp);
        byte *p = zframe_data(first);
        for (int b = 0; b < 4; b++)
            p[HDR_LEN + b] = (byte)(s->type_id >> (8 * b));
        zmsg_append(msg, &first);
        for (size_t k = 1; k < s->nframes; k++) {
            zframe_t *part = zframe_new(NULL, s->frames[k]);
            memset(zframe_data(part), 0, s->frames[k]);
            zmsg_append(msg, &part);
        }
        return msg;
    }
    const char *level = s->levels[seq % s->nlevels];
    zmsg_addstr(msg, level);
    zframe_t *line = headed_frame(s->size, flags, s->stream_id, seq, stamp);
    char text[256];
    int n = snprintf(text, sizeof text, " %s %s: line %" PRIu64 " of the log, written by the czmq peer ", level,
                     s->name, seq);
    size_t room = s->size - HDR_LEN, len = (size_t)n < room ? (size_t)n : room;
    memcpy(zframe_data(line) + HDR_LEN, text, len);
    memset(zframe_data(line) + HDR_LEN + len, '.', room - len);
    zmsg_append(msg, &line);
    return msg;
}

/* Sends message `seq`: one zframe, or the shape's zmsg. 0 when it went. */
static int send_one(const spec_t *s, zsock_t *sock, uint8_t flags, uint64_t seq, uint64_t stamp)
{
    if (s->nframes || s->nlevels) {
        zmsg_t *msg = shaped_msg(s, flags, seq, stamp);
        return zmsg_send(&msg, sock);
    }
    zframe_t *f = headed_frame(s->size, flags, s->stream_id, seq, stamp);
    return zframe_send(&f, sock, 0);
}

/* ---------- source ---------- */

static void run_source(const spec_t *s, zsock_t *sock, int type)
{
    cJSON *report = new_report();
    wait_for_start(s->timeout_ms);
    if (type == ZMQ_XPUB && s->subscriptions > 0) {
        uint64_t t0 = now_ns(), waited = 0;
        uint32_t seen = 0;
        while (seen < s->subscriptions) {
            zframe_t *sub = zframe_recv(sock);
            if (!sub) {
                if ((waited += SLICE_MS) >= s->timeout_ms)
                    fail(EXIT_TIMEOUT, "saw %u of %u subscriptions within %" PRIu64 " ms on %s", seen,
                         s->subscriptions, s->timeout_ms, peer_name(s));
                continue;
            }
            if (zframe_size(sub) > 0 && zframe_data(sub)[0] == 1)
                seen++;
            zframe_destroy(&sub);
        }
        add_u64(report, "subscription_wait_ns", now_ns() - t0);
    }
    size_t size = s->size;
    for (uint64_t i = 0; i < s->warmup; i++) {
        if (send_one(s, sock, HDR_WARMUP, i, 0) != 0)
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
        if (send_one(s, sock, flags, i, stamp) != 0)
            fail(EXIT_TIMEOUT, "message %" PRIu64 " not taken within %" PRIu64 " ms by %s", i, s->timeout_ms,
                 peer_name(s));
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
    zsock_destroy(&sock);
    add_u64(report, "closed_ns", now_ns());
    send_report(report, "source");
}

/* ---------- sink ---------- */

/* A message of typed frames or a log line: the frame with the header (the first, or the
 * line), its level copied into `level`. Its frames and type id are checked. NULL when the
 * slice ran out. */
static zframe_t *recv_shaped(const spec_t *s, zsock_t *sock, int type, uint64_t nth, char *level, size_t cap)
{
    zmsg_t *msg = zmsg_recv(sock);
    if (!msg)
        return NULL;
    if (type == ZMQ_ROUTER)
        zframe_destroy(&(zframe_t *){zmsg_pop(msg)});
    if (s->nlevels) {
        zframe_t *lv = zmsg_pop(msg);
        size_t n = lv ? zframe_size(lv) : 0;
        n = n < cap - 1 ? n : cap - 1;
        memcpy(level, lv ? zframe_data(lv) : (byte *)"", n);
        level[n] = 0;
        zframe_destroy(&lv);
        zframe_t *line = zmsg_pop(msg);
        zmsg_destroy(&msg);
        if (!line)
            fail(EXIT_PROTOCOL, "protocol error: message %" PRIu64 ": a log level without its line", nth);
        return line;
    }
    size_t got = zmsg_size(msg);
    zframe_t *first = zmsg_pop(msg);
    zmsg_destroy(&msg);
    if (got != s->nframes)
        fail(EXIT_PROTOCOL, "protocol error: message %" PRIu64 ": %zu frames, %zu sent", nth, got, s->nframes);
    if (zframe_size(first) >= HDR_LEN + 4) {
        uint32_t id = (uint32_t)hdr_get_le(zframe_data(first) + HDR_LEN, 4);
        if (id != s->type_id)
            fail(EXIT_PROTOCOL, "protocol error: message %" PRIu64 ": type id %u, %u sent", nth, id, s->type_id);
    }
    return first;
}

/* One message's payload frame, or NULL when the slice ran out. A single frame is a zframe;
 * several (a ROUTER's envelope, a DEALER's delimiter) a zmsg, whose identity and empty
 * frames are dropped: the payload is the first other frame. */
static zframe_t *recv_payload(zsock_t *sock, int type)
{
    if (type != ZMQ_ROUTER && type != ZMQ_DEALER) {
        zframe_t *f = zframe_recv(sock);
        while (f && zsock_rcvmore(sock)) /* frames after the first: read and dropped */
            zframe_destroy(&(zframe_t *){zframe_recv(sock)});
        return f;
    }
    zmsg_t *msg = zmsg_recv(sock);
    if (!msg)
        return NULL;
    if (type == ZMQ_ROUTER)
        zframe_destroy(&(zframe_t *){zmsg_pop(msg)});
    zframe_t *f = zmsg_pop(msg);
    while (f && zframe_size(f) == 0 && zmsg_size(msg) > 0) {
        zframe_destroy(&f);
        f = zmsg_pop(msg);
    }
    zmsg_destroy(&msg);
    return f;
}

static void run_sink(const spec_t *s, zsock_t *sock, int type)
{
    int expected = sink_streams(s);
    int shaped = s->nframes || s->nlevels;
    char level[64] = "";
    wait_for_start(s->timeout_ms);
    uint64_t received = 0, bytes = 0, start = 0, last_read = 0, idle_ms = 0, plain = 0;
    int ends = 0, headed = 0;
    char cut_short[256] = "";
    for (;;) {
        zframe_t *f = shaped ? recv_shaped(s, sock, type, received + plain + 1, level, sizeof level)
                             : recv_payload(sock, type);
        if (!f) {
            if (zmq_errno() != EAGAIN)
                fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
            if (sink_idle(s, &idle_ms, received, expected, ends, cut_short, sizeof cut_short))
                break;
            continue;
        }
        idle_ms = 0;
        size_t len = zframe_size(f);
        header_t h;
        int decoded = hdr_decode(zframe_data(f), len, &h);
        zframe_destroy(&f);
        if (decoded == HDR_BAD_VERSION)
            fail(EXIT_PROTOCOL, "protocol error: header version %u (this peer reads version 1)", h.version);
        if (decoded == HDR_BAD_FLAGS)
            fail(EXIT_PROTOCOL, "protocol error: reserved header flags set (0x%02x)", h.flags);
        if (decoded == HDR_PLAIN) {
            if (++plain <= s->warmup)
                continue; /* the warm-up of a sender without the header */
            if (received == 0)
                start = last_read = now_ns();
            received++;
            bytes += len;
            continue;
        }
        if (sink_take(s, &h, len, level, expected, &ends, &headed, &received, &bytes, &start, &last_read))
            break;
    }
    cJSON *report = sink_report(received, bytes, start, last_read, headed, cut_short);
    zsock_destroy(&sock);
    send_report(report, "sink");
}

/* ---------- ping ---------- */

static void run_ping(const spec_t *s, zsock_t *sock, int type)
{
    size_t size = s->size;
    hist_t latency;
    hist_init(&latency);
    int delimited = type == ZMQ_DEALER && s->delimiter;
    uint64_t total = s->warmup + s->count, start = 0, end = 0;
    wait_for_start(s->timeout_ms);
    for (uint64_t i = 0; i < total; i++) {
        int warm = i < s->warmup;
        uint64_t seq = warm ? i : i - s->warmup;
        uint64_t t0 = now_ns();
        zmsg_t *req = zmsg_new();
        if (delimited)
            zmsg_append(req, &(zframe_t *){zframe_new_empty()});
        zframe_t *body = headed_frame(size, (uint8_t)(HDR_TIMESTAMP | (warm ? HDR_WARMUP : 0)), s->stream_id,
                                      seq, t0);
        zmsg_append(req, &body);
        if (zmsg_send(&req, sock) != 0)
            fail(EXIT_TIMEOUT, "request %" PRIu64 " not taken within %" PRIu64 " ms by %s", i, s->timeout_ms,
                 peer_name(s));
        uint64_t waited = 0;
        zmsg_t *reply;
        while (!(reply = zmsg_recv(sock))) {
            if (zmq_errno() != EAGAIN)
                fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
            if ((waited += SLICE_MS) >= s->timeout_ms)
                fail(EXIT_TIMEOUT, "no reply to request %" PRIu64 " within %" PRIu64 " ms from %s", seq,
                     s->timeout_ms, peer_name(s));
        }
        uint64_t t1 = now_ns();
        zframe_t *got = zmsg_last(reply); /* after a REP's empty delimiter, if any */
        if (!got || zframe_size(got) != size)
            fail(EXIT_PROTOCOL, "protocol error: a reply of %zu bytes to a request of %zu bytes",
                 got ? zframe_size(got) : 0, size);
        header_t h;
        if (size >= HDR_LEN && (hdr_decode(zframe_data(got), size, &h) != HDR_OK || h.sequence != seq))
            fail(EXIT_PROTOCOL, "protocol error: the reply to request %" PRIu64 " carries another header", seq);
        zmsg_destroy(&reply);
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
    zsock_destroy(&sock);
    send_report(report, "ping");
}

/* ---------- echo ---------- */

static void run_echo(const spec_t *s, zsock_t *sock)
{
    uint64_t answered = 0, bytes = 0, start = 0, end = 0, idle_ms = 0;
    char cut_short[128] = "";
    wait_for_start(s->timeout_ms);
    while (!(s->ends_itself && s->expect && answered >= s->expect)) {
        zmsg_t *req = zmsg_recv(sock);
        if (!req) {
            if (zmq_errno() != EAGAIN)
                fail(EXIT_PROTOCOL, "receive failed: %s", zmq_strerror(zmq_errno()));
            if (echo_idle(s, &idle_ms, cut_short, sizeof cut_short))
                break;
            continue;
        }
        idle_ms = 0;
        if (!answered)
            start = now_ns();
        bytes += zframe_size(zmsg_last(req));
        /* Every frame back as it came (a ROUTER's identity and delimiter included). */
        if (zmsg_send(&req, sock) != 0)
            fail(EXIT_TIMEOUT, "reply %" PRIu64 " not taken within %" PRIu64 " ms", answered, s->timeout_ms);
        end = now_ns();
        answered++;
    }
    zsock_set_linger(sock, echo_linger(s));
    zsock_destroy(&sock);
    echo_report(answered, bytes, start, end, cut_short);
}

int main(int argc, char **argv)
{
    /* CZMQ's own SIGINT/SIGTERM handler would turn a signal into a quiet NULL receive: the
     * runner's signals keep their default effect. Its log lines go to stderr, never into the
     * control lines on stdout. */
    zsys_handler_set(NULL);
    zsys_set_logstream(stderr);
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        int major, minor, patch;
        zmq_version(&major, &minor, &patch);
        printf("{\"binding\":\"CZMQ %d.%d.%d (cJSON %s)\",\"engine\":\"libzmq %d.%d.%d\"}\n", CZMQ_VERSION_MAJOR,
               CZMQ_VERSION_MINOR, CZMQ_VERSION_PATCH, cJSON_Version(), major, minor, patch);
        return 0;
    }
    if (argc != 2)
        fail(EXIT_SPEC, "usage: peer '<node spec as JSON>' | peer --version");
    spec_t s = parse_spec(argv[1]);
    int type;
    zsock_t *sock = open_socket(&s, &type);
    pthread_t reader;
    pthread_create(&reader, NULL, read_control, NULL);
    pthread_detach(reader);
    if (strcmp(s.role, "source") == 0)
        run_source(&s, sock, type);
    else if (strcmp(s.role, "sink") == 0)
        run_sink(&s, sock, type);
    else if (strcmp(s.role, "ping") == 0)
        run_ping(&s, sock, type);
    else
        run_echo(&s, sock);
    return 0;
}
