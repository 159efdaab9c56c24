/* SPDX-License-Identifier: MIT */
/* clmem-info: --help and the command line. */
#include "config.h"

#include "info.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: clmem-info [--json] [--size BYTES]\n"
               "\n"
               "List the OpenCL and Vulkan devices and what they offer for sharing memory,\n"
               "pair them, and run every supported sharing path (opaque-fd, dma-buf,\n"
               "host-mapped) live: Vulkan fills a buffer, OpenCL transforms it in place,\n"
               "Vulkan reads it back and every word is checked. On each supported path,\n"
               "each image format is checked live too: plane buffers, image2d views and\n"
               "optimal tiling (the bridge's live check).\n"
               "\n"
               "  --json        print JSON instead of text\n"
               "  --size BYTES  bytes per live round trip, a multiple of 4 (default %u)\n"
               "  --help        print this help\n"
               "\n"
               "Environment: CLMEM_VK_DEVICE=INDEX, =UUID (32 hex digits, dashes optional)\n"
               "or =NAME (a substring) checks only the Vulkan device it names.\n"
               "\n"
               "Exit status: 0 when every live check passed (unsupported paths are not\n"
               "failures), 1 when one failed, a Vulkan device could not be opened or\n"
               "CLMEM_VK_DEVICE names none, 2 on a usage error.\n",
            DEFAULT_SIZE);
}

static bool parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || *s < '0' || *s > '9') /* strtoull would accept "-4" */
        return false;
    v = strtoull(s, &end, 10);
    if (*end != '\0' || v == 0 || v % 4 != 0 || v > SIZE_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

/* 0 to go on, or the exit status for main. */
int parse_args(int argc, char **argv, bool *json, size_t *size)
{
    for (int i = 1; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(argv[i], "--json") == 0) {
            *json = true;
            continue;
        } else if (strcmp(argv[i], "--size") == 0) {
            value = i + 1 < argc ? argv[++i] : NULL;
        } else if (strncmp(argv[i], "--size=", 7) == 0) {
            value = argv[i] + 7;
        } else {
            fprintf(stderr, "clmem-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (!parse_size(value, size)) {
            fprintf(stderr, "clmem-info: --size needs a positive multiple of 4 bytes, not '%s'\n",
                    value ? value : "");
            return 2;
        }
    }
    return 0;
}
