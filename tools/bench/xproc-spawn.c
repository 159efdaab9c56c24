/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: the consumer process started and
 * reaped. It is clmem-bench run again (posix_spawn of /proc/self/exe with
 * XPROC_CHILD_OPTION, the mode and the fd of its end of a socketpair), so
 * that it loads its drivers itself, as a separate program would;
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

/* clmem-bench XPROC_CHILD_OPTION MODE FD, where FD is the one descriptor
 * it inherits (the socketpair's ends are close-on-exec; a duplicate of its
 * end is not). */
pid_t xproc_spawn_consumer(const char *mode, int *sock_out)
{
    int sv[2], inherit;
    char fdtext[16];
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        die("(x): socketpair: %s", strerror(errno));
    inherit = fcntl(sv[1], F_DUPFD, 10); /* without FD_CLOEXEC: the one fd the child keeps */
    if (inherit < 0)
        die("(x): fcntl(F_DUPFD): %s", strerror(errno));
    snprintf(fdtext, sizeof fdtext, "%d", inherit);
    char *argv[] = {(char *)"clmem-bench", (char *)XPROC_CHILD_OPTION, (char *)mode, fdtext, NULL};
    fflush(stdout);
    int err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    close(inherit);
    close(sv[1]);
    if (err)
        die("(x): posix_spawn(/proc/self/exe): %s", strerror(err));
    *sock_out = sv[0];
    return pid;
}

/* The child's exit: 0, or why not (its stderr went to the bench's). */
bool xproc_reap(pid_t pid, char *why, size_t len)
{
    int status;
    for (int i = 0; i < 10000; i++) { /* 10 s */
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return true;
            snprintf(why, len, "the consumer process ended with %s %d", WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
            return false;
        }
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    snprintf(why, len, "the consumer process did not end within 10 s (killed)");
    return false;
}
