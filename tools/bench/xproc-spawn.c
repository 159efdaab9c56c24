/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: the consumer process started and
 * reaped. It is clmem-bench run again (posix_spawn of /proc/self/exe with
 * XPROC_CHILD_OPTION, the mode and the fd of its end of each socketpair),
 * so that it loads its drivers itself, as a separate program would;
 * xproc_child_main (xproc-child.c) is where it starts. */
#include "xproc-common.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* clmem-bench XPROC_CHILD_OPTION MODE FD [FD2], where the FDs are the
 * descriptors it inherits, one a socketpair (the socketpairs' ends are
 * close-on-exec; duplicates of its ends are not). */
pid_t xproc_spawn_consumer(const char *mode, int nsocks, int *socks_out)
{
    int sv[2][2], inherit[2];
    char fdtext[2][16];
    char *argv[6] = {(char *)"clmem-bench", (char *)XPROC_CHILD_OPTION, (char *)mode, NULL, NULL, NULL};
    pid_t pid;

    for (int i = 0; i < nsocks; i++) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv[i]) != 0)
            die("(x): socketpair: %s", strerror(errno));
        inherit[i] = fcntl(sv[i][1], F_DUPFD, 10); /* without FD_CLOEXEC: the child keeps it */
        if (inherit[i] < 0)
            die("(x): fcntl(F_DUPFD): %s", strerror(errno));
        snprintf(fdtext[i], sizeof fdtext[i], "%d", inherit[i]);
        argv[3 + i] = fdtext[i];
    }
    fflush(stdout);
    int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    for (int i = 0; i < nsocks; i++) {
        close(inherit[i]);
        close(sv[i][1]);
        socks_out[i] = sv[i][0];
    }
    if (err)
        die("(x): posix_spawn(/proc/self/exe): %s", strerror(err));
    return pid;
}

/* The child's exit status (why says what it was, when not 0), or -1 when
 * a signal ended it or it did not end in time (its stderr went to the
 * bench's). */
int xproc_reap(pid_t pid, char *why, size_t len)
{
    int status;
    for (int i = 0; i < 10000; i++) { /* 10 s */
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
            snprintf(why, len, "the consumer process ended with %s %d", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    snprintf(why, len, "the consumer process did not end within 10 s (killed)");
    return -1;
}
