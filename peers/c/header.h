/* The zmqperf measurement header (docs/wire-format.md): 24 bytes, little-endian.
 * Shared by peer.c and its conformance test. */
#ifndef ZMQPERF_PEER_HEADER_H
#define ZMQPERF_PEER_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define HDR_LEN 24
#define HDR_TIMESTAMP 0x01u
#define HDR_END 0x02u
#define HDR_WARMUP 0x04u
#define HDR_RESERVED 0xF8u

enum hdr_result { HDR_PLAIN = 0, HDR_OK = 1, HDR_BAD_VERSION = -1, HDR_BAD_FLAGS = -2 };

typedef struct {
    uint8_t version;
    uint8_t flags;
    uint32_t stream_id;
    uint64_t sequence;
    uint64_t send_ns;
} header_t;

static inline uint64_t hdr_get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline void hdr_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)(v & 0xFF);
}

/* Reads the header at the start of a message of `len` bytes. */
static inline enum hdr_result hdr_decode(const uint8_t *p, size_t len, header_t *h)
{
    if (len < HDR_LEN || p[0] != 'Z' || p[1] != 'P')
        return HDR_PLAIN;
    h->version = p[2];
    h->flags = p[3];
    if (h->version != 1)
        return HDR_BAD_VERSION;
    if (h->flags & HDR_RESERVED)
        return HDR_BAD_FLAGS;
    h->stream_id = (uint32_t)hdr_get_le(p + 4, 4);
    h->sequence = hdr_get_le(p + 8, 8);
    h->send_ns = hdr_get_le(p + 16, 8);
    return HDR_OK;
}

/* Writes a version-1 header into the first 24 bytes of `p`. */
static inline void hdr_encode(uint8_t *p, uint8_t flags, uint32_t stream_id, uint64_t sequence,
                              uint64_t send_ns)
{
    p[0] = 'Z';
    p[1] = 'P';
    p[2] = 1;
    p[3] = flags;
    hdr_put_le(p + 4, stream_id, 4);
    hdr_put_le(p + 8, sequence, 8);
    hdr_put_le(p + 16, send_ns, 8);
}

#endif
