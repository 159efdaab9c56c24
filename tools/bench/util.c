/* SPDX-License-Identifier: MIT */
/* clmem-bench: the clock, waiting for a teardown, the error exits and checks, the watchdog, size text. */
#include "bench.h"

double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("clmem-bench: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* Every call is checked, also inside the timed loops: a branch costs both
 * variants the same, and a silently failing call would time nothing. */
void check_vk(VkResult r, const char *what)
{
    if (r != VK_SUCCESS)
        die("%s failed: VkResult %d", what, (int)r);
}

void check_cl(cl_int err, const char *what)
{
    if (err != CL_SUCCESS)
        die("%s failed: OpenCL error %d", what, (int)err);
}

void check_clmem(clmem_status s, const char *what)
{
    if (s != CLMEM_OK)
        die("%s failed: %s", what, clmem_error_message());
}

/* A teardown's deadline: DESTROY_WAIT_S from now. */
double teardown_deadline(void)
{
    return now_us() + DESTROY_WAIT_S * 1e6;
}

/* Polls *flag every 100 us until it is set (by an anchor's release or by
 * OpenCL's destructor callback, maybe on a driver thread) or now_us()
 * passes deadline_us; whether it was set. */
bool wait_until_set(atomic_int *flag, double deadline_us)
{
    while (!atomic_load(flag) && now_us() < deadline_us) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    return atomic_load(flag) != 0;
}

/* The watchdog: alarm() per measure; the handler only write()s and _exit()s. */
#define STRINGIFY(x) #x
#define NUMBER_TEXT(x) STRINGIFY(x)
static char watchdog_what[160];
static volatile size_t watchdog_len;

static void on_watchdog(int sig)
{
    static const char msg[] = "clmem-bench: error: no progress in " NUMBER_TEXT(WATCHDOG_S) " s, stuck in ";
    (void)sig;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0 || write(STDERR_FILENO, watchdog_what, watchdog_len) < 0 ||
        write(STDERR_FILENO, "\n", 1) < 0)
        _exit(1);
    _exit(1);
}

void watchdog(const char *what, const char *size)
{
    int n = snprintf(watchdog_what, sizeof watchdog_what, "%s at %s", what, size);
    watchdog_len = n < 0 ? 0 : (size_t)n < sizeof watchdog_what ? (size_t)n : sizeof watchdog_what - 1;
    signal(SIGALRM, on_watchdog);
    alarm(WATCHDOG_S);
}

/* A check of the results: reported, counted, and the run goes on. */
void fail(struct bench *b, const char *fmt, ...)
{
    va_list ap;
    printf("FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    b->failures++;
}

/* "4K", "16M", "1G", or the number of bytes when it is no round multiple. */
const char *size_text(uint64_t size, char *buf, size_t len)
{
    if (size >= GIB && size % GIB == 0)
        snprintf(buf, len, "%lluG", (unsigned long long)(size / GIB));
    else if (size >= MIB && size % MIB == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(size / MIB));
    else if (size >= KIB && size % KIB == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(size / KIB));
    else
        snprintf(buf, len, "%llu", (unsigned long long)size);
    return buf;
}
