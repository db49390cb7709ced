/* What the measurement header costs over inproc, by layout: libzmq's plain loop (nothing
 * written or read), today's 24-byte header (magic, version, flags, stream id, sequence,
 * send time: written by the sender, checked and read by the receiver), and the least any
 * header can do (an 8-byte sequence number at offset 0, written and read). PUSH -> PULL
 * over inproc, 64 B, the variants interleaved round by round; prints msg/s per run and the
 * ratios to plain with a 95% interval. Build and run: scripts/header-layout.sh */
#include <zmq.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

enum { PLAIN, TODAY, SEQ_ONLY, VARIANTS };
static const char *names[VARIANTS] = {"plain", "today (24 B)", "seq only (8 B)"};

struct job { void *ctx; int variant; long count; int size; };

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *sender(void *arg) {
    struct job *j = arg;
    void *s = zmq_socket(j->ctx, ZMQ_PUSH);
    zmq_connect(s, "inproc://layout");
    for (long i = 0; i < j->count; i++) {
        zmq_msg_t m;
        zmq_msg_init_size(&m, (size_t)j->size);
        unsigned char *d = zmq_msg_data(&m);
        if (j->variant == TODAY) {
            uint64_t seq = (uint64_t)i, ts = (i % 16 == 0) ? now_ns() : 0;
            uint32_t stream = 7;
            d[0] = 'Z'; d[1] = 'P'; d[2] = 1; d[3] = ts ? 1 : 0;
            memcpy(d + 4, &stream, 4);
            memcpy(d + 8, &seq, 8);
            memcpy(d + 16, &ts, 8);
        } else if (j->variant == SEQ_ONLY) {
            uint64_t seq = (uint64_t)i;
            memcpy(d, &seq, 8);
        }
        zmq_msg_send(&m, s, 0);
    }
    zmq_close(s);
    return NULL;
}

static double one_run(int variant, long count, int size) {
    void *ctx = zmq_ctx_new();
    void *r = zmq_socket(ctx, ZMQ_PULL);
    zmq_bind(r, "inproc://layout");
    struct job j = {ctx, variant, count, size};
    pthread_t t;
    pthread_create(&t, NULL, sender, &j);
    zmq_msg_t m;
    zmq_msg_init(&m);
    uint64_t expect = 0, bad = 0, start = 0;
    for (long i = 0; i < count; i++) {
        zmq_msg_recv(&m, r, 0);
        if (i == 0) start = now_ns();
        const unsigned char *d = zmq_msg_data(&m);
        if (variant == TODAY) {
            uint64_t seq;
            if (d[0] != 'Z' || d[1] != 'P' || d[2] != 1 || (d[3] & 0xF8)) bad++;
            memcpy(&seq, d + 8, 8);
            if (seq != expect) bad++;
            expect = seq + 1;
        } else if (variant == SEQ_ONLY) {
            uint64_t seq;
            memcpy(&seq, d, 8);
            if (seq != expect) bad++;
            expect = seq + 1;
        }
    }
    uint64_t end = now_ns();
    zmq_msg_close(&m);
    pthread_join(t, NULL);
    zmq_close(r);
    zmq_ctx_term(ctx);
    if (bad) { fprintf(stderr, "%s: %llu bad messages\n", names[variant], (unsigned long long)bad); exit(1); }
    return (double)(count - 1) * 1e9 / (double)(end - start);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    long count = argc > 2 ? atol(argv[2]) : 2000000;
    int size = argc > 3 ? atoi(argv[3]) : 64;
    if (rounds < 2 || count < 2 || size < 24) { fprintf(stderr, "usage: header-layout [ROUNDS>=2] [COUNT] [SIZE>=24]\n"); return 2; }
    double *rate = calloc((size_t)rounds * VARIANTS, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < VARIANTS; k++) {
            int v = (r + k) % VARIANTS; /* rotate the order each round */
            rate[r * VARIANTS + v] = one_run(v, count, size);
        }
        printf("round %2d:", r + 1);
        for (int v = 0; v < VARIANTS; v++) printf("  %s %.0f msg/s", names[v], rate[r * VARIANTS + v]);
        printf("\n");
    }
    printf("\nratio to plain (per round, then mean with 95%% interval, t with %d dof):\n", rounds - 1);
    for (int v = TODAY; v < VARIANTS; v++) {
        double sum = 0, sq = 0;
        for (int r = 0; r < rounds; r++) { double x = rate[r * VARIANTS + v] / rate[r * VARIANTS + PLAIN]; sum += x; sq += x * x; }
        double mean = sum / rounds, sd = sqrt((sq - rounds * mean * mean) / (rounds - 1));
        double t = rounds >= 10 ? 2.26 : 2.78; /* close enough for 10 and 5 rounds */
        double *xs = calloc((size_t)rounds, sizeof(double));
        for (int r = 0; r < rounds; r++) xs[r] = rate[r * VARIANTS + v] / rate[r * VARIANTS + PLAIN];
        for (int a = 1; a < rounds; a++) for (int b = a; b > 0 && xs[b - 1] > xs[b]; b--) { double x = xs[b]; xs[b] = xs[b - 1]; xs[b - 1] = x; }
        double median = rounds % 2 ? xs[rounds / 2] : (xs[rounds / 2 - 1] + xs[rounds / 2]) / 2;
        free(xs);
        printf("  %-15s mean %.3f  [%.3f, %.3f]  median %.3f\n", names[v], mean, mean - t * sd / sqrt(rounds), mean + t * sd / sqrt(rounds), median);
    }
    free(rate);
    return 0;
}
