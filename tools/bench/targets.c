/* SPDX-License-Identifier: MIT */
/* clmem-bench: targets and their verdicts.
 *
 * Every target was set on an NVIDIA H200 (with NVIDIA's Vulkan and OpenCL
 * drivers, on the opaque-fd path). A target that compares two figures of
 * the same run (the library against raw, a route against another, one
 * process against two, D = 4 against D = 1) holds on any GPU and is judged
 * on any; a target in absolute time is judged only on the GPU it was set
 * on. A target is judged (met, missed, or can't tell when the samples'
 * interval straddles it) only at the point it names, from enough samples,
 * on a GPU; otherwise its verdict says which does not hold:
 *   not applicable   the run did not reach the target's point (a 2-core
 *                    machine's threads stop at T = 2, the target is at
 *                    T = 16);
 *   too few samples  fewer than MIN_VERDICT_SAMPLES behind the value;
 *   not judged       a CPU OpenCL device (PoCL): its times are the host's
 *                    threads, not a GPU's, and no target speaks of them;
 *   not judged here  a target in absolute time, not on an H200. */
#include "bench.h"

#include <math.h>

#define MAX_TARGETS 128
static struct target targets[MAX_TARGETS];
static int ntargets;

/* From the device's properties, which the bench keeps: the JSON is written
 * after the Vulkan context (and its copy of the name) is closed. */
const char cpu_device_not_judged[] =
    "the OpenCL device is a CPU: its times are the host's threads, not a GPU's, so no target is judged";

bool on_target_machine(const struct bench *b)
{
    return b->vk_props.vendorID == 0x10de && strstr(b->vk_props.deviceName, "H200") != NULL;
}

const struct target *record_target(const struct bench *b, const struct target_spec *spec, bool reached,
                                   const char *not_reached, int samples, double value, enum verdict outcome)
{
    struct target *t;
    if (ntargets == MAX_TARGETS)
        die("more than %d targets", MAX_TARGETS);
    t = &targets[ntargets++];
    snprintf(t->section, sizeof t->section, "%s", spec->section);
    snprintf(t->measure, sizeof t->measure, "%s", spec->measure);
    snprintf(t->text, sizeof t->text, "%s", spec->text);
    t->x = spec->x;
    t->relative = spec->relative;
    t->samples = samples;
    t->value = reached ? value : NAN;
    if (!reached) {
        t->verdict = VERDICT_NOT_REACHED;
        snprintf(t->why, sizeof t->why, "%s", not_reached);
    } else if (samples < MIN_VERDICT_SAMPLES) {
        t->verdict = VERDICT_TOO_FEW;
        snprintf(t->why, sizeof t->why, "n = %d; a verdict needs %d", samples, MIN_VERDICT_SAMPLES);
    } else if (b->cpu_device) {
        t->verdict = VERDICT_CPU_DEVICE;
        snprintf(t->why, sizeof t->why, "%s", cpu_device_not_judged);
    } else if (!spec->relative && !on_target_machine(b)) {
        t->verdict = VERDICT_ELSEWHERE;
        snprintf(t->why, sizeof t->why, "set on an NVIDIA H200; this is %s", b->vk_props.deviceName);
    } else {
        t->verdict = outcome;
        t->why[0] = '\0';
    }
    return t;
}

int target_count(void)
{
    return ntargets;
}

const struct target *target_at(int i)
{
    return &targets[i];
}

/* The JSON's word for a verdict. */
const char *verdict_key(enum verdict v)
{
    static const char *const key[] = {
        "met", "missed", "cant_tell", "too_few_samples", "not_applicable", "not_judged_here", "not_judged_cpu_device"};
    return key[v];
}

/* The text's: "met", or "too few samples (n = 3; a verdict needs 10)";
 * on a CPU device only "not judged": the header says why, once. */
const char *verdict_text(const struct target *t, char *buf, size_t len)
{
    static const char *const word[] = {
        "met", "missed", "can't tell", "too few samples", "not applicable", "not judged here", "not judged"};
    if (t->why[0] && t->verdict != VERDICT_CPU_DEVICE)
        snprintf(buf, len, "%s (%s)", word[t->verdict], t->why);
    else
        snprintf(buf, len, "%s", word[t->verdict]);
    return buf;
}

/* The line that follows a table of measures with targets. */
void print_target_line(const struct target *t)
{
    char v[512];
    printf("  target (%s): %s: %s\n", t->relative ? "any GPU" : "H200 only", t->text, verdict_text(t, v, sizeof v));
}
