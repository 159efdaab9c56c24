/* SPDX-License-Identifier: MIT */
/* Running one case of a test program in a child process (child.h). */
#define _GNU_SOURCE
#include "child.h"
#include "tap.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

bool child_run(const char *name, const char *const *env, unsigned timeout_s, struct child_result *r)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1); /* valgrind answers with the test's path */
    long long deadline = tap_now_ns() + (long long)timeout_s * 1000000000LL;
    size_t used = 0;
    int fds[2];
    pid_t pid;

    memset(r, 0, sizeof *r);
    if (len <= 0 || pipe(fds) != 0) {
        snprintf(r->output, sizeof r->output, "could not start: %s", strerror(errno));
        return false;
    }
    self[len] = '\0';
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        snprintf(r->output, sizeof r->output, "fork failed: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        for (const char *const *e = env; e && *e; e++)
            putenv((char *)*e);
        execl(self, self, name, (char *)NULL);
        fprintf(stderr, "exec %s failed: %s\n", self, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        long long left_ms = (deadline - tap_now_ns()) / 1000000;
        ssize_t n;

        if (left_ms <= 0) {
            kill(pid, SIGKILL);
            r->timed_out = true;
            break;
        }
        if (poll(&p, 1, (int)(left_ms > 1000 ? 1000 : left_ms)) <= 0)
            continue;
        if (used + 1 < sizeof r->output)
            n = read(fds[0], r->output + used, sizeof r->output - 1 - used);
        else {
            char sink[4096];
            n = read(fds[0], sink, sizeof sink);
        }
        if (n <= 0)
            break;
        if (used + 1 < sizeof r->output)
            used += (size_t)n;
    }
    r->output[used] = '\0';
    close(fds[0]);
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
        ;
    r->ran = true;
    return true;
}

bool child_aborted(const struct child_result *r)
{
    return r->ran && !r->timed_out && WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT;
}

const char *child_how(const struct child_result *r, char *buf, size_t len)
{
    if (!r->ran)
        snprintf(buf, len, "did not run");
    else if (r->timed_out)
        snprintf(buf, len, "timed out, killed");
    else if (WIFSIGNALED(r->status))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(r->status), strsignal(WTERMSIG(r->status)));
    else
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(r->status));
    return buf;
}

int child_lines_starting(const struct child_result *r, const char *prefix)
{
    size_t n = strlen(prefix);
    int count = 0;

    for (const char *line = r->output; *line;) {
        const char *end = strchr(line, '\n');
        if (strncmp(line, prefix, n) == 0)
            count++;
        if (!end)
            break;
        line = end + 1;
    }
    return count;
}

void child_diag(const struct child_result *r)
{
    for (const char *line = r->output; *line;) {
        const char *end = strchr(line, '\n');
        int n = end ? (int)(end - line) : (int)strlen(line);
        tap_diag("  child: %.*s", n, line);
        if (!end)
            break;
        line = end + 1;
    }
}

int misuse_run_child(const struct misuse_case *cases, int count, int argc, char **argv)
{
    if (argc != 2)
        return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].run();
            return 0;
        }
    return 99;
}

void misuse_check(const struct misuse_case *c, unsigned timeout_s)
{
    static const char *const checked_env[] = {"CLMEM_CHECK=1", NULL};
    static const char *const plain_env[] = {"CLMEM_CHECK=0", NULL};
    const char *instrumented = getenv("CLMEM_TEST_INSTRUMENTED");
    struct child_result r;
    char how[96], head[160];
    bool ok;

    if (!child_run(c->name, c->checked ? checked_env : plain_env, timeout_s, &r)) {
        tap_ok(false, "%s: the child ran (%s)", c->name, r.output);
        return;
    }
    child_how(&r, how, sizeof how);
    if (!c->call) {
        ok = tap_ok(!r.timed_out && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && !strstr(r.output, "clmem:"),
                    "%s: runs to the end, no report (%s)", c->name, how);
    } else if (c->sanitizer_first && instrumented && strcmp(instrumented, "asan") == 0 &&
               (strstr(r.output, "AddressSanitizer: heap-use-after-free") || strstr(r.output, "runtime error:"))) {
        ok = tap_ok(strstr(r.output, c->call) != NULL, "%s: the sanitizer caught it first, in %s (%s)", c->name,
                    c->call, how);
    } else {
        snprintf(head, sizeof head, "clmem: %s(0x", c->call);
        ok = tap_ok(child_aborted(&r) && child_lines_starting(&r, head) == 1 &&
                        child_lines_starting(&r, "clmem:") == 1 && strstr(r.output, c->says),
                    "%s: aborts with one line naming %s (%s)", c->name, c->call, how);
    }
    if (!ok)
        child_diag(&r);
}
