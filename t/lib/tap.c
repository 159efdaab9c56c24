/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "tap.h"

#include <stdarg.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int tap_count;
static int tap_failed;
static int tap_planned = -1;

void tap_plan(int count)
{
    tap_planned = count;
    printf("1..%d\n", count);
    fflush(stdout);
}

void tap_skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(0);
}

bool tap_ok(bool cond, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    if (!cond)
        tap_failed++;
    printf("%s %d - ", cond ? "ok" : "not ok", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return cond;
}

bool tap_todo(bool cond, const char *why, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    printf("%s %d - ", cond ? "ok" : "not ok", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" # TODO %s\n", why);
    fflush(stdout);
    return cond;
}

void tap_skip(const char *why, const char *fmt, ...)
{
    va_list ap;
    tap_count++;
    printf("ok %d - ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" # SKIP %s\n", why);
    fflush(stdout);
}

void tap_diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void tap_bail(const char *fmt, ...)
{
    va_list ap;
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

int tap_done(void)
{
    if (tap_planned < 0)
        printf("1..%d\n", tap_count);
    else if (tap_planned != tap_count)
        printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
    fflush(stdout);
    return tap_failed || (tap_planned >= 0 && tap_planned != tap_count) ? 1 : 0;
}

double tap_time_bound_ms(double plain_ms, double instrumented_ms)
{
    const char *v = getenv("CLMEM_TEST_INSTRUMENTED");
    return v && *v && strcmp(v, "0") != 0 ? instrumented_ms : plain_ms;
}

static double clock_ms(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

void tap_stopwatch_start(struct tap_stopwatch *s)
{
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    s->niv0 = u.ru_nivcsw;
    s->nv0 = u.ru_nvcsw;
    s->c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
    s->w0 = clock_ms(CLOCK_MONOTONIC);
}

void tap_stopwatch_stop(struct tap_stopwatch *s)
{
    struct rusage u;
    s->wall_ms = clock_ms(CLOCK_MONOTONIC) - s->w0;
    s->cpu_ms = clock_ms(CLOCK_THREAD_CPUTIME_ID) - s->c0;
    getrusage(RUSAGE_THREAD, &u);
    s->preempted = u.ru_nivcsw - s->niv0;
    s->waited = u.ru_nvcsw - s->nv0;
}

bool tap_stopwatch_under(const struct tap_stopwatch *s, double limit_ms)
{
    if (s->wall_ms < limit_ms)
        return true;
    return s->preempted > 0 && s->waited == 0 && s->cpu_ms < limit_ms;
}

long long tap_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

double tap_ms_between(long long a, long long b)
{
    return (double)(b - a) / 1e6;
}

static char watchdog_msg[160];

static void on_watchdog(int sig)
{
    size_t n = strlen(watchdog_msg); /* async-signal-safe, and the text was made before */
    (void)sig;
    if (write(STDOUT_FILENO, watchdog_msg, n) < 0) {
        /* nothing more to do */
    }
    _exit(1);
}

void tap_watchdog(const char *name, unsigned seconds)
{
    snprintf(watchdog_msg, sizeof watchdog_msg, "Bail out! watchdog: %s still running after %u s\n", name, seconds);
    signal(SIGALRM, on_watchdog);
    alarm(seconds);
}
