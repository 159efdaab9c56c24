/* SPDX-License-Identifier: MIT */
/* clmem-bench: the command line: --help and the options. */
#include "bench.h"

/* "4096", "4K", "4KiB", "16M", "1G" (binary units). 0 when not a size. */
static uint64_t parse_size(const char *text)
{
    char *end;
    unsigned long long n;
    uint64_t unit = 1;

    if (!text || *text < '0' || *text > '9')
        return 0;
    n = strtoull(text, &end, 10);
    switch (*end) {
    case 'k': case 'K': unit = KIB; end++; break;
    case 'm': case 'M': unit = MIB; end++; break;
    case 'g': case 'G': unit = GIB; end++; break;
    default: break;
    }
    if (unit != 1 && strcasecmp(end, "iB") == 0)
        end += 2;
    if (strcasecmp(end, "B") == 0)
        end++;
    if (*end != '\0' || n == 0 || n > UINT64_MAX / unit)
        return 0;
    return (uint64_t)n * unit;
}

static int parse_count(const char *text, const char *option)
{
    char *end;
    long n = text ? strtol(text, &end, 10) : 0;
    if (!text || *text == '\0' || *end != '\0' || n < 1 || n > 1000000) {
        fprintf(stderr, "clmem-bench: %s takes a count from 1 to 1000000, not '%s'\n", option, text ? text : "");
        exit(2);
    }
    return (int)n;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: clmem-bench [OPTION]...\n"
            "Measure what handing Vulkan memory to OpenCL through clmem-bridge costs, against a staged copy\n"
            "through the host and against the raw extension calls. The measures, in the order they run and print:\n"
            "  (a) staged copy: Vulkan copies a buffer to the host, OpenCL takes it from there (per buffer size)\n"
            "  (b) first import: clmem_bridge_import_vk of a buffer with no import yet (per size)\n"
            "  (c) cached import: importing memory that has a live import, answered by the cache (per size)\n"
            "  (d) handoff with host waits: Vulkan writes a frame, an OpenCL kernel uses it (per size)\n"
            "  (e) handoff with semaphores: the same frames ordered by semaphores, no host wait (per size)\n"
            "  (f) raw: (b), (d) and (e) through the same driver calls without the library\n"
            "  (g) image frames: 1920x1080 and 3840x2160 RGBA8 and NV12, staged copy against zero-copy\n"
            "  (h) clmem_handle_unref while a kernel on the memory is still pending\n"
            "  (i) a consumer library: CLBlast SGEMM on Vulkan's matrices, staged, zero-copy, plain OpenCL\n"
            "  (j) FFmpeg's Vulkan frames into an OpenCL kernel: staged against libclmem-av\n"
            "  (k) scaling: costs against live imports, threads, queues and acquire_many's count\n"
            "  (l) FFmpeg's OpenCL filters (avgblur_opencl) on Vulkan frames: download + upload against\n"
            "      clmem_av_cl_map and a resident frame, and mapped frames in flight\n"
            "  (x) frames across processes: libclmem-ipc and the same protocol's raw calls, against one\n"
            "      process and a copy through /dev/shm, with the CPU time a frame\n"
            "  then, with --batches or --quick: frames in flight through a frame ring\n"
            "\n"
            "  --sizes A,B,...    buffer sizes (4096, 4K, 16M, 1G; binary units), instead of\n"
            "                     4K to 1G by powers of 4\n"
            "  --max-size BYTES   largest default size (default: 256M on a CPU OpenCL device,\n"
            "                     1G otherwise; 4G adds the 4 GiB size where memory allows)\n"
            "  --reps N           reps of (a), (b), (c) (default: 50 up to 1M, 30 up to 16M,\n"
            "                     15 up to 256M, 5 above; (b) and raw (b): 200 pairs at every size)\n"
            "  --frames K         frames of (d) and per block of (e) (default %d)\n"
            "  --blocks N         timed blocks of (e), and of each --batches configuration, per\n"
            "                     variant (default %d)\n"
            "  --batches K,...    also measure frames in flight (clmem_bridge_ring) for each batch size K\n"
            "                     (1 to %d; e.g. 1,2,4,8,16): per frame, for each ring size and handoff\n"
            "                     (semaphores, host waits, transfer queue where a transfer-only queue\n"
            "                     family exists), against the same raw calls and the staged copy\n"
            "  --ring-sizes D,... ring sizes for --batches: batches in flight, N = K x D frames\n"
            "                     (default 2,3,4; 1 to %d)\n"
            "  --batch-frame-size BYTES  the frames of --batches (default: 256M, 1M on a CPU OpenCL\n"
            "                     device, 4K with --quick)\n"
            "  --quick            a smoke test: sizes 4K, 1M, 16M, 3 reps, 20 frames, 2 blocks, and a\n"
            "                     batch run (batches 1,4, ring size 2) unless --batches says otherwise\n"
            "  --scaling-only     run only (k)\n"
            "  --scale-imports N  (k)'s largest count of live imports (default 10000; 1000 on a CPU\n"
            "                     OpenCL device; 100 with --quick)\n"
            "  --scale-threads T  (k)'s largest thread count (default: the online CPUs, at most 16;\n"
            "                     at most 2 with --quick; up to 64)\n"
            "  --xproc-only       run only (x), frames across processes (libclmem-ipc): a second\n"
            "                     clmem-bench process consumes them; against the same frames in one\n"
            "                     process and a copy through /dev/shm\n"
            "  --ffcl-only        run only (l), FFmpeg's OpenCL filters on Vulkan frames\n"
            "                     (the --*-only options combine: --ffcl-only --xproc-only runs both)\n"
            "  --csv FILE         where the CSV goes (default clmem-bench.csv)\n"
            "  --svg FILE         where the plot goes (default clmem-bench.svg; the batch run's and\n"
            "                     (x)'s plots go beside it, clmem-bench-batches.svg and\n"
            "                     clmem-bench-xproc.svg; with --xproc-only (x)'s goes to FILE)\n"
            "  --json             print the results as one JSON object on standard output; the text\n"
            "                     report goes to standard error\n"
            "  --validate         enable the Vulkan validation layer (off by default: it slows Vulkan calls)\n"
            "  --help             this text\n"
            "\n"
            "Targets were set on an NVIDIA H200. Those that compare two figures of the same run (the\n"
            "library against raw, one route against another) are judged (met, missed, can't tell) on\n"
            "any GPU, those in absolute time on an H200 only; each at the point it names, from at least\n"
            "%d samples. On a CPU OpenCL device none is judged.\n"
            "The CSV's and the JSON's columns and keys: clmem-bench(1).\n"
            "\n"
            "Environment: CLMEM_VK_DEVICE picks the Vulkan device: an index (all digits), a deviceUUID\n"
            "(32 hex digits, dashes optional) or a substring of its name.\n"
            "Exit status: 0; 1 when a check or a call failed; 2 usage error; 77 no Vulkan or\n"
            "OpenCL device (nothing to measure).\n",
            DEFAULT_FRAMES, DEFAULT_BLOCKS, MAX_BATCH, MAX_RING, MIN_VERDICT_SAMPLES);
}

static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    if (strncmp(argv[*i], name, len) != 0)
        return NULL;
    if (argv[*i][len] == '=')
        return argv[*i] + len + 1;
    if (argv[*i][len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "clmem-bench: %s needs a value\n", name);
        exit(2);
    }
    return argv[++*i];
}

/* "1,2,4": counts from 1 to max, at most cap of them. */
static int parse_list(const char *text, const char *option, int max, int *out, int cap)
{
    char list[256], *save = NULL;
    int n = 0;
    snprintf(list, sizeof list, "%s", text);
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(t, &end, 10);
        if (*t == '\0' || *end != '\0' || v < 1 || v > max || n == cap) {
            fprintf(stderr, "clmem-bench: %s takes up to %d counts from 1 to %d, comma-separated, not '%s'\n", option,
                    cap, max, text);
            exit(2);
        }
        out[n++] = (int)v;
    }
    if (n == 0) {
        fprintf(stderr, "clmem-bench: %s needs at least one count\n", option);
        exit(2);
    }
    return n;
}

void parse_options(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    o->argc = argc;
    o->argv = argv;
    o->csv = "clmem-bench.csv";
    o->svg = "clmem-bench.svg";
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(argv[i], "--validate") == 0) {
            o->validate = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if ((v = option_value(argc, argv, &i, "--sizes"))) {
            char list[1024], *save = NULL;
            snprintf(list, sizeof list, "%s", v);
            o->nsizes = 0;
            for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                uint64_t sz = parse_size(t);
                /* 8 bytes: the kernel uses words 0 and 1; multiples of 4: vkCmdFillBuffer */
                if (sz < 8 || sz % 4 || o->nsizes == MAX_SIZES) {
                    fprintf(stderr, "clmem-bench: --sizes: '%s' is not a size of at least 8 bytes, a multiple "
                                    "of 4 (or more than %d sizes)\n",
                            t, MAX_SIZES);
                    exit(2);
                }
                o->sizes[o->nsizes++] = sz;
            }
            if (o->nsizes == 0) {
                fprintf(stderr, "clmem-bench: --sizes needs at least one size\n");
                exit(2);
            }
        } else if ((v = option_value(argc, argv, &i, "--max-size"))) {
            if (!(o->max_size = parse_size(v))) {
                fprintf(stderr, "clmem-bench: --max-size: '%s' is not a size\n", v);
                exit(2);
            }
        } else if ((v = option_value(argc, argv, &i, "--reps"))) {
            o->reps = parse_count(v, "--reps");
        } else if ((v = option_value(argc, argv, &i, "--frames"))) {
            o->frames = parse_count(v, "--frames");
        } else if ((v = option_value(argc, argv, &i, "--blocks"))) {
            o->blocks = parse_count(v, "--blocks");
        } else if ((v = option_value(argc, argv, &i, "--batches"))) {
            o->nbatches = parse_list(v, "--batches", MAX_BATCH, o->batches, 16);
        } else if ((v = option_value(argc, argv, &i, "--ring-sizes"))) {
            o->nrings = parse_list(v, "--ring-sizes", MAX_RING, o->rings, 8);
        } else if ((v = option_value(argc, argv, &i, "--batch-frame-size"))) {
            if ((o->batch_frame_size = parse_size(v)) < 8 || o->batch_frame_size % 4) {
                fprintf(stderr, "clmem-bench: --batch-frame-size: '%s' is not a size of at least 8 bytes, a "
                                "multiple of 4\n",
                        v);
                exit(2);
            }
        } else if (strcmp(argv[i], "--scaling-only") == 0) {
            o->scaling_only = true;
        } else if (strcmp(argv[i], "--xproc-only") == 0) {
            o->xproc_only = true;
        } else if (strcmp(argv[i], "--ffcl-only") == 0) {
            o->ffcl_only = true;
        } else if ((v = option_value(argc, argv, &i, "--scale-imports"))) {
            o->scale_imports = parse_count(v, "--scale-imports");
        } else if ((v = option_value(argc, argv, &i, "--scale-threads"))) {
            if ((o->scale_threads = parse_count(v, "--scale-threads")) > 64) {
                fprintf(stderr, "clmem-bench: --scale-threads takes 1 to 64, not %s\n", v);
                exit(2);
            }
        } else if ((v = option_value(argc, argv, &i, "--csv"))) {
            o->csv = v;
        } else if ((v = option_value(argc, argv, &i, "--svg"))) {
            o->svg = v;
        } else {
            fprintf(stderr, "clmem-bench: unknown option '%s' (try --help)\n", argv[i]);
            exit(2);
        }
    }
    if (!o->frames)
        o->frames = o->quick ? 20 : DEFAULT_FRAMES;
    if (!o->blocks)
        o->blocks = o->quick ? 2 : DEFAULT_BLOCKS;
    /* --quick includes a small batch run; otherwise --batches asks for one. */
    if (!o->nbatches && o->quick) {
        o->batches[o->nbatches++] = 1;
        o->batches[o->nbatches++] = 4;
    }
    if (o->nbatches && !o->nrings) {
        if (o->quick) {
            o->rings[o->nrings++] = 2;
        } else {
            for (int d = 2; d <= 4; d++)
                o->rings[o->nrings++] = d;
        }
    }
}
