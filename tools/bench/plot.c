/* clmem-bench: the plots, through gnuplot when it is on PATH. */
#include "bench.h"

bool on_path(const char *program)
{
    const char *path = getenv("PATH");
    char dir[4096];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + strlen(program) + 2 < sizeof dir) {
            memcpy(dir, path, len);
            snprintf(dir + len, sizeof dir - len, "/%s", program);
            if (access(dir, X_OK) == 0)
                return true;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return false;
}

/* A gnuplot single-quoted string: a quote is written twice. */
static void gp_quoted(FILE *gp, const char *s)
{
    fputc('\'', gp);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', gp);
        fputc(*s, gp);
    }
    fputc('\'', gp);
}

/* gnuplot, writing a 1200x750 PNG to png (pngcairo where it has it); the
 * caller goes on with a newline. NULL when gnuplot cannot be started. */
static FILE *gp_open(const char *png)
{
    FILE *gp = popen("gnuplot", "w");

    if (!gp)
        return NULL;
    fprintf(gp, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1200,750 } "
                "else { set terminal png size 1200,750 }\n");
    fprintf(gp, "set output ");
    gp_quoted(gp, png);
    return gp;
}

bool write_png(const struct bench *b, const char *png, const struct size_result *res, int n)
{
    static const struct {
        enum measure m;
        enum variant v;
        const char *title;
        const char *style;
    } series[] = {
        {M_STAGED, V_BASE, "(a) staged copy", "using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#9400d3'"},
        {M_IMPORT, V_CLMEM, "(b) first import", "using 1:2:3:4 with yerrorlines lw 2 pt 5 lc rgb '#009e73'"},
        {M_CACHED, V_CLMEM, "(c) cached import", "using 1:2:3:4 with yerrorlines lw 2 pt 9 lc rgb '#56b4e9'"},
        {M_WAIT, V_CLMEM, "(d) handoff, host waits (per frame)", "using 1:2:3:4 with yerrorlines lw 2 pt 11 lc rgb '#e69f00'"},
        {M_SEM, V_CLMEM, "(e) handoff, semaphores (per frame)", "using 1:2:3:4 with yerrorlines lw 2 pt 13 lc rgb '#d55e00'"},
        {M_IMPORT, V_RAW, "(b) raw", "using 1:2 with lines dt 2 lw 1 lc rgb '#009e73'"},
        {M_WAIT, V_RAW, "(d) raw", "using 1:2 with lines dt 2 lw 1 lc rgb '#e69f00'"},
        {M_SEM, V_RAW, "(e) raw", "using 1:2 with lines dt 2 lw 1 lc rgb '#d55e00'"},
    };
    const int nseries = (int)(sizeof series / sizeof series[0]);
    char title[1024], sz[32];
    bool first = true;
    int status;
    FILE *gp = gp_open(png);

    if (!gp)
        return false;
    snprintf(title, sizeof title, "clmem-bench: Vulkan %s + OpenCL device, %s path", b->vk.device_name,
             clmem_bridge_path_name(b->path));
    fprintf(gp, "\nset title ");
    gp_quoted(gp, title);
    fprintf(gp, "\nset logscale xy\nset grid\nset key below\n"
                "set xlabel 'buffer size'\nset ylabel 'microseconds (median; bars: min..max)'\nset xtics (");
    for (int i = 0; i < n; i++)
        fprintf(gp, "%s'%s' %llu", i ? ", " : "", size_text(res[i].size, sz, sizeof sz),
                (unsigned long long)res[i].size);
    fprintf(gp, ")\n");
    for (int k = 0; k < nseries; k++) {
        fprintf(gp, "$s%d << EOD\n", k);
        for (int i = 0; i < n; i++) {
            const struct summary *x = &res[i].s[series[k].m][series[k].v];
            if (x->have)
                fprintf(gp, "%llu %.3f %.3f %.3f\n", (unsigned long long)res[i].size, x->median, x->min, x->max);
        }
        fprintf(gp, "EOD\n");
    }
    fprintf(gp, "plot");
    for (int k = 0; k < nseries; k++) {
        bool any = false;
        for (int i = 0; i < n; i++)
            any = any || res[i].s[series[k].m][series[k].v].have;
        if (!any) /* gnuplot stops on an empty series */
            continue;
        fprintf(gp, "%s $s%d %s title ", first ? "" : ",", k, series[k].style);
        gp_quoted(gp, series[k].title);
        first = false;
    }
    fprintf(gp, "\n");
    status = pclose(gp);
    return !first && status == 0;
}

/* "x.png" -> "x-batches.png" */
void batch_png_path(const char *png, char *out, size_t len)
{
    size_t n = strlen(png);
    if (n > 4 && strcmp(png + n - 4, ".png") == 0)
        snprintf(out, len, "%.*s-batches.png", (int)(n - 4), png);
    else
        snprintf(out, len, "%s-batches.png", png);
}

/* Microseconds per frame against batch size: one line per handoff, ring
 * size and variant (raw dashed), the staged copy of a frame flat. */
bool write_batch_png(const struct bench *b, const char *png, const struct batch_results *r)
{
    static const char *const colour[H_COUNT] = {"#d55e00", "#e69f00", "#0072b2"};
    char title[1024], sz[32];
    bool first = true;
    int nseries = 0, status;
    FILE *gp = gp_open(png);

    if (!gp)
        return false;
    snprintf(title, sizeof title, "clmem-bench: frames in flight, Vulkan %s, %s frames of %s", b->vk.device_name,
             clmem_bridge_path_name(b->path), size_text(r->frame_size, sz, sizeof sz));
    fprintf(gp, "\nset title ");
    gp_quoted(gp, title);
    fprintf(gp, "\nset logscale xy 2\nset grid\nset key below\n"
                "set xlabel 'batch size (frames per semaphore signal and wait)'\n"
                "set ylabel 'microseconds per frame (median; bars: min..max)'\n");
    for (int h = 0; h < H_COUNT; h++)
        for (int v = V_CLMEM; v <= V_RAW; v++)
            for (int ring = 1; ring <= MAX_RING; ring++) {
                bool any = false;
                for (int i = 0; i < r->npoints; i++)
                    any = any || (r->points[i].ring == ring && r->points[i].s[h][v].have);
                if (!any)
                    continue;
                fprintf(gp, "$s%d << EOD\n", nseries++);
                for (int i = 0; i < r->npoints; i++)
                    if (r->points[i].ring == ring && r->points[i].s[h][v].have)
                        fprintf(gp, "%d %.3f %.3f %.3f\n", r->points[i].batch, r->points[i].s[h][v].median,
                                r->points[i].s[h][v].min, r->points[i].s[h][v].max);
                fprintf(gp, "EOD\n");
            }
    fprintf(gp, "plot");
    nseries = 0;
    for (int h = 0; h < H_COUNT; h++)
        for (int v = V_CLMEM; v <= V_RAW; v++)
            for (int ring = 1; ring <= MAX_RING; ring++) {
                bool any = false;
                char name[128];
                for (int i = 0; i < r->npoints; i++)
                    any = any || (r->points[i].ring == ring && r->points[i].s[h][v].have);
                if (!any)
                    continue;
                snprintf(name, sizeof name, "%s, ring %d, %s", handoff_label[h], ring, variant_name[v]);
                fprintf(gp, "%s $s%d using 1:2:3:4 with yerrorlines lw %d dt %d pt %d lc rgb '%s' title ", first ? "" : ",",
                        nseries++, v == V_CLMEM ? 2 : 1, v == V_CLMEM ? 1 : 2, 5 + 2 * ring, colour[h]);
                gp_quoted(gp, name);
                first = false;
            }
    if (r->staged.have) {
        fprintf(gp, "%s %.3f with lines lw 2 lc rgb '#9400d3' title ", first ? "" : ",", r->staged.median);
        snprintf(title, sizeof title, "staged copy of one frame (%s)", size_text(r->frame_size, sz, sizeof sz));
        gp_quoted(gp, title);
        first = false;
    }
    fprintf(gp, "\n");
    status = pclose(gp);
    return !first && status == 0;
}
