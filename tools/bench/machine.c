/* SPDX-License-Identifier: MIT */
/* clmem-bench: what the run ran on and how it was started: the date, the
 * host, the CPU, the Vulkan and OpenCL devices and their drivers, and the
 * command line. The text header, the CSV's first lines and the JSON all
 * print these. */
#include "bench.h"

/* Vulkan's driverVersion: NVIDIA packs it 10.8.8.6, others use VK_MAKE_VERSION. */
static void vk_driver_text(const VkPhysicalDeviceProperties *p, char *buf, size_t len)
{
    uint32_t v = p->driverVersion;
    if (p->vendorID == 0x10de)
        snprintf(buf, len, "%u.%u.%u.%u", v >> 22, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
    else
        snprintf(buf, len, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

static void cl_text(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS)
        snprintf(buf, len, "?");
}

/* /proc/cpuinfo's "model name" (x86) or "Model" (Arm boards), or "unknown". */
static void cpu_name(char *buf, size_t len)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, len, "unknown");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0))
            continue;
        colon += strspn(colon + 1, " \t") + 1;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, len, "%s", colon);
        break;
    }
    if (f)
        fclose(f);
}

/* The command line as a shell would take it back: a word with anything but
 * [A-Za-z0-9,._+:=/-] in single quotes. */
static void command_text(int argc, char **argv, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc && at + 1 < len; i++) {
        const char *a = argv[i];
        bool plain = *a != '\0';
        for (const char *p = a; *p; p++)
            plain = plain && (strchr(",._+:=/-", *p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                              (*p >= '0' && *p <= '9'));
        if (i)
            buf[at++] = ' ';
        if (!plain && at + 1 < len)
            buf[at++] = '\'';
        for (const char *p = a; *p && at + 5 < len; p++) {
            if (!plain && *p == '\'') { /* ' becomes '\'' */
                memcpy(buf + at, "'\\''", 4);
                at += 4;
            } else {
                buf[at++] = *p;
            }
        }
        if (!plain && at + 1 < len)
            buf[at++] = '\'';
        buf[at] = '\0';
    }
}

void describe_machine(struct bench *b, const struct options *o)
{
    struct machine *m = &b->machine;
    time_t t = time(NULL);
    struct tm tm;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    localtime_r(&t, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%S%z", &tm);
    if (gethostname(m->host, sizeof m->host - 1) != 0)
        snprintf(m->host, sizeof m->host, "?");
    cpu_name(m->cpu, sizeof m->cpu);
    m->cpus = cpus < 1 ? 1 : (int)cpus;
    command_text(o->argc, o->argv, m->command, sizeof m->command);
    vk_driver_text(&b->vk_props, m->vk_driver, sizeof m->vk_driver);
    snprintf(m->vk_api, sizeof m->vk_api, "%u.%u.%u", VK_API_VERSION_MAJOR(b->vk_props.apiVersion),
             VK_API_VERSION_MINOR(b->vk_props.apiVersion), VK_API_VERSION_PATCH(b->vk_props.apiVersion));
    if (b->vk.has_device_uuid)
        vkctx_format_uuid(b->vk.device_uuid, m->vk_uuid);
    else
        m->vk_uuid[0] = '\0';
    cl_text(b->device, CL_DEVICE_NAME, m->cl_name, sizeof m->cl_name);
    cl_text(b->device, CL_DRIVER_VERSION, m->cl_driver, sizeof m->cl_driver);
    cl_text(b->device, CL_DEVICE_VERSION, m->cl_version, sizeof m->cl_version);
    if (clGetPlatformInfo(b->platform, CL_PLATFORM_NAME, sizeof m->cl_platform, m->cl_platform, NULL) != CL_SUCCESS)
        snprintf(m->cl_platform, sizeof m->cl_platform, "?");
}
