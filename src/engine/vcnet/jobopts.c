/* Where a job's network options come from. */
#include "vcnet_int.h"
#include "commsweep/model.h"

int vcn_job_params(const cs_job *job, vcn_params *p, cs_err *err) {
  (void)job;
  (void)p;
  return cs_err_set(err, CS_EINVAL, "vcnet: engine options are not wired to jobs yet");
}
