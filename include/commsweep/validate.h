/* Constraints C1-C11 of the adapter specification (tbl-cr-10), each checked where it belongs.
 * A violation is CS_ECONSTRAINT with a message "C<n>: <field> = <value>: <rule>".
 */
#ifndef COMMSWEEP_VALIDATE_H
#define COMMSWEEP_VALIDATE_H

#include "commsweep/err.h"
#include "commsweep/model.h"

/* C4 even outstanding, C7 frequency triple, C8 transaction log.  (C1-C3 are the engines':
 * cs_engine_ops.validate; cs_job_validate in job.h runs both.) */
int cs_validate_adapter(const cs_adapter_config *cfg, cs_err *err);

/* C5 distinct participants, C11 algorithm, plus primitive/participant-count/size rules and
 * participants within [0, num_initiators) and [0, num_targets). */
int cs_validate_spec(const cs_spec *spec, const cs_adapter_config *cfg, cs_err *err);


/* C6: within one step, concurrent flows target distinct DDR ids (at flow level:
 * cs_plan_check_step_flows, expand.h); C9: only req/rsp packets.
 * `flow_of` gives each inject's flow (transactions of one flow share its target). */
int cs_validate_step_injects(const cs_inject *injects, const uint32_t *flow_of, size_t n,
                             uint32_t step, cs_err *err);

/* C9 and C10: an rsp must reverse its req's src/dst and reuse its request id. */
int cs_validate_rsp(const cs_inject *req, const cs_inject *rsp, cs_err *err);

#endif
