/* The least a fan-out can do on libzmq, as the reference zmqperf's publisher and swarm are
 * measured against (scripts/bench-fanout-c.py). It speaks zmqperf's measurement header (24
 * bytes: "ZP", version 1, flags, stream id u32, sequence u64, send time u64 in CLOCK_MONOTONIC
 * ns, little-endian), so either side pairs with zmqperf's.
 *
 *   c-fanout sub ENDPOINT SUBS COUNT
 *       SUBS SUB sockets connect to ENDPOINT and subscribe to everything; one zmq_poll loop
 *       reads them all until each has COUNT messages (exit 2 after 10 s without a message).
 *   c-fanout pub ENDPOINT SUBS COUNT SIZE
 *       an XPUB (NODROP, VERBOSER) binds ENDPOINT, waits for SUBS subscriptions, sends COUNT
 *       messages of SIZE bytes back to back, the header stamped at each send, the last one
 *       flagged as the end; then waits for the subscribers to leave (10 s at most).
 *
 * Each prints one line: what it did, its CPU (user + system, this process), and for `sub`
 * the one-way latency (mean and max) of every delivery. Build: scripts/bench-fanout-c.py. */
#include <zmq.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { HEADER = 24, FLAG_TIMESTAMP = 1, FLAG_END = 2, IDLE_MS = 10000 };

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double cpu_ms(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

static int sub(const char *endpoint, int subs, long count) {
    void *ctx = zmq_ctx_new();
    void **s = calloc((size_t)subs, sizeof *s);
    zmq_pollitem_t *items = calloc((size_t)subs, sizeof *items);
    long *got = calloc((size_t)subs, sizeof *got);
    int zero = 0;
    for (int i = 0; i < subs; i++) {
        s[i] = zmq_socket(ctx, ZMQ_SUB);
        zmq_setsockopt(s[i], ZMQ_LINGER, &zero, sizeof zero);
        zmq_setsockopt(s[i], ZMQ_SUBSCRIBE, "", 0);
        if (zmq_connect(s[i], endpoint) != 0) {
            fprintf(stderr, "c-fanout: connect %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
            return 1;
        }
        items[i].socket = s[i];
        items[i].events = ZMQ_POLLIN;
    }
    long done = 0, deliveries = 0;
    uint64_t sum_ns = 0, max_ns = 0;
    zmq_msg_t m;
    zmq_msg_init(&m);
    while (done < subs) {
        int n = zmq_poll(items, subs, IDLE_MS);
        if (n == 0) {
            fprintf(stderr, "c-fanout: nothing for %d ms: %ld of %ld deliveries\n", IDLE_MS,
                    deliveries, count * subs);
            return 2;
        }
        for (int i = 0; i < subs; i++) {
            if (!(items[i].revents & ZMQ_POLLIN)) continue;
            /* Everything this socket holds now, as the swarm reads it. */
            while (got[i] < count && zmq_msg_recv(&m, s[i], ZMQ_DONTWAIT) >= 0) {
                uint64_t t = now_ns();
                const unsigned char *d = zmq_msg_data(&m);
                if (zmq_msg_size(&m) >= HEADER && d[0] == 'Z' && d[1] == 'P' &&
                    (d[3] & FLAG_TIMESTAMP)) {
                    uint64_t sent;
                    memcpy(&sent, d + 16, 8);
                    uint64_t ns = t > sent ? t - sent : 0;
                    sum_ns += ns;
                    if (ns > max_ns) max_ns = ns;
                }
                deliveries++;
                if (++got[i] == count) done++;
            }
        }
    }
    zmq_msg_close(&m);
    double cpu = cpu_ms();
    printf("sub deliveries %ld cpu_ms %.1f mean_us %.1f max_us %.1f\n", deliveries, cpu,
           deliveries ? sum_ns / 1e3 / deliveries : 0.0, max_ns / 1e3);
    for (int i = 0; i < subs; i++) zmq_close(s[i]);
    zmq_ctx_term(ctx);
    return 0;
}

static int pub(const char *endpoint, int subs, long count, int size) {
    if (size < HEADER) {
        fprintf(stderr, "c-fanout: SIZE %d: at least %d (the header)\n", size, HEADER);
        return 1;
    }
    void *ctx = zmq_ctx_new();
    void *p = zmq_socket(ctx, ZMQ_XPUB);
    int one = 1, zero = 0, backlog = subs > 100 ? subs : 100;
    zmq_setsockopt(p, ZMQ_XPUB_VERBOSER, &one, sizeof one);
    zmq_setsockopt(p, ZMQ_XPUB_NODROP, &one, sizeof one);
    zmq_setsockopt(p, ZMQ_BACKLOG, &backlog, sizeof backlog);
    zmq_setsockopt(p, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_bind(p, endpoint) != 0) {
        fprintf(stderr, "c-fanout: bind %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
        return 1;
    }
    int timeout = IDLE_MS;
    zmq_setsockopt(p, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    char ev[256];
    for (int present = 0; present < subs;) {
        int n = zmq_recv(p, ev, sizeof ev, 0);
        if (n < 0) {
            fprintf(stderr, "c-fanout: %d of %d subscribers after %d ms\n", present, subs, IDLE_MS);
            return 2;
        }
        if (n > 0 && ev[0] == 1) present++;
        if (n > 0 && ev[0] == 0) present--;
    }
    double cpu0 = cpu_ms();
    for (long i = 0; i < count; i++) {
        zmq_msg_t m;
        zmq_msg_init_size(&m, (size_t)size);
        unsigned char *d = zmq_msg_data(&m);
        uint32_t stream = 1;
        uint64_t seq = (uint64_t)i, t = now_ns();
        d[0] = 'Z'; d[1] = 'P'; d[2] = 1;
        d[3] = FLAG_TIMESTAMP | (i + 1 == count ? FLAG_END : 0);
        memcpy(d + 4, &stream, 4);
        memcpy(d + 8, &seq, 8);
        memcpy(d + 16, &t, 8);
        if (zmq_msg_send(&m, p, 0) < 0) {
            fprintf(stderr, "c-fanout: send #%ld: %s\n", i, zmq_strerror(zmq_errno()));
            return 1;
        }
    }
    double sent_cpu = cpu_ms() - cpu0;
    /* The subscribers leave once they have everything: their unsubscriptions say so. */
    for (int present = subs; present > 0;) {
        int n = zmq_recv(p, ev, sizeof ev, 0);
        if (n < 0) break;
        if (n > 0 && ev[0] == 0) present--;
    }
    printf("pub messages %ld subscribers %d cpu_ms %.1f send_cpu_ms %.1f\n", count, subs, cpu_ms(),
           sent_cpu);
    zmq_close(p);
    zmq_ctx_term(ctx);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "sub") == 0)
        return sub(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc == 6 && strcmp(argv[1], "pub") == 0)
        return pub(argv[2], atoi(argv[3]), atol(argv[4]), atoi(argv[5]));
    fprintf(stderr, "usage: c-fanout sub ENDPOINT SUBS COUNT | c-fanout pub ENDPOINT SUBS COUNT SIZE\n");
    return 1;
}
