/* Dynamic scheduling over MPI: a work-request protocol in which rank 0 also works.
 *
 * Rank 0 holds the item list (costliest share group first) and the sweep's jobs, packed; a grant
 * is a range [begin, end) of the list: a 16-byte header, always sent eagerly, followed by one
 * message with the items of the range and their packed jobs (~250 bytes each; non-blocking on rank
 * 0), so a worker holds only the items granted to it, two ranges at a time (at most 2 x
 * CS_SWEEP_MAX_GRANT; its two receive buffers are sized for the longest jobs, of which typical
 * grants touch a tenth), never the whole list.  Result rows are written in batches
 * (cs_store_batch_rows): a worker writes the rows of a range together when it has run it, rank 0
 * every ROW_BATCH of its own jobs; a kill loses at most those held rows, which stay pending.  A
 * worker keeps exactly one request outstanding: it posts the receives for its next grant and sends
 * a request (carrying its counters) before it runs the current range, and lets that grant move in
 * between its jobs, so the next grant is waiting when it finishes.  Rank 0 first answers every
 * worker's opening request, then answers requests from the front of the list (guided ranges: about
 * remaining cost / (4 x ranks), at most CS_SWEEP_MAX_GRANT items, at least two while plenty
 * remain, never ending inside a share group, whose items the list holds together) and between
 * answers runs single items from the back, the cheapest, so it is never away long (on up to
 * RANK0_WORKS_UP_TO ranks; beyond, it only dispatches).  An empty range means stop.  A rank with
 * nothing to do sleeps between tests of its request (cs_sweep_wait_sleeping, idle_pause).  Which
 * rank runs an item never changes what is written: row and slice are fixed in the item.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "commsweep/job.h"
#include "commsweep/sweep.h"
#include "sweep_int.h"

enum { TAG_REQ = 7101, TAG_GRANT = 7102, TAG_ITEMS = 7103, TAG_STOP = 7104 };
/* The begin of an empty grant that rank 0 sends after a stop notice (TAG_STOP): the worker then
 * waits for the notice instead of cancelling its receive. */
#define GRANT_STOPPED UINT64_MAX
/* Rows are not held back while a job of more than this estimated cost runs (about 0.1 s): a rank
 * killed in a long job (mpirun's SIGKILL after a stop) then loses no finished row. */
#define HOLD_COST 1e5
/* After a stop, rank 0 says how far the sweep got once the workers have had this long to end
 * their jobs in hand (mpirun kills the ranks about 1 s after it sends them SIGTERM). */
#define STOP_REPORT_S 0.5
/* Result rows a rank holds back before writing them together (one H5Dwrite). */
#define ROW_BATCH 64
/* Beyond this many ranks rank 0 only dispatches: a request then never waits behind one of its
 * own jobs, and one worker's share is small anyway. */
#define RANK0_WORKS_UP_TO 16
/* Between its own jobs rank 0 looks for requests at most this often: with
 * mpi_yield_when_idle (oversubscribed hosts) an empty MPI_Iprobe yields the CPU, which on a busy
 * host costs up to a scheduler time slice (measured 0.2-0.8 ms per probe). */
#define PROBE_INTERVAL_S 0.005

/* What a worker reports with each request: its jobs so far and their estimated cost, rounded to
 * whole units (about a microsecond each: engine.h), and the signal that stopped it (0: none). */
typedef struct counters {
  uint64_t ran, failed, io_errors, cost_done, stop;
} counters;
#define COUNTERS_LEN 5

typedef struct runner {
  cs_store *st;
  bool results_only;
  int rank;
  cs_sweep_sched_stats *stats;
  cs_err *io_err; /* first write error */
  uint64_t stop_after; /* fault: signal this rank after this many rows (0: never) */
  int stop_signal;
  const cs_sweep_faults *faults; /* NULL: none */
  cs_job_shared *shared; /* what the engines share across this rank's jobs (may be NULL) */
  cs_sweep_logbuf logbuf; /* each job's log rows, kept from job to job */
  double cost_done; /* estimated cost of the items this rank has finished */
  const volatile sig_atomic_t *flag; /* this process's stop flag (a signal handler sets it) */
  int stopped_by;   /* the signal that stopped this rank, or rank 0's notice of one; 0: none */
  MPI_Request notice; /* a worker's receive of rank 0's stop notice (TAG_STOP) */
  int notice_sig;
  double clear_at;  /* MPI_Wtime when this rank last found no stop: its signal came after */
} runner;

/* The stop fault (cs_sweep_faults): this rank signals itself after its stop_after_rows-th row. */
static void arm_stop(runner *r, const cs_sweep_faults *f) {
  if (!f || !f->stop_after_rows || (f->stop_one_rank && f->stop_rank != r->rank)) return;
  r->stop_after = f->stop_after_rows;
  r->stop_signal = f->stop_signal ? f->stop_signal : SIGKILL;
}

/* Writes the rows held back; rows that could not be written count as I/O errors. */
static void flush_rows(runner *r) {
  uint64_t lost = 0;
  cs_err e;
  cs_err_clear(&e);
  if (cs_store_flush_rows(r->st, &lost, &e)) {
    r->stats->io_errors += lost;
    r->stats->ran -= lost < r->stats->ran ? lost : r->stats->ran;
    if (!r->io_err->code) *r->io_err = e;
    fprintf(stderr, "commsweep: rank %d: %s\n", r->rank, e.msg);
  }
}

/* The signal this rank stops for: its own, or (a worker) the one rank 0 announced. */
static int stopping(runner *r) {
  if (!r->stopped_by && r->flag && *r->flag) r->stopped_by = *r->flag;
  if (!r->stopped_by && r->notice != MPI_REQUEST_NULL) {
    int got = 0;
    MPI_Test(&r->notice, &got, MPI_STATUS_IGNORE);
    if (got) r->stopped_by = r->notice_sig;
  }
  if (!r->stopped_by) r->clear_at = MPI_Wtime();
  return r->stopped_by;
}

/* The STOP fault holds the rank until it is continued with a stop signal pending: mpirun
 * continues its ranks at once when it is signalled itself, and sends them SIGTERM a second
 * later.  A continued rank waits half a second for the signal's handler (another thread may run
 * it) before it stops again. */
static void hold_stopped(const runner *r) {
  if (!r->flag) return;
  for (;;) {
    for (int i = 0; i < 50 && !*r->flag; i++) nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (*r->flag) return;
    raise(SIGSTOP);
  }
}

static void run_item(runner *r, const cs_sweep_item *it, const cs_job *job) {
  if (it->cost > HOLD_COST) flush_rows(r); /* none held while a long job runs */
  double t0 = MPI_Wtime();
  cs_sweep_job_outcome done = {false, false};
  cs_err e;
  cs_err_clear(&e);
  if (cs_sweep_execute(r->st, r->shared, &r->logbuf, it, job, r->results_only, r->faults, &done, &e)) {
    r->stats->io_errors++;
    if (!r->io_err->code) *r->io_err = e;
    fprintf(stderr, "commsweep: rank %d: %s\n", r->rank, e.msg);
  } else {
    r->stats->ran++;
    r->stats->failed += done.failed;
    r->stats->ran_again_alone += done.ran_again_alone;
  }
  r->stats->busy_s += MPI_Wtime() - t0;
  r->cost_done += it->cost;
  if (r->stop_after && r->stats->ran == r->stop_after) {
    flush_rows(r); /* "after writing its N-th row" */
    raise(r->stop_signal);
    if (r->stop_signal == SIGSTOP) hold_stopped(r);
  }
}

static counters mine(const runner *r) {
  return (counters){r->stats->ran, r->stats->failed, r->stats->io_errors,
                    (uint64_t)(r->cost_done + 0.5), (uint64_t)r->stopped_by};
}

static void idle_pause(void) {
  struct timespec ts = {0, 200000}; /* 0.2 ms */
  nanosleep(&ts, NULL);
}

/* Waits for a request sleeping between tests: a blocking MPI wait polls (and with
 * mpi_yield_when_idle yields) at full speed, burning a core that another rank or another user
 * could run on while this rank has nothing to do. */
void cs_sweep_wait_sleeping(MPI_Request *req, MPI_Status *status) {
  for (int done = 0;;) {
    MPI_Test(req, &done, status);
    if (done) return;
    idle_pause();
  }
}

/* The items of a grant on the wire: per item the cs_sweep_item, the packed job's length (u32)
 * and the packed job (cs_job_pack).  wire_next reads the next item of a received grant and its
 * job; false at the end. */
static bool wire_next(const cs_sweep_buf *w, size_t *at, cs_sweep_item *it, cs_job *job,
                      cs_err *err) {
  uint32_t len;
  if (*at + sizeof *it + sizeof len > w->len) return false;
  memcpy(it, w->data + *at, sizeof *it);
  memcpy(&len, w->data + *at + sizeof *it, sizeof len);
  *at += sizeof *it + sizeof len;
  int rc = len <= w->len - *at ? cs_job_unpack(w->data + *at, len, job, err)
                               : cs_err_set(err, CS_EINVAL, "a grant is cut short");
  *at += len;
  return rc == CS_OK;
}

/* Rank 0's bookkeeping: one grant buffer and send request per worker. */
typedef struct dispatcher {
  const cs_sweep *sw; /* the jobs of the items, packed */
  counters *seen;     /* latest counters reported by each worker */
  double (*range_cost)[2]; /* per worker: the range it is running, the one granted last */
  double *range_start; /* per worker: when it started the range it runs (its last request) */
  double *first_start; /* per worker: when it started its first range */
  uint64_t (*grant)[2];
  cs_sweep_buf *out;  /* the items of the grant in flight to each worker */
  MPI_Request *sreq;  /* grant header and items in flight to each worker: 2 per worker */
  bool out_of_memory;
  /* a stop: the signal, the notice to each worker still running (TAG_STOP), since when */
  int stopped;
  bool *ended;        /* per worker: sent its last (empty) grant */
  MPI_Request *nreq;  /* per worker: the stop notice in flight */
  double t_stop;
  bool reported;      /* how far the sweep got, said once the workers had STOP_REPORT_S */
} dispatcher;

const char *cs_sweep_signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* Rank 0 hands out nothing more and tells every worker still running (the workers stop after
 * the job in hand; those it hears from later get an empty grant).  own: the stop is rank 0's
 * own signal, which may have come while it ran a job of its own: the report's delay counts from
 * the last time it found none (mpirun's SIGKILL counts from the signal). */
static void begin_stop(MPI_Comm comm, int size, dispatcher *d, runner *r, int sig, bool own) {
  if (d->stopped) return;
  d->stopped = r->stopped_by = sig;
  d->t_stop = own && r->clear_at > 0 ? r->clear_at : MPI_Wtime();
  fprintf(stderr, "commsweep sweep: %s: no more jobs are handed out; each rank finishes the job "
          "in hand, then the sweep ends keeping every finished row\n", cs_sweep_signal_name(sig));
  fflush(stderr);
  for (int w = 1; w < size; w++)
    if (!d->ended[w]) MPI_Isend(&d->stopped, 1, MPI_INT, w, TAG_STOP, comm, &d->nreq[w]);
}

size_t cs_sweep_grant_len(const cs_sweep_item *items, size_t n, double target, size_t min_k,
                          double *cost) {
  size_t k = 0;
  double sum = 0;
  while (k < n && k < CS_SWEEP_MAX_GRANT && (k < min_k || sum + items[k].cost <= target))
    sum += items[k++].cost;
  /* and the rest of the last item's share group: its items share work on one rank */
  size_t end = k ? cs_sweep_group_end(items, n, k - 1) : 0;
  while (k < end && k < CS_SWEEP_MAX_GRANT) sum += items[k++].cost;
  *cost = sum;
  return k;
}

/* Once, STOP_REPORT_S after a stop (after rank 0's own signal: at once when its job in hand
 * outlasted that) while ranks still end their jobs in hand: how far the sweep got (the
 * workers' rows as they last reported them), before mpirun's SIGKILL if it comes. */
static void report_stop(dispatcher *d, runner *r, int size, cs_sweep_progress_fn progress,
                        void *ctx) {
  if (!d->stopped || d->reported || !progress || MPI_Wtime() - d->t_stop < STOP_REPORT_S) return;
  counters sum = mine(r);
  for (int w = 1; w < size; w++) sum.ran += d->seen[w].ran, sum.failed += d->seen[w].failed;
  progress(ctx, sum.ran, sum.failed, -1.0, false);
  d->reported = true;
}

/* Answers worker w's request (already probed): its counters in, the next range out (none
 * once stopped, by this worker's signal or another's). */
static void answer(MPI_Comm comm, int size, dispatcher *d, runner *r, int w,
                   const cs_sweep_item *items, size_t *front, size_t *back_, double *remaining,
                   int *active) {
  MPI_Recv(&d->seen[w], COUNTERS_LEN, MPI_UINT64_T, w, TAG_REQ, comm, MPI_STATUS_IGNORE);
  MPI_Waitall(2, &d->sreq[2 * w], MPI_STATUSES_IGNORE);
  if (d->seen[w].stop) begin_stop(comm, size, d, r, (int)d->seen[w].stop, false);
  if (d->stopped) *back_ = *front;
  size_t back = *back_;
  /* At least two items while there are plenty: the worker's next request then arrives while it
   * still has work, so rank 0 finishing one of its own jobs first costs it nothing. */
  size_t min_k = back - *front >= 4 * (size_t)size ? 2 : 1;
  double cost;
  size_t k = cs_sweep_grant_len(items + *front, back - *front, *remaining / (4.0 * size), min_k,
                                &cost);
  cs_sweep_buf *out = &d->out[w];
  out->len = 0;
  for (size_t i = *front; i < *front + k && !d->out_of_memory; i++) {
    const cs_sweep_job *j = &d->sw->jobs[items[i].job];
    uint32_t len = j->packed_len;
    if (cs_sweep_buf_put(out, &items[i], sizeof items[i]) ||
        cs_sweep_buf_put(out, &len, sizeof len) || cs_sweep_buf_put(out, j->packed, len))
      d->out_of_memory = true;
  }
  if (d->out_of_memory) k = cost = 0; /* stop the worker; rank 0 runs what is left */
  /* a worker asks as it starts the range granted before: its counters cover the ones before that */
  d->range_cost[w][0] = d->range_cost[w][1];
  d->range_cost[w][1] = cost;
  d->range_start[w] = MPI_Wtime();
  if (d->first_start[w] == 0) d->first_start[w] = d->range_start[w];
  d->grant[w][0] = d->stopped && !k ? GRANT_STOPPED : *front;
  d->grant[w][1] = d->stopped && !k ? GRANT_STOPPED : *front + k;
  *front += k;
  *remaining -= cost;
  MPI_Isend(d->grant[w], 2, MPI_UINT64_T, w, TAG_GRANT, comm, &d->sreq[2 * w]);
  if (k) /* at most MAX_GRANT_BYTES: the count fits an int */
    MPI_Isend(out->data, (int)out->len, MPI_BYTE, w, TAG_ITEMS, comm, &d->sreq[2 * w + 1]);
  else
    (*active)--, d->ended[w] = true;
}

/* The estimated cost done so far, for the ETA: the jobs finished (rank 0's, and the workers' as
 * they last reported them, up to the range before the one each runs), plus for each running
 * range the part its time so far covers at that worker's own pace (the estimated cost it has
 * finished per second since its first range; at most nine tenths of the range, which outlasts
 * its estimate when that is low; half of it before the worker has finished anything).  A
 * worker's range can be a sizeable part of the sweep, so counting it by time rather than as
 * half done keeps the ETA from jumping as ranges end. */
static double cost_done(const dispatcher *d, const runner *r, int size) {
  double done = r->cost_done, now = MPI_Wtime();
  for (int w = 1; w < size; w++) {
    double finished = (double)d->seen[w].cost_done, running = d->range_cost[w][0];
    double worked = d->range_start[w] - d->first_start[w];
    double by_time = finished > 0 && worked > 0 ? finished / worked * (now - d->range_start[w])
                                                : 0.5 * running;
    done += finished + (by_time < 0.9 * running ? by_time : 0.9 * running);
  }
  return done;
}

static void dispatch(MPI_Comm comm, int size, dispatcher *d, runner *r,
                     const cs_sweep_item *items, size_t n, double progress_s,
                     cs_sweep_progress_fn progress, void *ctx) {
  size_t front = 0, back = n;
  double remaining = 0;
  for (size_t i = 0; i < n; i++) remaining += items[i].cost;
  const double total = remaining;
  int active = size - 1;
  const bool works = size <= RANK0_WORKS_UP_TO && !(r->faults && r->faults->rank0_runs_none);
  double last_print = MPI_Wtime(), last_probe = 0;
  uint64_t own = 0;
  /* Every worker asks at once on arrival: serve those first, before rank 0's own first job. */
  for (int first = 1; first < size; first++) {
    MPI_Status status;
    MPI_Probe(MPI_ANY_SOURCE, TAG_REQ, comm, &status);
    answer(comm, size, d, r, status.MPI_SOURCE, items, &front, &back, &remaining, &active);
  }
  while (active > 0 || front < back) {
    if (stopping(r)) begin_stop(comm, size, d, r, r->stopped_by, true);
    if (d->stopped) back = front;
    if (active > 0) report_stop(d, r, size, progress, ctx);
    while (active > 0) {
      int flag = 0;
      MPI_Status status;
      if (works && front < back && MPI_Wtime() - last_probe < PROBE_INTERVAL_S) break;
      MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, comm, &flag, &status);
      last_probe = MPI_Wtime();
      if (!flag) {
        if (works && front < back) break; /* nobody waiting: work */
        if ((stopping(r) && !d->stopped) ||
            (d->stopped && !d->reported && MPI_Wtime() - d->t_stop >= STOP_REPORT_S))
          break;
        idle_pause();
        if (progress && progress_s > 0 && MPI_Wtime() - last_print >= progress_s) break;
        continue;
      }
      answer(comm, size, d, r, status.MPI_SOURCE, items, &front, &back, &remaining, &active);
    }
    if ((works || active == 0 || d->out_of_memory) && front < back) {
      back--;
      remaining -= items[back].cost;
      cs_job job;
      cs_err e;
      if (cs_sweep_job_get(&d->sw->jobs[items[back].job], &job, &e)) {
        r->stats->io_errors++;
        if (!r->io_err->code) *r->io_err = e;
      } else {
        run_item(r, &items[back], &job);
      }
      if (++own % ROW_BATCH == 0) flush_rows(r);
    }
    if (progress && progress_s > 0 && MPI_Wtime() - last_print >= progress_s) {
      counters sum = mine(r);
      for (int w = 1; w < size; w++) sum.ran += d->seen[w].ran, sum.failed += d->seen[w].failed;
      progress(ctx, sum.ran, sum.failed, total > 0 ? cost_done(d, r, size) / total : 1.0,
               false);
      last_print = MPI_Wtime();
    }
  }
  MPI_Waitall(2 * size, d->sreq, MPI_STATUSES_IGNORE);
  MPI_Waitall(size, d->nreq, MPI_STATUSES_IGNORE);
}

/* The largest message of items: a full range with every job at its longest. */
#define MAX_GRANT_BYTES \
  (CS_SWEEP_MAX_GRANT * (sizeof(cs_sweep_item) + sizeof(uint32_t) + CS_JOB_PACKED_MAX))

/* A worker's next grant on its way in: header and items are both received into place as they
 * arrive.  The items message exceeds MPI's eager size, so it moves only while both sides call
 * MPI: the worker tests it between its jobs (at most every PROBE_INTERVAL_S, since an idle test
 * yields the CPU) instead of waiting for it only once its range is done. */
typedef struct incoming {
  uint64_t grant[2];
  MPI_Request head, items;
  MPI_Status items_status;
  int items_done;
  double last_test;
} incoming;

/* Posts the receives of the next grant; the items go into a buffer of MAX_GRANT_BYTES. */
static void expect_grant(MPI_Comm comm, incoming *in, cs_sweep_buf *into) {
  MPI_Irecv(in->grant, 2, MPI_UINT64_T, 0, TAG_GRANT, comm, &in->head);
  MPI_Irecv(into->data, (int)into->cap, MPI_BYTE, 0, TAG_ITEMS, comm, &in->items);
  in->items_done = 0;
  in->last_test = MPI_Wtime();
}

/* Lets the grant in flight move on, at most every PROBE_INTERVAL_S. */
static void nudge_grant(incoming *in) {
  if (!in || MPI_Wtime() - in->last_test < PROBE_INTERVAL_S) return;
  int head_done = 0;
  MPI_Test(&in->head, &head_done, MPI_STATUS_IGNORE);
  if (!in->items_done) MPI_Test(&in->items, &in->items_done, &in->items_status);
  in->last_test = MPI_Wtime();
}

/* Waits (sleeping) for the whole grant.  An empty range (stop) comes without items: their
 * receive is cancelled. */
static void receive_grant(incoming *in, cs_sweep_buf *into) {
  cs_sweep_wait_sleeping(&in->head, MPI_STATUS_IGNORE);
  into->len = 0;
  if (in->grant[1] == in->grant[0]) {
    MPI_Cancel(&in->items);
    MPI_Wait(&in->items, MPI_STATUS_IGNORE);
    return;
  }
  if (!in->items_done) cs_sweep_wait_sleeping(&in->items, &in->items_status);
  int count = 0;
  MPI_Get_count(&in->items_status, MPI_BYTE, &count);
  into->len = (size_t)count;
}

/* Runs the items of a received range, letting the next grant move in between. */
static void run_range(runner *r, const cs_sweep_buf *w, incoming *next) {
  cs_sweep_item it;
  cs_job job;
  cs_err e;
  cs_err_clear(&e);
  for (size_t at = 0; wire_next(w, &at, &it, &job, &e);) {
    if (stopping(r)) break; /* the rest of the range stays pending */
    run_item(r, &it, &job);
    nudge_grant(next);
  }
  if (e.code) {
    r->stats->io_errors++;
    if (!r->io_err->code) *r->io_err = e;
  }
}

static void work(MPI_Comm comm, runner *r, cs_sweep_buf buf[2]) {
  incoming in[2];
  int cur = 0;
  MPI_Irecv(&r->notice_sig, 1, MPI_INT, 0, TAG_STOP, comm, &r->notice);
  expect_grant(comm, &in[cur], &buf[cur]);
  counters c = mine(r);
  MPI_Send(&c, COUNTERS_LEN, MPI_UINT64_T, 0, TAG_REQ, comm);
  receive_grant(&in[cur], &buf[cur]);
  while (in[cur].grant[1] > in[cur].grant[0]) {
    int nxt = 1 - cur;
    expect_grant(comm, &in[nxt], &buf[nxt]);
    c = mine(r);
    MPI_Send(&c, COUNTERS_LEN, MPI_UINT64_T, 0, TAG_REQ, comm);
    if (!stopping(r)) run_range(r, &buf[cur], &in[nxt]); /* stopped: the range stays pending */
    flush_rows(r);
    receive_grant(&in[nxt], &buf[nxt]);
    cur = nxt;
  }
  /* rank 0 sent a stop notice before a stopping grant, and none before any other last grant */
  if (r->notice != MPI_REQUEST_NULL && in[cur].grant[0] != GRANT_STOPPED) MPI_Cancel(&r->notice);
  int noticed = r->notice == MPI_REQUEST_NULL;
  MPI_Status ns;
  MPI_Wait(&r->notice, &ns);
  int cancelled = 0;
  if (!noticed) MPI_Test_cancelled(&ns, &cancelled);
  if (!noticed && !cancelled && !r->stopped_by) r->stopped_by = r->notice_sig;
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int cs_sweep_schedule(MPI_Comm comm, cs_store *st, const cs_sweep *sw, const cs_sweep_item *items,
                      size_t n, bool results_only, double progress_s,
                      cs_sweep_progress_fn progress, void *progress_ctx,
                      const volatile sig_atomic_t *stop, const cs_sweep_faults *faults,
                      int *stopped_by, cs_sweep_sched_stats *stats, cs_err *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  memset(stats, 0, sizeof *stats);
  double cpu0 = cpu_seconds();
  cs_err io_err;
  cs_err_clear(&io_err);
  runner r = {st,   results_only, rank, stats, &io_err, 0, 0, faults, cs_job_shared_new(), {0},
              0,    stop,         0,    MPI_REQUEST_NULL, 0, 0};
  arm_stop(&r, faults);
  dispatcher d = {0};
  d.sw = sw;
  cs_sweep_buf buf[2] = {{NULL, 0, 0}, {NULL, 0, 0}};
  int ok = 1;
  if (rank == 0) {
    d.seen = calloc((size_t)size, sizeof *d.seen);
    d.range_cost = calloc((size_t)size, sizeof *d.range_cost);
    d.range_start = calloc((size_t)size, sizeof *d.range_start);
    d.first_start = calloc((size_t)size, sizeof *d.first_start);
    d.grant = calloc((size_t)size, sizeof *d.grant);
    d.out = calloc((size_t)size, sizeof *d.out);
    d.sreq = malloc(2 * (size_t)size * sizeof *d.sreq);
    d.nreq = malloc((size_t)size * sizeof *d.nreq);
    d.ended = calloc((size_t)size, sizeof *d.ended);
    ok = d.seen && d.range_cost && d.range_start && d.first_start && d.grant && d.out && d.sreq && d.nreq && d.ended &&
         (n == 0 || sw);
    for (int w = 0; ok && w < 2 * size; w++) d.sreq[w] = MPI_REQUEST_NULL;
    for (int w = 0; ok && w < size; w++) d.nreq[w] = MPI_REQUEST_NULL;
  } else {
    for (int i = 0; i < 2; i++) {
      buf[i].data = malloc(MAX_GRANT_BYTES);
      buf[i].cap = buf[i].data ? MAX_GRANT_BYTES : 0;
      ok = ok && buf[i].data;
    }
  }
  cs_err berr;
  size_t batch = ROW_BATCH > CS_SWEEP_MAX_GRANT ? ROW_BATCH : CS_SWEEP_MAX_GRANT;
  if (ok && cs_store_batch_rows(st, batch, &berr)) ok = 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
  if (all_ok && rank == 0)
    dispatch(comm, size, &d, &r, items, n, progress_s, progress, progress_ctx);
  else if (all_ok)
    work(comm, &r, buf);
  if (all_ok) flush_rows(&r);
  /* The ranks that end first sleep here until every rank is done, instead of spinning in the
   * collective close that follows. */
  MPI_Request done = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &done);
  for (int finished = 0;;) { /* a stopped worker may still end its job in hand */
    MPI_Test(&done, &finished, MPI_STATUS_IGNORE);
    if (finished) break;
    if (rank == 0 && all_ok) report_stop(&d, &r, size, progress, progress_ctx);
    idle_pause();
  }
  cs_job_shared_free(r.shared);
  cs_sweep_logbuf_free(&r.logbuf);
  free(buf[0].data);
  free(buf[1].data);
  for (int w = 0; d.out && w < size; w++) free(d.out[w].data);
  free(d.out);
  free(d.seen);
  free(d.range_cost);
  free(d.range_start);
  free(d.first_start);
  free(d.grant);
  free(d.sreq);
  free(d.nreq);
  free(d.ended);
  /* every rank says why it stopped: a stop seen on any rank is the sweep's */
  int sig = r.stopped_by;
  MPI_Allreduce(&r.stopped_by, &sig, 1, MPI_INT, MPI_MAX, comm);
  if (stopped_by) *stopped_by = sig;
  stats->cpu_s = cpu_seconds() - cpu0;
  if (!all_ok) return cs_err_set(err, CS_ENOMEM, "scheduler: out of memory");
  if (io_err.code) *err = io_err;
  return io_err.code;
}
