/* SPDX-License-Identifier: MIT */
/* clmem-bench: the CSV. Its first lines, each "# key: value", say what the
 * run ran on and how it was started; then the column names and a row for
 * every row recorded (results.c), in the order measured. */
#include "bench.h"

#include <math.h>

/* "# key: value", the value on one line. */
static void comment(FILE *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void comment(FILE *f, const char *key, const char *fmt, ...)
{
    char value[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    for (char *p = value; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(f, "# %s: %s\n", key, value);
}

bool write_csv(const struct bench *b, const char *path)
{
    const struct machine *m = &b->machine;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return false;
    }
    comment(f, "clmem_version", "%s", clmem_version());
    comment(f, "date", "%s", m->date);
    comment(f, "command", "%s", m->command);
    comment(f, "host", "%s", m->host);
    comment(f, "cpu", "%s, %d online", m->cpu, m->cpus);
    comment(f, "vulkan_device", "%s, index %d, deviceUUID %s", b->vk.device_name, b->vk.device_index,
            m->vk_uuid[0] ? m->vk_uuid : "unknown");
    comment(f, "vulkan_driver", "driverVersion %s, API %s", m->vk_driver, m->vk_api);
    comment(f, "opencl_device", "%s on %s, %s", m->cl_name, m->cl_platform, m->cl_version);
    comment(f, "opencl_driver", "%s", m->cl_driver);
    comment(f, "path", "%s", clmem_bridge_path_name(b->path));
    /* cpu_us_per_frame: empty where the row's measure does not take it */
    fprintf(f, "size_bytes,measure,variant,median_us,min_us,max_us,reps,frames_per_rep,batch,ring,cpu_us_per_frame\n");
    for (int i = 0; i < result_count(); i++) {
        const struct result_row *r = result_at(i);
        char cpu[32] = "";
        if (!isnan(r->cpu_us))
            snprintf(cpu, sizeof cpu, "%.3f", r->cpu_us);
        fprintf(f, "%llu,%s,%s,%.3f,%.3f,%.3f,%d,%d,%d,%d,%s\n", (unsigned long long)r->x, r->measure, r->variant,
                r->s.median, r->s.min, r->s.max, r->s.reps, r->s.frames_per_rep, r->batch, r->ring, cpu);
    }
    return fclose(f) == 0;
}
