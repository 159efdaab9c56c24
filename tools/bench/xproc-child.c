/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: the consumer process's main.
 * clmem-bench XPROC_CHILD_OPTION MODE FD [FD2] (xproc-spawn.c starts it so)
 * sets up its devices (xproc-consumer.c) and hands each socket to the
 * consumer role MODE names: "ipc" libclmem-ipc's consumer (xproc-ipc.c),
 * "ipc-batch" the same taking its frames in batches, "shm" the /dev/shm
 * copy's (xproc-shm.c), "ipc+raw" libclmem-ipc's on FD and the raw
 * protocol's (xproc-raw.c) on FD2.
 *
 * "ipc+raw" runs both roles in this one process, on a thread each, with
 * the same devices and OpenCL context (a queue and a kernel each): the
 * producer hands them frames in turn, so that the library and the raw
 * calls are compared in the same process. In two processes a difference
 * came out between two consumer processes running the same raw calls
 * (docs/performance.md), which a comparison of the library against the
 * raw calls would take for the library's. */
#include "xproc-common.h"

#include <pthread.h>
#include <unistd.h>

struct raw_role {
    struct consumer_devices devices;
    int sock;
    int status;
};

static void *raw_role_main(void *arg)
{
    struct raw_role *role = arg;
    role->status = xproc_consume_raw(&role->devices, role->sock);
    close(role->sock); /* the producer sees the end at once, even if the other role goes on */
    return NULL;
}

/* libclmem-ipc's role on this thread, the raw protocol's on another: the
 * process's exit status says which failed (XPROC_EXIT_*). */
static int consume_ipc_and_raw(struct consumer_devices *c, int ipc_sock, int raw_sock)
{
    struct raw_role role = {.sock = raw_sock, .status = 1};
    pthread_t thread;
    int status = 0;

    if (!xproc_consumer_open_beside(c, &role.devices)) {
        xproc_consumer_close_beside(&role.devices);
        close(raw_sock);
        fprintf(stderr, "clmem-bench (x) consumer: the raw protocol's queue and kernel could not be made\n");
        status |= XPROC_EXIT_RAW_FAILED;
        return status | (xproc_consume_ipc(c, ipc_sock, false) ? XPROC_EXIT_IPC_FAILED : 0);
    }
    if (pthread_create(&thread, NULL, raw_role_main, &role) != 0) {
        close(raw_sock);
        fprintf(stderr, "clmem-bench (x) consumer: no thread for the raw protocol\n");
        status |= XPROC_EXIT_RAW_FAILED;
    }
    if (xproc_consume_ipc(c, ipc_sock, false))
        status |= XPROC_EXIT_IPC_FAILED;
    if (!(status & XPROC_EXIT_RAW_FAILED)) {
        pthread_join(thread, NULL); /* it ends at the EOF of its socket */
        if (role.status)
            status |= XPROC_EXIT_RAW_FAILED;
    }
    xproc_consumer_close_beside(&role.devices);
    return status;
}

int xproc_child_main(int argc, char **argv)
{
    struct consumer_devices c = {0};
    bool pair = argc == 5 && !strcmp(argv[2], "ipc+raw");
    int sock = argc >= 4 ? atoi(argv[3]) : -1, sock2 = pair ? atoi(argv[4]) : -1;
    if (sock < 0 || (pair && sock2 < 0) ||
        (!pair && (argc != 4 || (strcmp(argv[2], "ipc") && strcmp(argv[2], "ipc-batch") && strcmp(argv[2], "shm"))))) {
        fprintf(stderr, "clmem-bench: %s is for clmem-bench's own use\n", XPROC_CHILD_OPTION);
        return 2;
    }
    if (!xproc_consumer_open(&c))
        return xproc_consumer_fail("setting up Vulkan and OpenCL");
    int status = pair                      ? consume_ipc_and_raw(&c, sock, sock2)
                 : !strcmp(argv[2], "shm") ? xproc_consume_shm(&c, sock)
                                           : xproc_consume_ipc(&c, sock, !strcmp(argv[2], "ipc-batch"));
    if (!strcmp(argv[2], "shm")) /* libclmem-ipc's consumer took its socket */
        close(sock);
    xproc_consumer_close(&c);
    return status;
}
