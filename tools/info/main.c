/* SPDX-License-Identifier: MIT */
/*
 * clmem-info: what this machine can share between Vulkan and OpenCL.
 *
 * Lists the OpenCL platforms and devices with the properties that decide
 * memory sharing, and (when built with libclmem-bridge) the Vulkan physical
 * devices, how they pair with OpenCL devices, and for every (Vulkan device,
 * OpenCL device) pair what a clmem_bridge made of the two answers: which
 * paths and semaphore modes are supported. A supported path is not taken
 * on trust: it is run live (Vulkan fills a buffer, OpenCL transforms it in
 * place, Vulkan reads it back and every word is checked). On each
 * supported path every image format the bridge shares is checked live too:
 * a small linear image written by Vulkan, each plane read back by OpenCL
 * through its row pitch (and through an image2d view where the device makes
 * them), and optimal tiling by the bridge's own live check. CLMEM_VK_DEVICE
 * (an index, a deviceUUID or a name: tools/vkctx/vkctx.h) limits the checks to
 * the one Vulkan device it names.
 *
 * Everything is gathered first and printed at the end, as text or (--json)
 * as JSON, so both outputs come from the same records.
 *
 * Exit status: 0 when every live check passed (an unsupported path is not a
 * failure), 1 when one failed, a Vulkan device could not be opened or
 * CLMEM_VK_DEVICE names none, 2 on a usage error.
 */
#include "config.h"

#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct report *r = calloc(1, sizeof *r);
    bool json = false;
    int saved_stdout = -1, status;

    if (!r) {
        fputs("clmem-info: out of memory\n", stderr);
        return 1;
    }
    r->size = DEFAULT_SIZE;
    status = parse_args(argc, argv, &json, &r->size);
    if (status != 0) {
        free(r);
        return status < 0 ? 0 : status;
    }
    /* With --json stdout must hold JSON only, but the validation messenger
     * in tools/vkctx/vkctx.c and some drivers print to stdout while the checks
     * run: send fd 1 to stderr until the report is written. */
    if (json) {
        fflush(stdout);
        saved_stdout = dup(STDOUT_FILENO);
        if (saved_stdout >= 0)
            dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    list_opencl(r);
#ifdef CLMEM_INFO_WITH_VULKAN
    run_vulkan(r);
#endif
    if (saved_stdout >= 0) {
        fflush(stdout);
        dup2(saved_stdout, STDOUT_FILENO);
        close(saved_stdout);
    }
    if (json)
        print_json(r);
    else
        print_text(r);
    for (int i = 0; i < r->n_rows; i++)
        r->failures += r->rows[i].status == ROW_FAILED;
    status = r->failures ? 1 : 0;
    free(r->rows);
    free(r->images);
    free(r->bridges);
    free(r);
    return fflush(stdout) == 0 && status == 0 ? 0 : 1;
}
