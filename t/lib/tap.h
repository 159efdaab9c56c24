/* SPDX-License-Identifier: MIT */
/* A small TAP producer for the tests: each program prints its own plan,
 * automake's tap-driver.sh reads it. */
#ifndef CLMEM_TAP_H
#define CLMEM_TAP_H
#include <stdbool.h>

/* The plan, when the count is known up front. */
void tap_plan(int count);
/* Skip the whole program: prints "1..0 # SKIP <why>" and exits 0. Only for a
 * capability the machine lacks, named precisely. */
void tap_skip_all(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* One test point; returns cond so callers can chain diagnostics. */
bool tap_ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A test point that is known to fail until `why` is done: "not ok ... #
 * TODO why" does not fail the program; "ok ... # TODO why" is an
 * unexpected pass, which the harness counts as a failure (the TODO mark
 * is then to go). Returns cond. */
bool tap_todo(bool cond, const char *why, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A test point skipped for a named missing capability. */
void tap_skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A diagnostic line ("# ..."). */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Stop at once with "Bail out!": the harness counts it as an error. */
void tap_bail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Print the trailing plan when none was given and return the exit status:
 * 0 when every point passed, 1 otherwise. */
int tap_done(void);

/* A wall-clock bound for a test point: plain_ms in an ordinary build, or
 * instrumented_ms when CLMEM_TEST_INSTRUMENTED is set in the environment
 * (scripts/check-sanitizers.sh and scripts/check-valgrind.sh set it: ASan, TSan
 * and valgrind slow every call several times over). Only for bounds that
 * tell "did not wait for device work" from "waited": the work such a test
 * holds back takes far longer than either bound. */
double tap_time_bound_ms(double plain_ms, double instrumented_ms);

/* CLOCK_MONOTONIC in nanoseconds, and milliseconds from a to b. */
long long tap_now_ns(void);
double tap_ms_between(long long a, long long b);

/* After `seconds`, print "Bail out! watchdog: <name> still running ..."
 * and exit 1: a hung driver must fail the test, not stall the suite. */
void tap_watchdog(const char *name, unsigned seconds);

/* A stopwatch for "this call returned at once": wall time, and this
 * thread's CPU time and context switches (getrusage RUSAGE_THREAD). */
struct tap_stopwatch {
    double wall_ms, cpu_ms;
    long preempted; /* involuntary switches: the scheduler gave the CPU to another */
    long waited;    /* voluntary switches: the thread slept (a lock, a wait) */
    double w0, c0;
    long niv0, nv0;
};
void tap_stopwatch_start(struct tap_stopwatch *s);
void tap_stopwatch_stop(struct tap_stopwatch *s);

/* Under limit_ms of wall time; or, when the scheduler preempted the thread
 * meanwhile and it never slept (the CI machines are shared: a 3 ms unref
 * was seen under load), under limit_ms of the thread's own CPU time. A
 * call that slept, waiting for something, gets no such allowance. */
bool tap_stopwatch_under(const struct tap_stopwatch *s, double limit_ms);

#define tap_is_int(got, want, ...)                                                                        \
    (tap_ok((long long)(got) == (long long)(want), __VA_ARGS__) ||                                       \
     (tap_diag("  got %lld, want %lld", (long long)(got), (long long)(want)), false))
#endif
