/* The spool's coding of rows: scratch buffers kept between uses, the byte shuffle (byte k of
 * every row together, as HDF5's shuffle filter lays a chunk out) and LZ4 frames.  Nothing here
 * knows the file or the handle: the spool packs with it, the merge unpacks, and planez.c
 * shuffles /txlog's whole chunks with it. */
#include <stdlib.h>
#include <string.h>
#include <lz4frame.h>

#include "store_format.h"

bool cs_store_buf_grow(cs_store_buf *b, size_t len) {
  if (len <= b->cap) return true;
  void *p = realloc(b->p, len);
  if (!p) return false;
  b->p = p;
  b->cap = len;
  return true;
}

/* Swaps the bytes of x and y selected by mask << shift in x and by mask in y. */
#define SWAP_BYTES(x, y, mask, shift)                                                           \
  do {                                                                                          \
    uint64_t t_ = (((x) >> (shift)) ^ (y)) & (mask);                                            \
    (y) ^= t_;                                                                                  \
    (x) ^= t_ << (shift);                                                                       \
  } while (0)

/* Transposes the 8 x 8 bytes of x: byte c of x[r] <-> byte r of x[c], in three rounds that swap
 * blocks of 4, 2 and 1 bytes across the diagonal. */
static inline void transpose8x8(uint64_t x[8]) {
  uint64_t a = x[0], b = x[1], c = x[2], d = x[3], e = x[4], f = x[5], g = x[6], h = x[7];
  const uint64_t m4 = 0x00000000FFFFFFFFull, m2 = 0x0000FFFF0000FFFFull,
                 m1 = 0x00FF00FF00FF00FFull;
  SWAP_BYTES(a, e, m4, 32);
  SWAP_BYTES(b, f, m4, 32);
  SWAP_BYTES(c, g, m4, 32);
  SWAP_BYTES(d, h, m4, 32);
  SWAP_BYTES(a, c, m2, 16);
  SWAP_BYTES(b, d, m2, 16);
  SWAP_BYTES(e, g, m2, 16);
  SWAP_BYTES(f, h, m2, 16);
  SWAP_BYTES(a, b, m1, 8);
  SWAP_BYTES(c, d, m1, 8);
  SWAP_BYTES(e, f, m1, 8);
  SWAP_BYTES(g, h, m1, 8);
  x[0] = a, x[1] = b, x[2] = c, x[3] = d, x[4] = e, x[5] = f, x[6] = g, x[7] = h;
}

/* byte k of record i -> out[k * n + i] (each of the `size` planes together, as HDF5's shuffle
 * filter lays them out), or back.  Blocks of 8 records x 8 bytes are transposed in registers
 * where bytes sit in a 64-bit word in memory order; the rest goes byte by byte.  The records go
 * in runs of TRANSPOSE_RUN that stay in the second-level cache, plane group by plane group, so
 * each plane is written (or read) in runs of that many bytes rather than 8 at a time, which
 * would touch `size` pages per 8 records. */
#define TRANSPOSE_RUN 2048
void cs_store_shuffle(const unsigned char *in, unsigned char *out, uint64_t n, size_t size,
                      bool back) {
  uint64_t done = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (size % 8 == 0) {
    done = n - n % 8;
    for (uint64_t run = 0; run < done; run += TRANSPOSE_RUN) {
      uint64_t end = done - run < TRANSPOSE_RUN ? done : run + TRANSPOSE_RUN;
      for (size_t k = 0; k < size; k += 8)
        for (uint64_t i = run; i < end; i += 8) {
          uint64_t x[8];
          for (int r = 0; r < 8; r++)
            memcpy(&x[r], back ? in + (k + r) * n + i : in + (i + r) * size + k, 8);
          transpose8x8(x);
          for (int r = 0; r < 8; r++)
            memcpy(back ? out + (i + r) * size + k : out + (k + r) * n + i, &x[r], 8);
        }
    }
  }
#endif
  for (uint64_t i = done; i < n; i++)
    for (size_t k = 0; k < size; k++) {
      if (back) out[i * size + k] = in[k * n + i];
      else out[k * n + i] = in[i * size + k];
    }
}

/* The spool's codec: LZ4 at its fastest level, in linked 4 MiB blocks without LZ4's own
 * checksums (the row's checksums protect the records).  On the shuffled planes of the C2
 * study's records it packs as tightly as raw deflate at level 1 (72 against 70 to 1) and
 * compresses 2.8 times as fast (2.0 against 0.71 GB/s); the merge compresses again, for the
 * file. */
static LZ4F_preferences_t spool_prefs(size_t n) {
  LZ4F_preferences_t p;
  memset(&p, 0, sizeof p);
  p.frameInfo.blockSizeID = LZ4F_max4MB;
  p.frameInfo.blockMode = LZ4F_blockLinked;
  p.frameInfo.contentSize = n;
  return p;
}

int cs_store_compress(const unsigned char *src, size_t n, cs_store_buf *z, size_t at,
                      size_t *len) {
  LZ4F_preferences_t prefs = spool_prefs(n);
  size_t cap = LZ4F_compressFrameBound(n, &prefs);
  if (!cs_store_buf_grow(z, at + cap)) return CS_ENOMEM;
  size_t got = LZ4F_compressFrame((unsigned char *)z->p + at, cap, src, n, &prefs);
  if (LZ4F_isError(got)) return CS_ENOMEM;
  *len = got;
  return CS_OK;
}

bool cs_store_decompress(struct LZ4F_dctx_s **ctx, const unsigned char *src, size_t n,
                         unsigned char *dst, size_t cap) {
  if (!*ctx && LZ4F_isError(LZ4F_createDecompressionContext(ctx, LZ4F_VERSION))) return false;
  LZ4F_dctx *dctx = *ctx;
  LZ4F_resetDecompressionContext(dctx); /* after a frame that ended early */
  /* dst is one block of memory: the decoder may refer back into it instead of keeping a copy */
  LZ4F_decompressOptions_t opts = {.stableDst = 1};
  size_t in = 0, out = 0, hint = 1;
  /* hint 0: the frame ended; a call that takes and gives nothing would never end */
  while (hint && in < n) {
    size_t in_part = n - in, out_part = cap - out;
    hint = LZ4F_decompress(dctx, dst + out, &out_part, src + in, &in_part, &opts);
    if (LZ4F_isError(hint) || (!in_part && !out_part)) break;
    in += in_part;
    out += out_part;
  }
  return hint == 0 && in == n && out == cap;
}

void cs_store_decompress_end(struct LZ4F_dctx_s *ctx) {
  if (ctx) LZ4F_freeDecompressionContext(ctx);
}
