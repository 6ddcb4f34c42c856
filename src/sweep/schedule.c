/* Dynamic scheduling over MPI: a work-request protocol in which rank 0 also works.
 *
 * Items arrive sorted costliest first.  A worker keeps exactly one request outstanding: it
 * posts the receive for its next batch and sends a request (carrying its counters) before it
 * runs the current batch, so a grant is waiting when it finishes.  Rank 0 answers requests
 * from the front of the list (guided batches: about remaining cost / (4 x ranks), at most
 * max_batch items, at least one) and between answers runs single items from the back, the
 * cheapest, so it is never away long.  An empty grant means stop.  Which rank runs an item
 * never changes what is written: row and slice are fixed in the item.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commsweep/sweep.h"

enum { TAG_REQ = 7101, TAG_GRANT = 7102 };
#define GRANT_BUDGET_BYTES (16u << 20) /* all of rank 0's grant buffers together */
#define MAX_BATCH 64

typedef struct counters {
  uint64_t ran, failed, io_errors;
} counters;

typedef struct runner {
  cs_store *st;
  bool results_only;
  int rank;
  cs_sweep_sched_stats *stats;
  cs_err *io_err; /* first write error */
} runner;

static void run_item(runner *r, const cs_sweep_item *it) {
  double t0 = MPI_Wtime();
  bool failed = false;
  cs_err e;
  cs_err_clear(&e);
  if (cs_sweep_execute(r->st, it, r->results_only, &failed, &e)) {
    r->stats->io_errors++;
    if (!r->io_err->code) *r->io_err = e;
    fprintf(stderr, "commsweep: rank %d: %s\n", r->rank, e.msg);
  } else {
    r->stats->ran++;
    r->stats->failed += failed;
  }
  r->stats->busy_s += MPI_Wtime() - t0;
}

static counters mine(const runner *r) {
  return (counters){r->stats->ran, r->stats->failed, r->stats->io_errors};
}

static void idle_pause(void) {
  struct timespec ts = {0, 200000}; /* 0.2 ms */
  nanosleep(&ts, NULL);
}

/* Rank 0's state: one grant buffer and send request per worker, allocated before the protocol
 * starts so that nothing can fail half way. */
typedef struct dispatcher {
  counters *seen;        /* latest counters reported by each worker */
  cs_sweep_item **buf;   /* grant buffer of each worker, max_batch items */
  MPI_Request *sreq;     /* grant in flight to each worker */
} dispatcher;

static void dispatcher_free(dispatcher *d, int size) {
  for (int w = 0; d->buf && w < size; w++) free(d->buf[w]);
  free(d->buf);
  free(d->sreq);
  free(d->seen);
}

static int dispatcher_init(dispatcher *d, int size, int max_batch) {
  d->seen = calloc((size_t)size, sizeof *d->seen);
  d->buf = calloc((size_t)size, sizeof *d->buf);
  d->sreq = malloc((size_t)size * sizeof *d->sreq);
  if (!d->seen || !d->buf || !d->sreq) return CS_ENOMEM;
  for (int w = 0; w < size; w++) {
    d->sreq[w] = MPI_REQUEST_NULL;
    if (w > 0 && !(d->buf[w] = malloc((size_t)max_batch * sizeof(cs_sweep_item)))) return CS_ENOMEM;
  }
  return CS_OK;
}

static void dispatch(MPI_Comm comm, int size, dispatcher *d, runner *r,
                     const cs_sweep_item *items, size_t n, int max_batch, double progress_s,
                     cs_sweep_progress_fn progress, void *ctx) {
  size_t front = 0, back = n;
  double remaining = 0;
  for (size_t i = 0; i < n; i++) remaining += items[i].cost;
  const double total = remaining;
  int active = size - 1;
  counters *seen = d->seen;
  cs_sweep_item **buf = d->buf;
  MPI_Request *sreq = d->sreq;
  double last_print = MPI_Wtime();
  while (active > 0 || front < back) {
    while (active > 0) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, comm, &flag, &status);
      if (!flag) {
        if (front < back) break; /* nobody waiting: work */
        idle_pause();
        if (progress && progress_s > 0 && MPI_Wtime() - last_print >= progress_s) break;
        continue;
      }
      int w = status.MPI_SOURCE;
      MPI_Recv(&seen[w], 3, MPI_UINT64_T, w, TAG_REQ, comm, MPI_STATUS_IGNORE);
      MPI_Wait(&sreq[w], MPI_STATUS_IGNORE);
      int k = 0;
      double target = remaining / (4.0 * size), cost = 0;
      while (front < back && k < max_batch && (k == 0 || cost + items[front].cost <= target)) {
        cost += items[front].cost;
        buf[w][k++] = items[front++];
      }
      remaining -= cost;
      MPI_Isend(buf[w], (int)((size_t)k * sizeof **buf), MPI_BYTE, w, TAG_GRANT, comm, &sreq[w]);
      if (k == 0) active--;
    }
    if (front < back) {
      back--;
      remaining -= items[back].cost;
      run_item(r, &items[back]);
    }
    if (progress && progress_s > 0 && MPI_Wtime() - last_print >= progress_s) {
      counters sum = mine(r);
      for (int w = 1; w < size; w++) {
        sum.ran += seen[w].ran;
        sum.failed += seen[w].failed;
      }
      progress(ctx, sum.ran, sum.failed, total > 0 ? 1.0 - remaining / total : 1.0, false);
      last_print = MPI_Wtime();
    }
  }
  MPI_Waitall(size, sreq, MPI_STATUSES_IGNORE);
}

static void work(MPI_Comm comm, runner *r, cs_sweep_item *buf[2], int max_batch) {
  size_t cap = (size_t)max_batch * sizeof(cs_sweep_item);
  MPI_Request rr;
  MPI_Status status;
  int cur = 0, bytes = 0;
  MPI_Irecv(buf[0], (int)cap, MPI_BYTE, 0, TAG_GRANT, comm, &rr);
  counters c = mine(r);
  MPI_Send(&c, 3, MPI_UINT64_T, 0, TAG_REQ, comm);
  MPI_Wait(&rr, &status);
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  while (bytes > 0) {
    int nxt = 1 - cur;
    MPI_Irecv(buf[nxt], (int)cap, MPI_BYTE, 0, TAG_GRANT, comm, &rr);
    c = mine(r);
    MPI_Send(&c, 3, MPI_UINT64_T, 0, TAG_REQ, comm);
    size_t k = (size_t)bytes / sizeof(cs_sweep_item);
    for (size_t i = 0; i < k; i++) run_item(r, &buf[cur][i]);
    MPI_Wait(&rr, &status);
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    cur = nxt;
  }
}

int cs_sweep_schedule(MPI_Comm comm, cs_store *st, const cs_sweep_item *items, size_t n,
                      bool results_only, double progress_s, cs_sweep_progress_fn progress,
                      void *progress_ctx, cs_sweep_sched_stats *stats, cs_err *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  memset(stats, 0, sizeof *stats);
  int max_batch = (int)(GRANT_BUDGET_BYTES / sizeof(cs_sweep_item) / (size > 1 ? size - 1 : 1));
  if (max_batch > MAX_BATCH) max_batch = MAX_BATCH;
  if (max_batch < 1) max_batch = 1;
  cs_err io_err;
  cs_err_clear(&io_err);
  runner r = {st, results_only, rank, stats, &io_err};
  dispatcher d = {0};
  cs_sweep_item *wbuf[2] = {NULL, NULL};
  int ok = rank == 0 ? dispatcher_init(&d, size, max_batch) == CS_OK
                     : (wbuf[0] = malloc((size_t)max_batch * sizeof(cs_sweep_item))) &&
                           (wbuf[1] = malloc((size_t)max_batch * sizeof(cs_sweep_item)));
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  if (all_ok && rank == 0)
    dispatch(comm, size, &d, &r, items, n, max_batch, progress_s, progress, progress_ctx);
  else if (all_ok)
    work(comm, &r, wbuf, max_batch);
  if (rank == 0) dispatcher_free(&d, size);
  free(wbuf[0]);
  free(wbuf[1]);
  if (!all_ok) return cs_err_set(err, CS_ENOMEM, "scheduler buffers: out of memory");
  if (io_err.code) *err = io_err;
  return io_err.code;
}
