/* Conformance test of the c peer: every vector of spec/header-vectors.json, then the peer
 * against itself over tcp on 127.0.0.1 (PUSH source -> PULL sink, REQ ping -> REP echo),
 * each wait bounded. Exit 0 when everything passed, 1 with the failures named.
 *
 *   test_peer PEER_BINARY HEADER_VECTORS_JSON
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "header.h"

static int failures, checks;

static void check(int ok, const char *what, const char *detail)
{
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    }
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    text[fread(text, 1, (size_t)n, f)] = 0;
    fclose(f);
    return text;
}

/* A field of a vector read as an exact u64 from the file's text (a double would round
 * 2^64-1): the vector's name, then its "fields", then the key. */
static uint64_t exact_field(const char *text, const char *name, const char *key)
{
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\"", name);
    const char *at = strstr(text, pattern);
    at = at ? strstr(at, "\"fields\"") : NULL;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    at = at ? strstr(at, pattern) : NULL;
    return at ? strtoull(at + strlen(pattern), NULL, 10) : UINT64_MAX - 1;
}

static void test_vectors(const char *path)
{
    char *text = slurp(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    check(root != NULL, "read the header vectors", path);
    if (!root)
        return;
    const cJSON *v;
    int n = 0;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(root, "vectors"))
    {
        const char *name = cJSON_GetObjectItemCaseSensitive(v, "name")->valuestring;
        const char *hex = cJSON_GetObjectItemCaseSensitive(v, "hex")->valuestring;
        const char *expect = cJSON_GetObjectItemCaseSensitive(v, "expect")->valuestring;
        size_t len = strlen(hex) / 2;
        uint8_t bytes[256];
        for (size_t i = 0; i < len && i < sizeof bytes; i++)
            sscanf(hex + 2 * i, "%2hhx", &bytes[i]);
        header_t h = {0};
        enum hdr_result r = hdr_decode(bytes, len, &h);
        n++;
        if (strcmp(expect, "plain") == 0) {
            check(r == HDR_PLAIN, name, "should decode as no header");
        } else if (strcmp(expect, "error:unsupported-version") == 0) {
            check(r == HDR_BAD_VERSION, name, "should be refused: unsupported version");
        } else if (strcmp(expect, "error:reserved-flags") == 0) {
            check(r == HDR_BAD_FLAGS, name, "should be refused: reserved flags");
        } else {
            check(r == HDR_OK, name, "should decode as a header");
            check(h.version == exact_field(text, name, "version"), name, "version");
            check(h.flags == exact_field(text, name, "flags"), name, "flags");
            check(h.stream_id == exact_field(text, name, "stream_id"), name, "stream_id");
            check(h.sequence == exact_field(text, name, "sequence"), name, "sequence");
            check(h.send_ns == exact_field(text, name, "send_ns"), name, "send_ns");
            uint8_t out[HDR_LEN];
            hdr_encode(out, (uint8_t)exact_field(text, name, "flags"),
                       (uint32_t)exact_field(text, name, "stream_id"), exact_field(text, name, "sequence"),
                       exact_field(text, name, "send_ns"));
            check(memcmp(out, bytes, HDR_LEN) == 0, name, "encoding the fields gives other bytes");
        }
    }
    check(n == 11, "all 11 vectors read", NULL);
    printf("header vectors: %d read\n", n);
    cJSON_Delete(root);
    free(text);
}

/* ---------- the peer against itself ---------- */

typedef struct {
    pid_t pid;
    FILE *in, *out;
} child_t;

static child_t spawn(const char *peer, const char *spec)
{
    int to[2], from[2];
    child_t c = {0};
    if (pipe(to) || pipe(from))
        return c;
    c.pid = fork();
    if (c.pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[1]);
        close(from[0]);
        execl(peer, peer, spec, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    c.in = fdopen(to[1], "w");
    c.out = fdopen(from[0], "r");
    return c;
}

static void say(child_t *c, const char *type)
{
    fprintf(c->in, "{\"type\":\"%s\",\"v\":1}\n", type);
    fflush(c->in);
}

/* The child's next line of `type`, within `ms`; NULL (and a failure) otherwise. */
static cJSON *expect_line(child_t *c, const char *type, int ms, const char *who)
{
    char line[1 << 16], what[128];
    snprintf(what, sizeof what, "%s writes %s within %d ms", who, type, ms);
    struct pollfd p = {fileno(c->out), POLLIN, 0};
    if (poll(&p, 1, ms) <= 0 || !fgets(line, sizeof line, c->out)) {
        check(0, what, "nothing came");
        return NULL;
    }
    cJSON *msg = cJSON_Parse(line);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(msg, "type");
    int ok = cJSON_IsString(t) && strcmp(t->valuestring, type) == 0;
    check(ok, what, line);
    if (!ok) {
        cJSON_Delete(msg);
        return NULL;
    }
    return msg;
}

static void finish(child_t *c, const char *who)
{
    int status = -1;
    for (int i = 0; i < 100 && waitpid(c->pid, &status, WNOHANG) == 0; i++)
        usleep(50000);
    if (waitpid(c->pid, &status, WNOHANG) == 0) {
        kill(c->pid, SIGKILL);
        waitpid(c->pid, &status, 0);
    }
    char what[64];
    snprintf(what, sizeof what, "%s exits 0", who);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, what, NULL);
    fclose(c->in);
    fclose(c->out);
}

static double at(const cJSON *report, const char *span, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "report"), span);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static double hist_count(const cJSON *report)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "report"), "latency");
    const cJSON *b;
    double n = 0;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(h, "buckets")) n += cJSON_GetArrayItem(b, 1)->valuedouble;
    return n;
}

#define COMMON "\"size\":64,\"warmup\":10,\"rate\":null,\"stamp_every\":16,\"timeout_ms\":5000,\"stream_id\":3"

static const char *first_endpoint(cJSON *ready)
{
    const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ready, "endpoints"), 0);
    return cJSON_IsString(e) ? e->valuestring : "";
}

static void test_pair(const char *peer, const char *label, const char *rx_role, const char *rx_kind,
                      const char *tx_role, const char *tx_kind, int count)
{
    char spec[2048];
    snprintf(spec, sizeof spec,
             "{\"name\":\"rx\",\"role\":\"%s\",\"sockets\":[{\"kind\":\"%s\",\"bind\":[\"tcp://127.0.0.1:*\"],"
             "\"connect\":[],\"options\":{}}],\"count\":%d," COMMON
             ",\"streams\":[[3,%d]],\"ends_itself\":true,\"expect\":%d}",
             rx_role, rx_kind, count, count, count + 10);
    child_t rx = spawn(peer, spec);
    cJSON *ready = expect_line(&rx, "ready", 5000, "the receiver");
    if (!ready) {
        finish(&rx, "the receiver");
        return;
    }
    snprintf(spec, sizeof spec,
             "{\"name\":\"tx\",\"role\":\"%s\",\"sockets\":[{\"kind\":\"%s\",\"bind\":[],\"connect\":[\"%s\"],"
             "\"options\":{}}],\"count\":%d," COMMON ",\"quit\":\"wait-for-stop\"}",
             tx_role, tx_kind, first_endpoint(ready), count);
    cJSON_Delete(ready);
    child_t tx = spawn(peer, spec);
    cJSON_Delete(expect_line(&tx, "ready", 5000, "the sender"));
    say(&rx, "start");
    say(&tx, "start");
    cJSON_Delete(expect_line(&tx, "sent", 20000, "the sender"));
    cJSON *rx_report = NULL, *tx_report = NULL;
    if (strcmp(tx_role, "source") == 0) {
        rx_report = expect_line(&rx, "report", 10000, "the sink");
        say(&tx, "stop");
        tx_report = expect_line(&tx, "report", 5000, "the source");
        check(at(rx_report, "delivered", "messages") == count, label, "the sink counts every message");
        check(at(tx_report, "send", "messages") == count, label, "the source counts every message");
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                                                 cJSON_GetObjectItemCaseSensitive(rx_report, "report"), "ledger"),
                                             "runs"),
            "3");
        const cJSON *run = cJSON_GetArrayItem(runs, 0);
        check(cJSON_GetArraySize(runs) == 1 && cJSON_GetArrayItem(run, 0)->valuedouble == 0 &&
                  cJSON_GetArrayItem(run, 1)->valuedouble == count,
              label, "the ledger holds one run 0..count");
        check(hist_count(rx_report) == (count - 1) / 16 + 1 + ((count - 1) % 16 != 0), label,
              "the sink's latency has every 16th message and the last");
    } else {
        tx_report = expect_line(&tx, "report", 5000, "the ping");
        rx_report = expect_line(&rx, "report", 5000, "the echo");
        check(at(tx_report, "round_trips", "messages") == count, label, "the ping counts every round trip");
        check(hist_count(tx_report) == count, label, "the ping's latency has every round trip");
        check(at(rx_report, "round_trips", "messages") == count + 10, label,
              "the echo answers every request, warm-up included");
    }
    cJSON_Delete(rx_report);
    cJSON_Delete(tx_report);
    finish(&tx, "the sender");
    finish(&rx, "the receiver");
    printf("%s: done\n", label);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_peer PEER_BINARY spec/header-vectors.json\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    alarm(120); /* a watchdog: the whole test never outlives two minutes */
    test_vectors(argv[2]);
    test_pair(argv[1], "source -> sink (PUSH/PULL over tcp)", "sink", "PULL", "source", "PUSH", 10000);
    test_pair(argv[1], "ping -> echo (REQ/REP over tcp)", "echo", "REP", "ping", "REQ", 1000);
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
