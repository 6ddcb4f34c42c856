/* A zlib stream (RFC 1950, deflate RFC 1951) of byte planes, as HDF5's shuffle and deflate
 * filters store a chunk: what /txlog's whole chunks are written as.
 *
 * Most planes of a shuffled chunk of records hold one byte value throughout or a few long runs
 * (about 170 and 25 of the 208 planes of a /txlog chunk of the C2 study: high bytes, unused
 * columns, counters), and a general compressor spends most of its time matching them.  Here
 * consecutive such planes are coded directly as runs: a literal where the value changes, then
 * matches at distance 1 (258 bytes at most each), in one dynamic-Huffman block whose codes give
 * the longest match one bit, so a constant plane of 8,192 bytes takes about ten bytes.  The other
 * planes go through zlib at the caller's level, each stretch of them as a raw deflate segment of
 * its own (no references into what precedes it) ended by a sync flush, which leaves the stream
 * on a byte boundary; a run block followed by such a segment ends with an empty stored block for
 * the same reason.  The result is one ordinary zlib stream that any inflater reads (HDF5, h5py,
 * MATLAB); only its bytes differ from what HDF5's own deflate would make.
 */
#include <stdlib.h>
#include <string.h>

#include "store_format.h"

#define ADLER_MOD 65521u
#define MAX_MATCH 258
#define NUM_LITLEN 286 /* literal/length symbols a block may use: 0..285 */
#define NUM_CL 19      /* code-length symbols */
/* Planes coded as runs: those whose runs average at least this many bytes.  A run codes in two
 * to three bytes, so these shrink at least tenfold, as they do under zlib, which takes longer. */
#define RUN_MIN_MEAN 32

typedef struct bitw {
  unsigned char *p, *end;
  uint64_t acc; /* pending bits, least significant first */
  int n;
  bool full;
} bitw;

static void put_bits(bitw *b, uint32_t v, int n) {
  b->acc |= (uint64_t)v << b->n;
  b->n += n;
  while (b->n >= 8) {
    if (b->p == b->end) {
      b->full = true;
      b->n = 0;
      b->acc = 0;
      return;
    }
    *b->p++ = (unsigned char)b->acc;
    b->acc >>= 8;
    b->n -= 8;
  }
}

static void align_byte(bitw *b) {
  if (b->n) put_bits(b, 0, 8 - b->n);
}

/* An empty stored block: three header bits, the pad to a byte, LEN 0 and NLEN 0xffff. */
static void put_empty_stored(bitw *b, bool final) {
  put_bits(b, final ? 1u : 0u, 3);
  align_byte(b);
  put_bits(b, 0xffff0000u, 32);
}

/* A Huffman code from code lengths (canonical, RFC 1951 3.2.2), each code stored bit-reversed
 * because deflate sends codes most significant bit first into a least-significant-first stream. */
static void canonical(const uint8_t *len, int n, uint16_t *code) {
  int count[16] = {0}, next[16];
  for (int s = 0; s < n; s++) count[len[s]]++;
  count[0] = 0;
  int c = 0;
  for (int l = 1; l < 16; l++) {
    c = (c + count[l - 1]) << 1;
    next[l] = c;
  }
  for (int s = 0; s < n; s++) {
    if (!len[s]) continue;
    uint32_t v = (uint32_t)next[len[s]]++, r = 0;
    for (int i = 0; i < len[s]; i++) r = r << 1 | (v >> i & 1);
    code[s] = (uint16_t)r;
  }
}

/* Code lengths for the m used symbols `syms` (m >= 1): a balanced tree filling what is left
 * under `depth` bits already spent, so the code is complete (a lone symbol at depth 0 gets one
 * bit, which deflate allows). */
static void balanced(const int *syms, int m, int depth, uint8_t *len) {
  if (m == 1) {
    len[syms[0]] = (uint8_t)(depth ? depth : 1);
    return;
  }
  int d = 0;
  while ((1 << d) < m) d++;
  int shorter = (1 << d) - m; /* leaves one level up fill the tree exactly */
  for (int i = 0; i < m; i++) len[syms[i]] = (uint8_t)(depth + (i < shorter ? d - 1 : d));
}

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,   10,  11,  13,
                                      15, 17, 19, 23, 27, 31, 35,  43,  51,  59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

/* A run of one byte value, as found in a plane (the runs of consecutive planes may continue
 * each other). */
typedef struct cs_store_run {
  uint32_t len;
  unsigned char value;
} cs_store_run;

/* The symbols of a run block, counted (pass 1) or written (pass 2). */
typedef struct runw {
  bitw *b;            /* NULL while counting */
  uint32_t freq[NUM_LITLEN];
  uint8_t len[NUM_LITLEN];
  uint16_t code[NUM_LITLEN];
} runw;

static void put_lit(runw *w, int sym) {
  if (w->b)
    put_bits(w->b, w->code[sym], w->len[sym]);
  else
    w->freq[sym]++;
}

/* A match of length 3..258 at distance 1 (whose code is the one-bit code 0). */
static void put_match(runw *w, unsigned length) {
  int i = length == MAX_MATCH ? 28 : 27;
  while (len_base[i] > length) i--;
  put_lit(w, 257 + i);
  if (w->b) {
    if (len_extra[i]) put_bits(w->b, length - len_base[i], len_extra[i]);
    put_bits(w->b, 0, 1);
  }
}

/* m more bytes equal to the byte before them. */
static void put_repeat(runw *w, int value, size_t m) {
  while (m >= MAX_MATCH + 3) {
    put_match(w, MAX_MATCH);
    m -= MAX_MATCH;
  }
  if (m > MAX_MATCH) { /* 259 or 260: a length of at least 3 must remain */
    put_match(w, (unsigned)m - 3);
    m = 3;
  }
  if (m >= 3)
    put_match(w, (unsigned)m);
  else
    while (m--) put_lit(w, value);
}

/* How many bytes from p[0] on, at most n, equal p[0]. */
static size_t run_length(const unsigned char *p, size_t n) {
  size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t pat = 0x0101010101010101ull * p[0], x;
  for (; i + 8 <= n; i += 8) {
    memcpy(&x, p + i, 8);
    if (x != pat) return i + (size_t)(__builtin_ctzll(x ^ pat) >> 3); /* first byte that differs */
  }
#endif
  while (i < n && p[i] == p[0]) i++;
  return i;
}

/* The runs r[0..m) as symbols, a run continuing the one before it (in the same or the previous
 * plane) taken with it; prev is the byte before them (-1: none). */
static void run_symbols(runw *w, const cs_store_run *r, size_t m, int prev) {
  for (size_t j = 0; j < m;) {
    int v = r[j].value;
    size_t len = 0;
    for (; j < m && r[j].value == v; j++) len += r[j].len;
    if (v == prev) {
      put_repeat(w, v, len);
    } else {
      put_lit(w, v);
      put_repeat(w, v, len - 1);
    }
    prev = v;
  }
  put_lit(w, 256);
}

/* The dynamic block of the runs r[0..m), coded as runs. */
static void put_run_block(bitw *b, const cs_store_run *r, size_t m_runs, int prev, bool final) {
  runw w;
  memset(&w, 0, sizeof w);
  run_symbols(&w, r, m_runs, prev);
  /* codes: the long match one bit, the rest balanced under the other bit */
  int syms[NUM_LITLEN], m = 0, nlit = 257;
  for (int s = 0; s < NUM_LITLEN; s++)
    if (w.freq[s]) {
      if (s != 257 + 28) syms[m++] = s;
      nlit = s + 1 > nlit ? s + 1 : nlit;
    }
  bool long_match = w.freq[257 + 28] != 0;
  if (long_match) w.len[257 + 28] = 1;
  balanced(syms, m, long_match ? 1 : 0, w.len);
  canonical(w.len, NUM_LITLEN, w.code);

  /* the code lengths of nlit literal/length symbols and of one distance code (length 1), with
   * runs of zeros as symbols 17 (3-10) and 18 (11-138) */
  uint8_t seq[NUM_LITLEN + 1], cl_sym[NUM_LITLEN + 1], cl_extra[NUM_LITLEN + 1];
  int nseq = nlit + 1, ncl = 0;
  memcpy(seq, w.len, (size_t)nlit);
  seq[nlit] = 1;
  uint32_t cl_freq[NUM_CL] = {0};
  for (int i = 0; i < nseq;) {
    int z = 0;
    while (i + z < nseq && !seq[i + z] && z < 138) z++;
    if (z >= 11) {
      cl_sym[ncl] = 18, cl_extra[ncl++] = (uint8_t)(z - 11), i += z;
    } else if (z >= 3) {
      cl_sym[ncl] = 17, cl_extra[ncl++] = (uint8_t)(z - 3), i += z;
    } else {
      cl_sym[ncl] = seq[i], cl_extra[ncl++] = 0, i++;
    }
    cl_freq[cl_sym[ncl - 1]]++;
  }
  int cl_used[NUM_CL], mcl = 0;
  for (int s = 0; s < NUM_CL; s++)
    if (cl_freq[s]) cl_used[mcl++] = s;
  if (mcl == 1) cl_used[mcl++] = cl_used[0] == 0 ? 1 : 0; /* a complete code needs two */
  uint8_t cl_len[NUM_CL] = {0};
  uint16_t cl_code[NUM_CL];
  balanced(cl_used, mcl, 0, cl_len);
  canonical(cl_len, NUM_CL, cl_code);
  static const uint8_t order[NUM_CL] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                        11, 4,  12, 3, 13, 2, 14, 1, 15};
  int nclen = NUM_CL;
  while (nclen > 4 && !cl_len[order[nclen - 1]]) nclen--;

  put_bits(b, (final ? 1u : 0u) | 2u << 1, 3); /* BFINAL, BTYPE 2: dynamic Huffman */
  put_bits(b, (uint32_t)(nlit - 257), 5);
  put_bits(b, 0, 5); /* one distance code */
  put_bits(b, (uint32_t)(nclen - 4), 4);
  for (int i = 0; i < nclen; i++) put_bits(b, cl_len[order[i]], 3);
  for (int i = 0; i < ncl; i++) {
    put_bits(b, cl_code[cl_sym[i]], cl_len[cl_sym[i]]);
    if (cl_sym[i] == 17) put_bits(b, cl_extra[i], 3);
    if (cl_sym[i] == 18) put_bits(b, cl_extra[i], 7);
  }
  w.b = b;
  run_symbols(&w, r, m_runs, prev);
}

/* The runs of the n bytes at p appended to pz->runs from *m on, if there are at most `most`
 * (true); otherwise *m is left as it was (false). */
static bool find_runs(cs_store_planez *pz, const unsigned char *p, size_t n, size_t most,
                      size_t *m) {
  size_t at = *m;
  for (size_t i = 0, len; i < n; i += len) {
    if (at - *m == most) return false;
    len = run_length(p + i, n - i);
    pz->runs[at++] = (cs_store_run){.len = (uint32_t)len, .value = p[i]};
  }
  *m = at;
  return true;
}

/* Adler-32 over n bytes of value v, continuing `adler`. */
static uint32_t adler_repeat(uint32_t adler, unsigned v, size_t n) {
  uint64_t a = adler & 0xffff, b = adler >> 16, nm = n % ADLER_MOD;
  uint64_t tri = ((uint64_t)n * (n + 1) / 2) % ADLER_MOD;
  b = (b + nm * a + v * tri) % ADLER_MOD;
  a = (a + nm * v) % ADLER_MOD;
  return (uint32_t)(b << 16 | a);
}

int cs_store_planez_init(cs_store_planez *pz, int level) {
  memset(pz, 0, sizeof *pz);
  /* raw deflate (negative window bits): the stream's header and trailer are written here */
  if (deflateInit2(&pz->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return CS_ENOMEM;
  pz->ready = true;
  pz->level = level;
  return CS_OK;
}

void cs_store_planez_end(cs_store_planez *pz) {
  if (pz->ready) deflateEnd(&pz->z);
  free(pz->as_runs);
  free(pz->first_run);
  free(pz->runs);
  free(pz->plane.p);
  memset(pz, 0, sizeof *pz);
}

size_t cs_store_planez_bound(size_t nplanes, size_t plane_len) {
  /* a zlib segment takes at most its length plus 5 bytes per 16 KiB stored block and about 20
   * for its flush; a run block at most 3.3 bytes a run (2 bytes a run of one or two bytes), so
   * less than its length, plus its header (under 520 bytes) and an empty stored block; each
   * segment or block holds a plane at least */
  return nplanes * (plane_len + plane_len / 1024 + 600) + 16;
}

size_t cs_store_planez_pack(cs_store_planez *pz, const unsigned char *planes, size_t nplanes,
                            size_t plane_len, unsigned char *out, size_t cap) {
  if (!pz->ready || cap < 6 || plane_len > UINT32_MAX) return 0;
  size_t most = plane_len < RUN_MIN_MEAN ? 1 : plane_len / RUN_MIN_MEAN;
  if (nplanes >= pz->planes_cap) { /* first_run has an entry past the last plane */
    unsigned char *c = realloc(pz->as_runs, nplanes + 1);
    if (c) pz->as_runs = c;
    uint32_t *f = realloc(pz->first_run, (nplanes + 1) * sizeof *f);
    if (f) pz->first_run = f;
    if (!c || !f) return 0;
    pz->planes_cap = nplanes + 1;
  }
  if (nplanes * most > pz->runs_cap) {
    cs_store_run *r = realloc(pz->runs, nplanes * most * sizeof *r);
    if (!r) return 0;
    pz->runs = r;
    pz->runs_cap = nplanes * most;
  }
  size_t m = 0;
  for (size_t k = 0; k < nplanes; k++) {
    pz->first_run[k] = (uint32_t)m;
    pz->as_runs[k] = find_runs(pz, planes + k * plane_len, plane_len, most, &m);
  }
  pz->first_run[nplanes] = (uint32_t)m;
  int lv = pz->level;
  out[0] = 0x78; /* deflate, 32 KiB window; FLEVEL as zlib sets it, FCHECK to make it % 31 */
  out[1] = lv < 2 ? 0x01 : lv < 6 ? 0x5e : lv == 6 ? 0x9c : 0xda;
  bitw b = {.p = out + 2, .end = out + cap - 4};
  uint32_t adler = 1;
  for (size_t p = 0, q; p < nplanes; p = q) {
    bool runs = pz->as_runs[p];
    for (q = p + 1; q < nplanes && pz->as_runs[q] == runs;) q++;
    bool last = q == nplanes;
    const unsigned char *at = planes + p * plane_len;
    size_t n = (q - p) * plane_len;
    if (runs) {
      const cs_store_run *r = pz->runs + pz->first_run[p];
      size_t nr = pz->first_run[q] - pz->first_run[p];
      put_run_block(&b, r, nr, p ? at[-1] : -1, last);
      if (last)
        align_byte(&b);
      else
        put_empty_stored(&b, false); /* zlib's segment starts on a byte */
      for (size_t i = 0; i < nr; i++) adler = adler_repeat(adler, r[i].value, r[i].len);
    } else {
      if (deflateReset(&pz->z) != Z_OK) return 0;
      pz->z.next_in = (unsigned char *)at;
      pz->z.avail_in = (uInt)n;
      pz->z.next_out = b.p;
      pz->z.avail_out = (uInt)(b.end - b.p);
      int rc = deflate(&pz->z, last ? Z_FINISH : Z_SYNC_FLUSH);
      if ((last ? rc != Z_STREAM_END : rc != Z_OK) || pz->z.avail_in || !pz->z.avail_out)
        return 0;
      b.p = pz->z.next_out;
      adler = (uint32_t)adler32(adler, at, (uInt)n);
    }
    if (b.full) return 0;
  }
  if (!nplanes) put_empty_stored(&b, true); /* else the last plane's block was the final one */
  if (b.full) return 0;
  for (int i = 3; i >= 0; i--) *b.p++ = (unsigned char)(adler >> (8 * i));
  return (size_t)(b.p - out);
}

int cs_store_planez_pack_rows(cs_store_planez *pz, const void *rows, uint64_t n, size_t size,
                              unsigned char *out, size_t cap, size_t *len) {
  if (!cs_store_buf_grow(&pz->plane, (size_t)n * size)) return CS_ENOMEM;
  cs_store_shuffle(rows, pz->plane.p, n, size, false);
  *len = cs_store_planez_pack(pz, pz->plane.p, size, (size_t)n, out, cap);
  return *len ? CS_OK : CS_EINTERNAL;
}
