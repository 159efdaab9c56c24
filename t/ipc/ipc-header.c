/* SPDX-License-Identifier: MIT */
/* clmem-ipc.h on its own in strict C99 (-std=c99 -pedantic -Werror -Wall
 * -Wextra, see ipc/ipc.am): it must bring in everything it uses. Building
 * this is the test; running it checks that the declarations link and that
 * the NULL rules hold without a device. */
#include <clmem-ipc.h>

#include <stdio.h>

int main(void)
{
    clmem_ipc_producer *p = NULL;
    clmem_ipc_consumer *c = NULL;
    clmem_ipc_frame frame;
    int fd = 0;
    int ok = clmem_ipc_producer_create(NULL, &p) == CLMEM_ERR_NULL_POINTER && p == NULL &&
             clmem_ipc_consumer_create(NULL, &c) == CLMEM_ERR_NULL_POINTER && c == NULL &&
             clmem_ipc_consumer_next(NULL, 0, &frame, NULL) == CLMEM_ERR_NULL_POINTER && frame.plane_count == 0 &&
             clmem_ipc_listen(NULL, &fd) == CLMEM_ERR_NULL_POINTER && fd == -1 &&
             clmem_ipc_consumer_destroy(NULL, 0) == CLMEM_OK && clmem_ipc_producer_lent(NULL) == 0 &&
             clmem_ipc_consumer_state(NULL) == CLMEM_IPC_STATE_NEW && CLMEM_IPC_PROTOCOL_VERSION == 2 &&
             sizeof(clmem_ipc_frame) > 0;
    clmem_ipc_producer_destroy(NULL);
    printf("1..1\n%s 1 - clmem-ipc.h builds alone as C99, and its calls take NULL as documented\n",
           ok ? "ok" : "not ok");
    return ok ? 0 : 1;
}
