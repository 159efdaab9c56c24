/* SPDX-License-Identifier: MIT */
/* clmem-bench, frames across processes: the consumer process's main.
 * clmem-bench XPROC_CHILD_OPTION MODE FD (xproc-spawn.c starts it so) sets
 * up its devices (xproc-consumer.c) and hands the socket FD to the consumer
 * role MODE names: "ipc" libclmem-ipc's consumer (xproc-ipc.c), "ipc-batch"
 * the same taking its frames in batches, "shm" the
 * /dev/shm copy's (xproc-shm.c), "raw" the raw protocol's (xproc-raw.c). */
#include "xproc-common.h"

#include <unistd.h>

int xproc_child_main(int argc, char **argv)
{
    struct consumer_devices c = {0};
    int sock = argc == 4 ? atoi(argv[3]) : -1;
    if (sock < 0 ||
        (strcmp(argv[2], "ipc") && strcmp(argv[2], "ipc-batch") && strcmp(argv[2], "shm") && strcmp(argv[2], "raw"))) {
        fprintf(stderr, "clmem-bench: %s is for clmem-bench's own use\n", XPROC_CHILD_OPTION);
        return 2;
    }
    if (!xproc_consumer_open(&c))
        return xproc_consumer_fail("setting up Vulkan and OpenCL");
    bool ipc = !strncmp(argv[2], "ipc", 3);
    int status = ipc                       ? xproc_consume_ipc(&c, sock, !strcmp(argv[2], "ipc-batch"))
                 : !strcmp(argv[2], "raw") ? xproc_consume_raw(&c, sock)
                                           : xproc_consume_shm(&c, sock);
    if (!ipc) /* libclmem-ipc's consumer took the socket */
        close(sock);
    xproc_consumer_close(&c);
    return status;
}
