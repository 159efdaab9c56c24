/*
 * clmem-bench: what handing Vulkan memory to OpenCL through clmem-bridge
 * costs, against what programs do without it (a staged copy) and against
 * the raw extension calls the bridge makes.
 *
 * For each buffer size (4 KiB to 1 GiB by powers of 4; 256 MiB on a CPU
 * OpenCL device) it prints the median and the min..max, in microseconds, of
 *   (a) staged copy: Vulkan copies its buffer into a HOST_VISIBLE staging
 *       buffer (vkCmdCopyBuffer + vkQueueWaitIdle), then
 *       clEnqueueWriteBuffer(blocking) into a plain cl buffer;
 *   (b) first import: clmem_bridge_import_vk on a bridge made with
 *       CLMEM_BRIDGE_NO_IMPORT_CACHE (each rep a new driver import); the
 *       unref and the teardown it starts (clmem_bridge_finish) untimed;
 *   (c) cached import: a second clmem_bridge_import_vk of memory that has a
 *       live import, with the cache on;
 *   (d) per-frame handoff with host waits: Vulkan fills word 0,
 *       vkQueueWaitIdle, acquire, a one-work-item kernel, release, clFinish;
 *   (e) the same handoff ordered by two binary semaphores, no host wait in
 *       the loop: total time of K frames / K;
 * Both bridges are made once, before any timing, on the bench's context.
 * and (f) (b), (d), (e) once more through the raw calls with no library,
 * interleaved rep by rep with the clmem runs so that drift hits both alike.
 * Then (g) image frames (1920x1080 and 3840x2160, RGBA8 and NV12, linear
 * VkImages): a staged copy (vkCmdCopyImageToBuffer, then host writes into
 * OpenCL) against the zero-copy handoff of the plane handles
 * (clmem_bridge_import_vk_image), interleaved rep by rep.
 * Then (h) clmem_handle_unref while a kernel on the memory is pending
 * (target: under 1 ms each, tools/bench/unref.c).
 * Then (k) scaling: how a cache hit's cost grows with the live imports and
 * the re-imports, hits and handle references with threads, the last unref
 * with queues, and acquire_many with its count (tools/bench/scaling.c;
 * --scaling-only runs it alone).
 * Then (i) a consumer library in the pipeline (tools/bench/consumer.c,
 * with CLBlast only): Vulkan holds A and B, CLBlast SGEMM, Vulkan gets C,
 * staged against zero-copy against the floor (plain OpenCL buffers).
 * Then (j) FFmpeg's Vulkan frames (tools/bench/ffmpeg-frames.c, with
 * libclmem-av only): NV12 frames downloaded, written, read and uploaded
 * again against clmem_av_frame_acquire and release.
 * Then (x) frames across processes (tools/bench/xproc.c, with libclmem-ipc
 * only; --xproc-only runs it alone): a second clmem-bench process consumes
 * them, against the same frames in one process and a copy through /dev/shm.
 * Then the ratios (a)/(d), (a)/(e) and clmem vs raw, a CSV and, when
 * gnuplot is on PATH, a PNG.
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

/* (k)'s reach: the figures on a GPU (N = 10 000, 16 threads), a
 * few seconds' worth on a CPU OpenCL device, a smoke test with --quick. */
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
                           .blocks = 5,
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

int main(int argc, char **argv)
{
    static struct bench b;
    struct options o;
    uint64_t sizes[MAX_SIZES] = {0};
    struct size_result *results;
    struct batch_results batches = {0};
    int nsizes = 0, nresults = 0;
    double t_start = now_us();
    char sz[32], why[256];

    if (argc > 1 && strcmp(argv[1], XPROC_CHILD_OPTION) == 0)
        return xproc_child_main(argc, argv); /* (x)'s consumer process */
    parse_options(argc, argv, &o);
    setup(&b, &o);

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
    for (int i = 0; i < nsizes && !o.scaling_only && !o.xproc_only; i++) {
        struct size_run s = {.size = sizes[i]};
        if (size_unfit(&b, sizes[i], why, sizeof why)) {
            printf("\nsize %s: skipped, %s\n", size_text(sizes[i], sz, sizeof sz), why);
            continue;
        }
        s.reps = o.reps ? o.reps : o.quick ? 3 : default_reps(sizes[i]);
        /* The import's overhead is a few microseconds on imports that vary
         * by tens: it needs many pairs to be told from noise. */
        s.import_reps = o.reps ? o.reps : o.quick ? 3 : IMPORT_PAIRS;
        s.frames = o.frames;
        s.blocks = o.blocks;
        s.warmup_frames = o.quick ? 2 : WARMUP_FRAMES;
        run_size(&b, &s, &results[nresults++]);
        /* Rewritten after every size, so a run that dies later (the
         * watchdog, a failing call) still leaves the sizes it finished. */
        write_csv(o.csv, results, nresults, NULL);
    }

    if (!o.scaling_only && !o.xproc_only) {
        run_frames(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : 20);
        write_csv(o.csv, results, nresults, NULL); /* as after a size: the frames survive a batch run that dies */
        run_unref(&b, o.quick ? 20 : 200);
        run_consumer(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : b.cpu_device ? 5 : 20);
        run_ffmpeg_frames(&b, o.quick, o.reps ? o.reps : o.quick ? 3 : b.cpu_device ? 5 : 20);
        write_csv(o.csv, results, nresults, NULL);
    }
    if (!o.scaling_only)
        run_xproc(&b, o.quick, o.frames, o.blocks);
    if (!o.xproc_only) {
        struct scale_plan plan = scale_plan_for(&b, &o);
        run_scaling(&b, &plan);
    }
    if (!o.scaling_only && !o.xproc_only) {
        print_tables(results, nresults);
        print_import_overhead(results, nresults);
        print_frames();
        print_unref();
        print_consumer();
        print_ffmpeg_frames();
    }
    if (!o.scaling_only)
        print_xproc();
    if (!o.xproc_only)
        print_scaling();
    if (o.nbatches && !o.scaling_only && !o.xproc_only) {
        run_batches(&b, &o, &batches);
        print_batch_table(&batches);
    }
    if (write_csv(o.csv, results, nresults, &batches))
        printf("\nCSV: %s\n", o.csv);
    else
        fail(&b, "writing the CSV %s failed", o.csv);
    if (!on_path("gnuplot"))
        printf("PNG: skipped, gnuplot is not on PATH (scripts/bench-plot.sh plots the CSV elsewhere)\n");
    else if (o.scaling_only || o.xproc_only)
        printf("PNG: none for --%s\n", o.scaling_only ? "scaling-only" : "xproc-only");
    else if (write_png(&b, o.png, results, nresults))
        printf("PNG: %s\n", o.png);
    else
        printf("PNG: gnuplot failed, no plot written (the CSV has the data)\n");
    if (batches.ran && on_path("gnuplot")) {
        char png[4096];
        batch_png_path(o.png, png, sizeof png);
        if (write_batch_png(&b, png, &batches))
            printf("PNG: %s (time per frame against batch size)\n", png);
        else
            printf("PNG: gnuplot failed on the batch plot (the CSV has the data)\n");
    }

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
    return b.failures ? 1 : 0;
}
