/* A job as a short byte string: cs_job is a plain value of ~4.6 KB, mostly zero (unused
 * participant slots, engine parameter space, short strings), so only the runs of non-zero bytes
 * are kept.  Unpacking into zeroed memory gives back the very same bytes, padding included, so a
 * packed job runs and hashes exactly as the original.
 *
 * Format: segments of [u16 zeros][u16 length][length bytes], covering sizeof(cs_job) in order.
 * A segment starts only after at least MIN_ZERO_RUN zero bytes, so each costs 4 bytes and saves
 * at least 8 (the first and a trailing one may save less): the packed form never exceeds
 * CS_JOB_PACKED_MAX. */
#include <stdint.h>
#include <string.h>

#include "commsweep/job.h"

#define MIN_ZERO_RUN 8

_Static_assert(sizeof(cs_job) < 65536, "segment lengths are 16-bit");

static void put16(unsigned char *p, size_t v) {
  p[0] = (unsigned char)(v & 0xff);
  p[1] = (unsigned char)(v >> 8);
}

static size_t get16(const unsigned char *p) { return (size_t)p[0] | ((size_t)p[1] << 8); }

/* Zero bytes from at on (at most n - at), eight at a time while whole words are zero. */
static size_t zero_run(const unsigned char *b, size_t at, size_t n) {
  size_t z = 0;
  for (uint64_t w; at + z + 8 <= n && (memcpy(&w, b + at + z, 8), w == 0);) z += 8;
  while (at + z < n && b[at + z] == 0) z++;
  return z;
}

size_t cs_job_pack(const cs_job *job, unsigned char *buf) {
  const unsigned char *b = (const unsigned char *)job;
  const size_t n = sizeof *job;
  size_t at = 0, out = 0;
  while (at < n) {
    size_t zeros = zero_run(b, at, n);
    size_t start = at + zeros, end = start;
    /* the literal ends at the next run of MIN_ZERO_RUN zeros (or at the end) */
    while (end < n) {
      size_t z = 0;
      while (end + z < n && b[end + z] == 0 && z < MIN_ZERO_RUN) z++;
      if (z == MIN_ZERO_RUN || end + z == n) break;
      end += z + 1;
    }
    put16(buf + out, zeros);
    put16(buf + out + 2, end - start);
    memcpy(buf + out + 4, b + start, end - start);
    out += 4 + (end - start);
    at = end;
  }
  return out;
}

int cs_job_unpack(const unsigned char *buf, size_t len, cs_job *job, cs_err *err) {
  unsigned char *b = (unsigned char *)job;
  const size_t n = sizeof *job;
  memset(job, 0, n);
  size_t at = 0, in = 0;
  while (in < len) {
    if (len - in < 4) break;
    size_t zeros = get16(buf + in), lit = get16(buf + in + 2);
    in += 4;
    if (zeros > n - at || lit > n - at - zeros || lit > len - in) break;
    at += zeros;
    memcpy(b + at, buf + in, lit);
    at += lit;
    in += lit;
  }
  if (in != len || at != n)
    return cs_err_set(err, CS_EINVAL, "packed job of %zu bytes is damaged (covers %zu of %zu)",
                      len, at, n);
  return CS_OK;
}
