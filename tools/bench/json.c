/* SPDX-License-Identifier: MIT */
/* clmem-bench --json: the run as one JSON object (the keys: clmem-bench(1),
 * JSON OUTPUT; t/tools/clmem-bench.sh checks them against the output). The rows
 * are the CSV's, with the letter of their measure. */
#include "bench.h"
#include "output.h"

static void json_machine(struct json *j, const struct bench *b)
{
    const struct machine *m = &b->machine;

    json_string(j, "host", m->host);
    json_string(j, "cpu", m->cpu);
    json_int(j, "cpus_online", m->cpus);
    json_open(j, "vulkan", '{');
    json_int(j, "index", b->vk.device_index);
    json_string(j, "name", b->vk.device_name);
    json_string(j, "uuid", m->vk_uuid[0] ? m->vk_uuid : NULL);
    json_string(j, "driver_version", m->vk_driver);
    json_string(j, "api_version", m->vk_api);
    json_bool(j, "validation", b->vk.validation);
    json_close(j, '}');
    json_open(j, "opencl", '{');
    json_string(j, "device", m->cl_name);
    json_string(j, "platform", m->cl_platform);
    json_string(j, "version", m->cl_version);
    json_string(j, "driver_version", m->cl_driver);
    json_bool(j, "cpu_device", b->cpu_device);
    json_string(j, "pairing", b->pair_note);
    json_close(j, '}');
    json_string(j, "path", clmem_bridge_path_name(b->path));
    json_string(j, "path_reason", b->path_note);
    json_string(j, "semaphore_mode", !b->sem_ok ? NULL
                                    : b->sem_mode == CLMEM_BRIDGE_SEMAPHORE_OPAQUE_FD ? "opaque-fd"
                                                                                     : "host-ordered");
    json_string(j, "semaphores", b->sem_note[0] ? b->sem_note : NULL);
}

static void json_rows(struct json *j)
{
    json_open(j, "rows", '[');
    for (int i = 0; i < result_count(); i++) {
        const struct result_row *r = result_at(i);
        json_open(j, NULL, '{');
        json_string(j, "section", r->section);
        json_string(j, "measure", r->measure);
        json_string(j, "variant", r->variant);
        json_int(j, "size_bytes", (long long)r->x);
        json_number(j, "median_us", r->s.median);
        json_number(j, "min_us", r->s.min);
        json_number(j, "max_us", r->s.max);
        json_int(j, "reps", r->s.reps);
        json_int(j, "frames_per_rep", r->s.frames_per_rep);
        json_int(j, "batch", r->batch);
        json_int(j, "ring", r->ring);
        json_number(j, "cpu_us_per_frame", r->cpu_us);
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_targets(struct json *j)
{
    json_open(j, "targets", '[');
    for (int i = 0; i < target_count(); i++) {
        const struct target *t = target_at(i);
        json_open(j, NULL, '{');
        json_string(j, "section", t->section);
        json_string(j, "measure", t->measure);
        json_int(j, "size_bytes", (long long)t->x);
        json_string(j, "target", t->text);
        json_string(j, "set_on", "NVIDIA H200");
        json_bool(j, "relative", t->relative);
        json_int(j, "samples", t->samples);
        json_number(j, "value", t->value);
        json_string(j, "verdict", verdict_key(t->verdict));
        json_string(j, "reason", t->why[0] ? t->why : NULL);
        json_close(j, '}');
    }
    json_close(j, ']');
}

static void json_skipped(struct json *j)
{
    json_open(j, "skipped", '[');
    for (int i = 0; i < skip_count(); i++) {
        const struct result_skip *k = skip_at(i);
        json_open(j, NULL, '{');
        json_string(j, "section", k->section);
        json_string(j, "what", k->what);
        json_string(j, "reason", k->reason);
        json_close(j, '}');
    }
    json_close(j, ']');
}

void write_json(const struct bench *b, FILE *out, double seconds)
{
    struct json j = {.out = out};

    json_open(&j, NULL, '{');
    json_string(&j, "clmem_version", clmem_version());
    json_string(&j, "date", b->machine.date);
    json_string(&j, "command", b->machine.command);
    json_machine(&j, b);
    json_bool(&j, "targets_judged_here", !b->cpu_device);
    json_bool(&j, "absolute_targets_judged_here", !b->cpu_device && on_target_machine(b));
    json_int(&j, "min_verdict_samples", MIN_VERDICT_SAMPLES);
    json_rows(&j);
    json_targets(&j);
    json_skipped(&j);
    json_int(&j, "failures", b->failures);
    json_number(&j, "seconds", seconds);
    json_close(&j, '}');
    fputc('\n', out);
}
