/* SPDX-License-Identifier: MIT */
/*
 * clmem-bench: what handing Vulkan memory to OpenCL through clmem-bridge
 * costs, against what programs do without it (a staged copy) and against
 * the raw extension calls the bridge makes.
 *
 * The measures run and print in their order, each section whole:
 *   the six buffer measures for each buffer size (4 KiB to 1 GiB by powers of 4; 256 MiB
 *       on a CPU OpenCL device), measures.c: the staged copy, the first
 *       and the cached import, the two handoffs, and the raw calls,
 *       interleaved rep by rep with the clmem runs so that drift hits both
 *       alike; then their tables;
 *   image frames, frames.c;
 *   clmem_handle_unref with a kernel pending, unref.c;
 *   a consumer library in the pipeline (CLBlast), consumer.c;
 *   FFmpeg's Vulkan frames through libclmem-av, ffmpeg-frames.c;
 *   scaling, scaling.c (--scaling-only runs it alone);
 *   (l) FFmpeg's OpenCL filters on Vulkan frames, ffmpeg-cl.c (--ffcl-only
 *       runs it alone);
 *   (x) frames across processes through libclmem-ipc, xproc.c (a second
 *       clmem-bench process consumes them; --xproc-only runs it alone);
 *   then, with --batches, frames in flight through a ring, batch-run.c.
 * Every row measured is recorded (results.c) and every target judged
 * (targets.c); the CSV, the SVG plots and the JSON come from those.
 *
 * The raw variants mirror what bridge/import.c, bridge/handoff.c and
 * bridge/semaphore.c call, so that clmem - raw is the library's own cost.
 * Correctness is checked once per size (the kernel's results as Vulkan sees
 * them); any failure makes the exit status 1.
 *
 * Exit status: 0; 1 a check or a call failed; 2 usage error; 77 no Vulkan or
 * no OpenCL device, so nothing to measure (the automake "skip" code).
 */
#include "bench.h"

static int default_reps(uint64_t size)
{
    return size <= 1 * MIB ? 50 : size <= 16 * MIB ? 30 : size <= 256 * MIB ? 15 : 5;
}

/* Why a size cannot run here, or NULL. Counts the bench's buffers: two
 * shared, one staging, one plain cl buffer. */
static const char *size_unfit(const struct bench *b, uint64_t size, char *why, size_t len)
{
    bool host_path = b->path == CLMEM_BRIDGE_PATH_HOST_MAPPED || b->cpu_device;
    uint64_t host_need = host_path ? 4 * size : size;
    if (size > b->cl_max_alloc)
        snprintf(why, len, "above CL_DEVICE_MAX_MEM_ALLOC_SIZE (%llu MiB)", (unsigned long long)(b->cl_max_alloc / MIB));
    else if (b->vk_max_alloc && size > b->vk_max_alloc)
        snprintf(why, len, "above Vulkan's maxMemoryAllocationSize (%llu MiB)",
                 (unsigned long long)(b->vk_max_alloc / MIB));
    else if (3 * size > b->cl_global_mem / 10 * 9)
        snprintf(why, len, "3 x the size is more than 90%% of the OpenCL device's %llu MiB",
                 (unsigned long long)(b->cl_global_mem / MIB));
    else if (b->host_mem && host_need > b->host_mem / 4 * 3)
        snprintf(why, len, "needs %llu MiB of host memory, more than 75%% of %llu MiB",
                 (unsigned long long)(host_need / MIB), (unsigned long long)(b->host_mem / MIB));
    else
        return NULL;
    return why;
}

/* The scaling measure's reach: the points of its targets on a GPU (N = 10 000, 16 threads
 * where there are 16 CPUs), a few seconds' worth on a CPU OpenCL device, a
 * smoke test with --quick. 10 blocks (windows) a point, so that a target's
 * point has the samples a verdict needs. */
static struct scale_plan scale_plan_for(const struct bench *b, const struct options *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
    struct scale_plan p = {.max_imports = b->cpu_device ? 1000 : 10000,
                           .fresh_hits = b->cpu_device ? 2000 : 10000,
                           .max_threads = threads,
                           .max_queues = 16,
                           .max_batch = 256,
                           .ops = b->cpu_device ? 5000 : 20000,
                           .window_ms = b->cpu_device ? 20 : 50,
                           .blocks = MIN_VERDICT_SAMPLES,
                           .reps = b->cpu_device ? 10 : 20};
    if (o->quick)
        p = (struct scale_plan){.max_imports = 100, .fresh_hits = 200, .max_threads = threads < 2 ? threads : 2,
                                .max_queues = 4, .max_batch = 64, .ops = 500, .window_ms = 5, .blocks = 3,
                                .reps = 3};
    if (o->scale_imports)
        p.max_imports = o->scale_imports;
    if (o->scale_threads)
        p.max_threads = o->scale_threads;
    return p;
}

/* Where the text goes: stdout, or with --json stderr (stdout then holds
 * the JSON only; the validation messenger and some drivers print to
 * stdout too). The fd the JSON goes to, or -1. */
static int text_to_stderr(void)
{
    int saved;
    fflush(stdout);
    saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        die("cannot send the text to standard error for --json");
    return saved;
}

/* The six buffer measures, a size at a time, then their tables. */
static void run_sizes(struct bench *b, const struct options *o, const uint64_t *sizes, int nsizes,
                      struct size_result *results, int *nresults)
{
    char sz[32], why[256];

    printf("\n(a) to (f), one buffer size at a time: microseconds, median [min .. max] of n samples\n");
    for (int i = 0; i < nsizes; i++) {
        struct size_run s = {.size = sizes[i]};
        if (size_unfit(b, sizes[i], why, sizeof why)) {
            printf("\nsize %s: skipped, %s\n", size_text(sizes[i], sz, sizeof sz), why);
            record_skip("a-f", sz, "%s", why);
            continue;
        }
        s.reps = o->reps ? o->reps : o->quick ? 3 : default_reps(sizes[i]);
        /* The import's overhead is a few microseconds on imports that vary
         * by tens: it needs many pairs to be told from noise. */
        s.import_reps = o->reps ? o->reps : o->quick ? 3 : IMPORT_PAIRS;
        s.frames = o->frames;
        s.blocks = o->blocks;
        s.warmup_frames = o->quick ? 2 : WARMUP_FRAMES;
        run_size(b, &s, &results[(*nresults)++]);
        /* Rewritten after every size, so a run that dies later (the
         * watchdog, a failing call) still leaves the sizes it finished. */
        write_csv(b, o->csv);
    }
    print_tables(results, *nresults);
    print_import_overhead(results, *nresults);
}

static bool measured_section(const char *section)
{
    for (int i = 0; i < result_count(); i++)
        if (strcmp(result_at(i)->section, section) == 0)
            return true;
    return false;
}

static void write_plots(const struct bench *b, const struct options *o, bool batches_ran)
{
    char path[4096];
    bool sizes = measured_section("a");
    if (!sizes && !measured_section("x"))
        printf("SVG: none, no buffer size and no frame across processes was measured\n");
    else if (sizes && !write_size_svg(b, o->svg))
        printf("SVG: writing %s failed (the CSV has the data)\n", o->svg);
    else if (sizes)
        printf("SVG: %s\n", o->svg);
    if (measured_section("x")) {
        if (sizes)
            xproc_svg_path(o->svg, path, sizeof path);
        else
            snprintf(path, sizeof path, "%s", o->svg);
        if (write_xproc_svg(b, path))
            printf("SVG: %s (frames across processes: time per frame against the frame's size)\n", path);
        else
            printf("SVG: writing %s failed (the CSV has the data)\n", path);
    }
    if (!batches_ran)
        return;
    batch_svg_path(o->svg, path, sizeof path);
    if (write_batch_svg(b, path))
        printf("SVG: %s (time per frame against batch size)\n", path);
    else
        printf("SVG: writing %s failed (the CSV has the data)\n", path);
}

int main(int argc, char **argv)
{
    static struct bench b;
    struct options o;
    uint64_t sizes[MAX_SIZES] = {0};
    struct size_result *results;
    struct batch_results batches = {0};
    int nsizes = 0, nresults = 0, json_fd = -1;
    double t_start = now_us();

    if (argc > 1 && strcmp(argv[1], XPROC_CHILD_OPTION) == 0)
        return xproc_child_main(argc, argv); /* (x)'s consumer process */
    parse_options(argc, argv, &o);
    if (o.json)
        json_fd = text_to_stderr();
    setup(&b, &o);
    describe_machine(&b, &o);

    /* The sizes: --sizes, or the default ladder up to the cap. */
    if (o.nsizes) {
        for (int i = 0; i < o.nsizes; i++)
            if (!o.max_size || o.sizes[i] <= o.max_size)
                sizes[nsizes++] = o.sizes[i];
    } else {
        uint64_t cap = o.max_size ? o.max_size : b.cpu_device ? CPU_DEFAULT_CAP : GPU_DEFAULT_CAP;
        if (o.quick) {
            static const uint64_t quick[] = {4 * KIB, 1 * MIB, 16 * MIB};
            for (int i = 0; i < 3; i++)
                if (quick[i] <= cap)
                    sizes[nsizes++] = quick[i];
        } else {
            for (uint64_t s = 4 * KIB; s <= cap && s <= 4 * GIB && nsizes < MAX_SIZES; s *= 4)
                sizes[nsizes++] = s;
        }
    }
    print_header(&b, &o, sizes, nsizes);

    results = calloc((size_t)(nsizes ? nsizes : 1), sizeof *results);
    if (!results)
        die("out of memory");
    /* The --*-only options combine: each names a part to run, and with none
     * of them every part runs. */
    bool only = o.scaling_only || o.xproc_only || o.ffcl_only;
    if (!only) {
        run_sizes(&b, &o, sizes, nsizes, results, &nresults);
        run_frames(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : 20);
        print_frames();
        write_csv(&b, o.csv); /* as after a size: the frames survive a later part that dies */
        run_unref(&b, o.quick ? 20 : 200);
        print_unref();
        run_consumer(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : b.cpu_device ? 5 : 20);
        print_consumer();
        run_ffmpeg_frames(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : b.cpu_device ? 5 : 20);
        print_ffmpeg_frames();
        write_csv(&b, o.csv);
    }
    if (!only || o.scaling_only) {
        struct scale_plan plan = scale_plan_for(&b, &o);
        run_scaling(&b, &plan);
        print_scaling();
    }
    if (!only || o.ffcl_only) {
        run_ffmpeg_cl(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : b.cpu_device ? 5 : 20);
        print_ffmpeg_cl();
        write_csv(&b, o.csv);
    }
    if (!only || o.xproc_only) {
        run_xproc(&b, o.quick, o.frames, o.blocks);
        print_xproc(&b);
    }
    if (o.nbatches && !only) {
        run_batches(&b, &o, &batches);
        print_batch_table(&batches);
    }
    printf("\n");
    if (write_csv(&b, o.csv))
        printf("CSV: %s\n", o.csv);
    else
        fail(&b, "writing the CSV %s failed", o.csv);
    write_plots(&b, &o, batches.ran);

    semaphores_teardown(&b);
    /* Before vkDestroyDevice (vkctx_close): nothing of either bridge may
     * still hold Vulkan memory. */
    {
        clmem_bridge *bridges[2] = {b.bridge, b.bridge_uncached};
        for (int i = 0; i < 2; i++) {
            clmem_status st = clmem_bridge_finish(bridges[i], FINISH_TIMEOUT_NS);
            if (st != CLMEM_OK)
                fail(&b, "clmem_bridge_finish (%s bridge) before vkDestroyDevice returned %s: %s",
                     i == 0 ? "cached" : "uncached", clmem_status_name(st), clmem_error_message());
            clmem_bridge_unref(bridges[i]);
        }
        b.bridge = b.bridge_uncached = NULL;
    }
    for (int v = V_CLMEM; v <= V_RAW; v++)
        clReleaseKernel(b.kernel[v]);
    clReleaseProgram(b.program);
    clReleaseCommandQueue(b.queue);
    clReleaseContext(b.context);
    if (b.vk.validation && vkctx_validation_errors())
        fail(&b, "%u Vulkan validation errors (printed above)", vkctx_validation_errors());
    vkctx_close(&b.vk);
    free(results);
    free(batches.points);

    printf("total %.1f s; %s\n", (now_us() - t_start) / 1e6,
           b.failures ? "SOME CHECKS FAILED" : "all correctness checks passed");
    if (json_fd >= 0) {
        FILE *out;
        fflush(stdout);
        if (dup2(json_fd, STDOUT_FILENO) < 0)
            die("cannot write the JSON to standard output");
        close(json_fd);
        out = stdout;
        write_json(&b, out, (now_us() - t_start) / 1e6);
        if (fflush(out) != 0)
            b.failures++;
    }
    results_free();
    return b.failures ? 1 : 0;
}
