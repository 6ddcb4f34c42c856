/* Loading a sweep on all ranks at once: every rank parses the file and expands one contiguous
 * block of the matrix (loading, validation, counting and cache keys are the costly part, ~60-100
 * us per job), then the blocks are gathered on rank 0, which ends up with exactly the sweep
 * cs_sweep_load would have built alone.  Expansion is deterministic, so which rank expanded a
 * job changes nothing.  The other ranks expand and send their block in rounds of at most
 * round_jobs() jobs, so they never hold more than one round (a few MB), whatever the sweep's
 * size. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "commsweep/config.h"
#include "sweep_int.h"

/* One job on the wire: the fixed part, then the packed job, json and error text (lengths in
 * the fixed part). */
typedef struct packed_job {
  uint64_t index, num_txns, group;
  double cost;
  int32_t load_code;
  uint32_t num_steps, packed_len, json_len, json_z_len, error_len;
  char key[CS_KEY_HEX];
} packed_job;


int cs_sweep_buf_put(cs_sweep_buf *b, const void *p, size_t n) {
  if (n == 0) return CS_OK; /* p may be NULL (a job without packed form or text) */
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + n) cap *= 2;
    unsigned char *d = realloc(b->data, cap);
    if (!d) return CS_ENOMEM;
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return CS_OK;
}

/* Packs jobs[0 .. count), the sweep's jobs first .. first + count. */
static int pack(const cs_sweep_job *jobs, size_t first, size_t count, cs_sweep_buf *b) {
  for (size_t k = 0; k < count; k++) {
    const cs_sweep_job *j = &jobs[k];
    packed_job p;
    memset(&p, 0, sizeof p);
    p.index = first + k;
    p.num_txns = j->num_txns;
    p.cost = j->cost;
    p.group = j->group;
    p.load_code = j->load_code;
    p.num_steps = j->num_steps;
    p.packed_len = j->packed ? j->packed_len : 0;
    p.json_len = j->json_len;
    p.json_z_len = j->json_z_len;
    p.error_len = j->error ? (uint32_t)strlen(j->error) : 0;
    memcpy(p.key, j->key, CS_KEY_HEX);
    if (cs_sweep_buf_put(b, &p, sizeof p) || cs_sweep_buf_put(b, j->packed, p.packed_len) ||
        cs_sweep_buf_put(b, j->json_z, p.json_z_len) ||
        cs_sweep_buf_put(b, j->error ? j->error : "", p.error_len))
      return CS_ENOMEM;
  }
  return CS_OK;
}

static char *take_text(const char *at, uint32_t len) {
  char *s = malloc((size_t)len + 1);
  if (s) {
    memcpy(s, at, len);
    s[len] = '\0';
  }
  return s;
}

static int unpack(cs_sweep *sw, const char *data, size_t len) {
  for (size_t at = 0; at < len;) {
    packed_job p;
    memcpy(&p, data + at, sizeof p);
    at += sizeof p;
    if (p.index >= sw->num_jobs) return CS_EINTERNAL;
    cs_sweep_job *j = &sw->jobs[p.index];
    j->num_txns = p.num_txns;
    j->load_code = p.load_code;
    j->num_steps = p.num_steps;
    j->cost = p.cost;
    j->group = p.group;
    memcpy(j->key, p.key, CS_KEY_HEX);
    if (p.packed_len) {
      if (!(j->packed = malloc(p.packed_len))) return CS_ENOMEM;
      memcpy(j->packed, data + at, p.packed_len);
      j->packed_len = p.packed_len;
      at += p.packed_len;
    }
    j->json_len = p.json_len;
    j->json_z_len = p.json_z_len;
    if (!(j->json_z = malloc(p.json_z_len ? p.json_z_len : 1))) return CS_ENOMEM;
    memcpy(j->json_z, data + at, p.json_z_len);
    at += p.json_z_len;
    j->error = p.error_len ? take_text(data + at, p.error_len) : NULL;
    at += p.error_len;
    if (p.error_len && !j->error) return CS_ENOMEM;
  }
  return CS_OK;
}

/* Gathers the packed blocks of ranks 1.. into rank 0's sweep.  CS_EBUSY (on every rank) when
 * they are too big for one MPI message: rank 0 then expands them itself. */
static int gather(MPI_Comm comm, int rank, int size, cs_sweep *sw, const cs_sweep_buf *mine) {
  int len = mine->len > INT_MAX ? -1 : (int)mine->len, ok = 1;
  int *lens = rank == 0 ? calloc((size_t)size, sizeof *lens) : NULL;
  int *displ = rank == 0 ? calloc((size_t)size, sizeof *displ) : NULL;
  MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
  char *all = NULL;
  long long total = 0;
  if (rank == 0 && (!lens || !displ)) {
    ok = 0;
  } else if (rank == 0) {
    for (int r = 0; r < size; r++) {
      displ[r] = total <= INT_MAX ? (int)total : 0;
      total += lens[r] < 0 ? (long long)INT_MAX + 1 : lens[r];
    }
    ok = total > INT_MAX ? -1 : (all = malloc(total ? (size_t)total : 1)) != NULL;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  int rc = ok == 1 ? CS_OK : ok < 0 ? CS_EBUSY : CS_ENOMEM;
  if (ok == 1) MPI_Gatherv(mine->data, len, MPI_BYTE, all, lens, displ, MPI_BYTE, 0, comm);
  if (ok == 1 && rank == 0) rc = unpack(sw, all + lens[0], (size_t)(total - lens[0]));
  free(all);
  free(lens);
  free(displ);
  return rc;
}

/* Jobs per rank and round: a round's gather stays far below 2 GB (~600 MB at ~9 KB a job). */
static size_t round_jobs(int size) {
  size_t r = 65536 / (size_t)size;
  return r < 16 ? 16 : r > 2048 ? 2048 : r;
}

static size_t block_lo(size_t n, int rank, int size) { return n * (size_t)rank / (size_t)size; }

/* One round: every rank expands jobs [a, b) of its block, at the same time; rank 0 gathers
 * them. */
static int round_trip(const cs_sweep_def *def, MPI_Comm comm, int rank, int size, size_t round,
                      cs_sweep *sw, cs_err *err) {
  size_t n = def->num_jobs, per = round_jobs(size);
  size_t lo = block_lo(n, rank, size), hi = block_lo(n, rank + 1, size);
  size_t a = lo + round * per < hi ? lo + round * per : hi;
  size_t b = a + per < hi ? a + per : hi;
  cs_sweep_buf mine = {0};
  int rc = CS_OK;
  if (rank != 0 && b > a) {
    cs_sweep_job *jobs = calloc(b - a, sizeof *jobs);
    if (!jobs) rc = cs_err_set(err, CS_ENOMEM, "expanding %zu jobs: out of memory", b - a);
    if (!rc) rc = cs_sweep_expand_into(def, a, b, jobs, err);
    if (!rc && pack(jobs, a, b - a, &mine))
      rc = cs_err_set(err, CS_ENOMEM, "packing %zu jobs: out of memory", b - a);
    for (size_t k = 0; jobs && k < b - a; k++) {
      free(jobs[k].packed);
      free(jobs[k].json_z);
      free(jobs[k].error);
    }
    free(jobs);
  } else if (b > a) { /* rank 0: its own jobs straight into the sweep */
    rc = cs_sweep_expand_range(def, a, b, sw, err);
  }
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm);
  if (worst) {
    free(mine.data);
    return rc ? rc : cs_err_set(err, worst, "another rank could not expand its jobs");
  }
  int grc = gather(comm, rank, size, sw, &mine);
  free(mine.data);
  if (grc == CS_EBUSY && rank == 0) /* too big for one message: rank 0 expands the round */
    for (int r = 1; r < size && !grc; r++) {
      size_t rlo = block_lo(n, r, size), rhi = block_lo(n, r + 1, size);
      size_t ra = rlo + round * per < rhi ? rlo + round * per : rhi;
      size_t rb = ra + per < rhi ? ra + per : rhi;
      grc = ra < rb ? cs_sweep_expand_range(def, ra, rb, sw, err) : CS_OK;
    }
  else if (grc == CS_EBUSY)
    grc = CS_OK;
  MPI_Bcast(&grc, 1, MPI_INT, 0, comm);
  if (grc) return cs_err_set(err, grc, "gathering jobs on rank 0: %s", cs_strerror(grc));
  return CS_OK;
}

/* The load from a parsed document (owned; NULL when rc says why there is none), collectively. */
static int load_doc_mpi(cJSON *doc, int rc, const char *path, MPI_Comm comm, cs_sweep *out,
                        cs_err *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  memset(out, 0, sizeof *out);
  cs_sweep_def def;
  memset(&def, 0, sizeof def);
  /* Every step ends in a collective check, so a rank that fails (a file it cannot read, no
   * memory) never leaves the others waiting. */
  if (!rc) rc = cs_sweep_def_parse(doc, path, &def, err);
  size_t n = rc ? 0 : def.num_jobs;
  /* rank 0 holds the whole sweep and expands its own block in place, round by round with the
   * others */
  if (!rc && rank == 0) rc = cs_sweep_alloc(&def, out, err);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm);
  if (worst && !rc) rc = cs_err_set(err, worst, "sweep file '%s': another rank could not load it", path);
  size_t per = round_jobs(size), most = (n + (size_t)size - 1) / (size_t)size;
  for (size_t round = 0; !rc && round * per < most; round++)
    if ((rc = round_trip(&def, comm, rank, size, round, out, err)))
      cs_err_prefix(err, "sweep file '%s'", path);
  /* Only rank 0 holds every job, so only it can tell a fault of the base. */
  if (!worst) {
    int failed = rc != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
    int brc = !any && rank == 0 ? cs_sweep_check_base(&def, out, err) : CS_OK;
    MPI_Bcast(&brc, 1, MPI_INT, 0, comm);
    if (!any && brc)
      rc = rank == 0 ? cs_err_prefix(err, "sweep file '%s'", path)
                     : cs_err_set(err, brc, "sweep file '%s': its base is in error (rank 0 says why)",
                                  path);
  }
  if (def.doc) cs_sweep_def_free(&def);
  if (rc || rank != 0) cs_sweep_free(out);
  return rc;
}

int cs_sweep_load_mpi(const char *path, MPI_Comm comm, cs_sweep *out, cs_err *err) {
  cJSON *doc = NULL;
  /* a rank that cannot read the file still joins the collective checks of the load */
  int rc = cs_config_parse_file(path, &doc, err) ? cs_err_prefix(err, "sweep file") : CS_OK;
  return load_doc_mpi(doc, rc, path, comm, out, err);
}

int cs_sweep_load_doc_mpi(cJSON *doc, const char *source, MPI_Comm comm, cs_sweep *out,
                          cs_err *err) {
  return load_doc_mpi(doc, CS_OK, source, comm, out, err);
}
