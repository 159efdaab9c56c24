/* SPDX-License-Identifier: MIT */
/* One case of a test program, run in a child process: the program runs
 * itself again (its own executable, found through /proc/self/exe) with
 * the case's name as its only argument, so that the child starts from
 * nothing: no driver threads half-copied by fork(), and nothing that the
 * parent's calls cached (the library reads CLMEM_CHECK once). Its stdout
 * and stderr come back together. */
#ifndef CLMEM_TEST_CHILD_H
#define CLMEM_TEST_CHILD_H
#include <stdbool.h>
#include <stddef.h>

struct child_result {
    bool ran;           /* it was started and waited for */
    bool timed_out;     /* ...and killed after the timeout */
    int status;         /* waitpid's */
    char output[16384]; /* what it wrote, cut to fit */
};

/* Run case `name` with `env` ("NAME=value" strings, NULL-terminated; may
 * be NULL) added to this process's environment; kill it after timeout_s.
 * False when it could not be started (r->output says why). */
bool child_run(const char *name, const char *const *env, unsigned timeout_s, struct child_result *r);

/* Did it die of SIGABRT? */
bool child_aborted(const struct child_result *r);

/* "killed by signal 6 (Aborted)", "exited with status 0"... */
const char *child_how(const struct child_result *r, char *buf, size_t len);

/* How many lines of r->output start with `prefix`. */
int child_lines_starting(const struct child_result *r, const char *prefix);

/* Print the child's output as "# " lines (for a failed check). */
void child_diag(const struct child_result *r);

/* A case of misuse (t/core/misuse, t/bridge/bridge-misuse): what the child runs, and
 * what it must end with. */
struct misuse_case {
    const char *name;
    void (*run)(void);
    bool checked;      /* run with CLMEM_CHECK=1 (else CLMEM_CHECK=0) */
    const char *call;  /* the call the report names; NULL: the child must exit 0 and report nothing */
    const char *says;  /* a fragment of the report's line */
    bool sanitizer_first; /* ASan or UBSan may report it first: it reads freed memory, or reads an
                             object through a pointer of another type (an alignment UBSan checks) */
};

/* In a child (argv[1] names a case): run it and return 0 (reached only if
 * it did not abort), or 99 for an unknown name. -1 in the parent. */
int misuse_run_child(const struct misuse_case *cases, int count, int argc, char **argv);

/* Run case c in a child and check how it ended: killed by SIGABRT after
 * exactly one line "clmem: <call>(0x...", which says c->says; or, for a
 * case marked sanitizer_first in a run under AddressSanitizer and
 * UndefinedBehaviorSanitizer (CLMEM_TEST_INSTRUMENTED=asan), their report
 * (heap-use-after-free, or a "runtime error") naming the call. One test
 * point. */
void misuse_check(const struct misuse_case *c, unsigned timeout_s);
#endif
