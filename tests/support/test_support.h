/* Helpers shared by the Check suites: temporary files and a ready-made valid job. */
#ifndef CS_TEST_SUPPORT_H
#define CS_TEST_SUPPORT_H

#include <stdbool.h>

#include "commsweep/model.h"
#include "commsweep/math_engine.h"
#include "commsweep/topo.h"

/* Writes text to a fresh temporary file; returns its path in a static-free caller buffer. */
void cs_test_write_temp(const char *text, char *path_out, unsigned long cap);

/* A valid 2-die job on the given engine: ring allreduce of msg bytes over participants. */
/* The math engine's options of a test job (its params area). */
void cs_test_math_params(cs_job *job, cs_math_params p);
cs_math_params *cs_test_math(cs_job *job);
void cs_test_job(cs_job *job, const char *engine, cs_primitive prim, unsigned long long msg,
                 const int *participants, int n);

struct Suite;
/* Runs the suite (fork mode from CK_FORK), prints the summary, frees it; returns the process
 * exit status: EXIT_SUCCESS when every test passed. */
int cs_test_run(struct Suite *suite);

/* True when CS_TEST_QUICK is set (valgrind runs): suites shrink their loops. */
bool cs_test_quick(void);

#endif
