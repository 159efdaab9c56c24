/* SPDX-License-Identifier: MIT */
/* Benchmark of the handle's hot path (not a test; see scripts/bench-handle.sh).
 *
 *   bench-handle             times 10,000,000 clmem_handle_ref + unref pairs,
 *                            5 runs, and prints ns/pair for each and the median
 *   bench-handle --pairs N   does N pairs once, untimed (for callgrind: the
 *                            difference against --pairs 0 is the cost of N)
 *   bench-handle --wraps N   does N clmem_handle_wrap + unref on an anchor,
 *                            untimed (for memcheck's allocation count)
 *
 * The handle wraps a real PoCL buffer and queue; the measured calls never
 * reach OpenCL, so the device does not matter. */
#include "clmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMED_PAIRS 10000000L
#define RUNS 5

/* noinline and out of line so that each mode is one call of a loop whose
 * body is exactly the library calls plus the loop counter. */
static __attribute__((noinline)) void run_pairs(clmem_handle *h, long n)
{
    for (long i = 0; i < n; i++)
        clmem_handle_unref(clmem_handle_ref(h));
}

static __attribute__((noinline)) int run_wraps(cl_mem mem, cl_command_queue queue, clmem_keepalive *ka, long n)
{
    for (long i = 0; i < n; i++) {
        clmem_handle *h;
        if (clmem_handle_wrap(mem, queue, 0, ka, &h) != CLMEM_OK)
            return -1;
        clmem_handle_unref(h);
    }
    return 0;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "bench-handle: %s failed: %d\n", what, (int)err);
    exit(1);
}

static long parse_count(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || n < 0) {
        fprintf(stderr, "bench-handle: not a count: %s\n", s);
        exit(2);
    }
    return n;
}

int main(int argc, char **argv)
{
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_mem mem;
    cl_int err;
    clmem_keepalive *ka;
    clmem_handle *h;
    int status = 0;

    if (!(argc == 1 || (argc == 3 && (strcmp(argv[1], "--pairs") == 0 || strcmp(argv[1], "--wraps") == 0)))) {
        fprintf(stderr, "usage: bench-handle [--pairs N | --wraps N]\n");
        return 2;
    }

    err = clGetPlatformIDs(1, &platform, NULL);
    if (err != CL_SUCCESS)
        die("clGetPlatformIDs", err);
    err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
    if (err != CL_SUCCESS)
        die("clGetDeviceIDs", err);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateContext", err);
    queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateCommandQueueWithProperties", err);
    mem = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
    if (err != CL_SUCCESS)
        die("clCreateBuffer", err);
    ka = clmem_keepalive_new(NULL, NULL);
    if (!ka || clmem_handle_wrap(mem, queue, 0, ka, &h) != CLMEM_OK) {
        fprintf(stderr, "bench-handle: %s\n", clmem_error_message());
        return 1;
    }

    if (argc == 1) {
        double ns[RUNS];
        run_pairs(h, TIMED_PAIRS / 10); /* warm up caches and the branch predictor */
        for (int r = 0; r < RUNS; r++) {
            double t0 = now_ns();
            run_pairs(h, TIMED_PAIRS);
            ns[r] = (now_ns() - t0) / (double)TIMED_PAIRS;
            printf("run %d: %ld ref+unref pairs, %.2f ns/pair\n", r + 1, TIMED_PAIRS, ns[r]);
        }
        qsort(ns, RUNS, sizeof ns[0], compare_double);
        printf("median: %.2f ns per clmem_handle_ref+unref pair\n", ns[RUNS / 2]);
    } else if (strcmp(argv[1], "--pairs") == 0) {
        long n = parse_count(argv[2]);
        run_pairs(h, n);
        printf("did %ld ref+unref pairs\n", n);
    } else {
        long n = parse_count(argv[2]);
        status = run_wraps(mem, queue, ka, n) == 0 ? 0 : 1;
        printf("did %ld wrap+unref\n", n);
    }

    clmem_handle_unref(h);
    clmem_keepalive_unref(ka);
    clReleaseMemObject(mem);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return status;
}
