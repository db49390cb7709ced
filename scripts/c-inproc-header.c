/* libzmq's inproc throughput measurement (a PUSH thread sends COUNT messages of SIZE bytes
 * to a PULL that times them), optionally with what zmqperf's instrumented mode adds to
 * each message: the sender writes the 24-byte measurement header ("ZP", version 1, flags,
 * stream id u32, sequence u64, send time u64 in CLOCK_MONOTONIC ns; a time stamp on every
 * 16th message and the last) and the receiver reads it (magic, stream and sequence
 * checked; the one-way delay of each stamped message summed).
 *
 * It shows what the header costs libzmq itself, apart from any tool:
 * scripts/bench-header-cost.py times it with and without the header beside zmqperf's
 * inproc_thr instrumented and --plain.
 *
 *   c-inproc-header SIZE COUNT [header]
 *
 * prints "mean throughput: N [msg/s]" as libzmq's inproc_thr does, and with the header
 * the messages whose header was wrong (0 when all is well). Build: scripts/build-c-perf.sh. */
#include <zmq.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HEADER = 24, STAMP_EVERY = 16 };
static const uint64_t FIRST_WORD = 0x0000000101015a50ull; /* "ZP", 1, flags 1, stream 1 */
static const uint64_t STAMP_BIT = 1ull << 24;

static long count;
static int size, header;
static void *ctx;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *send_all(void *unused) {
    (void)unused;
    void *s = zmq_socket(ctx, ZMQ_PUSH);
    if (zmq_connect(s, "inproc://thr") != 0) {
        fprintf(stderr, "c-inproc-header: connect: %s\n", zmq_strerror(zmq_errno()));
        exit(1);
    }
    for (long i = 0; i < count; i++) {
        zmq_msg_t m;
        zmq_msg_init_size(&m, (size_t)size);
        if (header) {
            unsigned char *d = zmq_msg_data(&m);
            int stamped = i % STAMP_EVERY == 0 || i + 1 == count;
            uint64_t w[3] = {stamped ? FIRST_WORD : FIRST_WORD & ~STAMP_BIT, (uint64_t)i,
                             stamped ? now_ns() : 0};
            memcpy(d, w, sizeof w);
        }
        if (zmq_msg_send(&m, s, 0) < 0) {
            fprintf(stderr, "c-inproc-header: send: %s\n", zmq_strerror(zmq_errno()));
            exit(1);
        }
    }
    zmq_close(s);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "header") != 0)) {
        fprintf(stderr, "usage: c-inproc-header SIZE COUNT [header]\n");
        return 1;
    }
    size = atoi(argv[1]);
    count = atol(argv[2]);
    header = argc == 4;
    if (count < 2 || size < (header ? HEADER : 0)) {
        fprintf(stderr, "c-inproc-header: COUNT at least 2, SIZE at least %d\n", header ? HEADER : 0);
        return 1;
    }
    ctx = zmq_ctx_new();
    void *r = zmq_socket(ctx, ZMQ_PULL);
    zmq_bind(r, "inproc://thr");
    pthread_t sender;
    pthread_create(&sender, NULL, send_all, NULL);
    zmq_msg_t m;
    zmq_msg_init(&m);
    long wrong = 0;
    uint64_t delay_ns = 0, start = 0;
    for (long i = 0; i < count; i++) {
        if (zmq_msg_recv(&m, r, 0) < 0) {
            fprintf(stderr, "c-inproc-header: recv: %s\n", zmq_strerror(zmq_errno()));
            return 1;
        }
        if (i == 0)
            start = now_ns(); /* timed from the first message, as inproc_thr */
        if (header) {
            uint64_t w[3];
            memcpy(w, zmq_msg_data(&m), sizeof w);
            if ((w[0] | STAMP_BIT) != FIRST_WORD || w[1] != (uint64_t)i)
                wrong++;
            else if (w[0] & STAMP_BIT)
                delay_ns += now_ns() - w[2];
        }
    }
    uint64_t elapsed = now_ns() - start;
    zmq_msg_close(&m);
    pthread_join(sender, NULL);
    printf("message size: %d [B]\nmessage count: %ld\n", size, count);
    printf("mean throughput: %.0f [msg/s]\n", (double)(count - 1) * 1e9 / (double)elapsed);
    if (header)
        printf("wrong headers: %ld\nsummed delay: %llu [ns]\n", wrong, (unsigned long long)delay_ns);
    zmq_close(r);
    zmq_ctx_term(ctx);
    return wrong ? 3 : 0;
}
