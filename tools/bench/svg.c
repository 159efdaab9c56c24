/* SPDX-License-Identifier: MIT */
/* clmem-bench: the plots, written as SVG with no other program: a log-log
 * chart of lines with min..max bars, from the rows recorded (results.c).
 * One chart of time against buffer size for the six buffer measures, and after a batch
 * run one of time per frame against batch size. */
#include "bench.h"
#include "output.h"

#include <math.h>

#define MAX_SERIES 64
#define MAX_CHART_POINTS 64

struct series {
    char label[128];
    const char *colour;
    bool dashed; /* raw: dashed, thinner, no bars */
    int n;
    double x[MAX_CHART_POINTS], y[MAX_CHART_POINTS], lo[MAX_CHART_POINTS], hi[MAX_CHART_POINTS];
};

struct chart {
    char title[256];
    char subtitle[1024]; /* The devices */
    const char *x_label, *y_label;
    bool x_sizes; /* x ticks as sizes (4K, 1M), else as counts */
    int nseries;
    struct series series[MAX_SERIES];
};

/* The page: the plot area, then the legend below it in two columns. */
enum { WIDTH = 1000, LEFT = 90, RIGHT = 30, TOP = 70, PLOT_H = 440, LEGEND_ROW = 20 };

/* A point of series s, kept in x order; no room, no point. */
static void add_point(struct series *s, double x, double y, double lo, double hi)
{
    int i = s->n;
    if (s->n == MAX_CHART_POINTS)
        return;
    for (; i > 0 && s->x[i - 1] > x; i--) {
        s->x[i] = s->x[i - 1];
        s->y[i] = s->y[i - 1];
        s->lo[i] = s->lo[i - 1];
        s->hi[i] = s->hi[i - 1];
    }
    s->x[i] = x;
    s->y[i] = y;
    s->lo[i] = lo;
    s->hi[i] = hi;
    s->n++;
}

static struct series *add_series(struct chart *c, const char *label, const char *colour, bool dashed)
{
    struct series *s;
    if (c->nseries == MAX_SERIES)
        return NULL;
    s = &c->series[c->nseries++];
    snprintf(s->label, sizeof s->label, "%s", label);
    s->colour = colour;
    s->dashed = dashed;
    s->n = 0;
    return s;
}

/* Where value v lands on an axis of [lo, hi] decades (log10) spanning
 * pixels a to b. */
static double place(double v, double lo, double hi, double a, double b)
{
    return a + (log10(v) - lo) / (hi - lo) * (b - a);
}

static bool write_chart(const struct chart *c, const char *path)
{
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0, xlo, xhi, ylo, yhi;
    double xs[MAX_SERIES * MAX_CHART_POINTS];
    int nxs = 0, legend_rows = (c->nseries + 1) / 2;
    const double x0 = LEFT, x1 = WIDTH - RIGHT, y0 = TOP + PLOT_H, y1 = TOP;
    int height = TOP + PLOT_H + 70 + legend_rows * LEGEND_ROW;
    char text[64];
    FILE *f;

    for (int k = 0; k < c->nseries; k++)
        for (int i = 0; i < c->series[k].n; i++) {
            const struct series *s = &c->series[k];
            double lo = isfinite(s->lo[i]) && s->lo[i] > 0 ? s->lo[i] : s->y[i];
            double hi = isfinite(s->hi[i]) ? s->hi[i] : s->y[i];
            bool seen = false;
            xmin = fmin(xmin, s->x[i]);
            xmax = fmax(xmax, s->x[i]);
            ymin = fmin(ymin, lo);
            ymax = fmax(ymax, hi);
            for (int j = 0; j < nxs; j++)
                seen = seen || xs[j] == s->x[i];
            if (!seen)
                xs[nxs++] = s->x[i];
        }
    if (nxs == 0 || !(xmin > 0) || !(ymin > 0))
        return false;
    xlo = log10(xmin);
    xhi = log10(xmax);
    if (xhi - xlo < 0.5) { /* one x, or close ones: half a decade either side */
        xlo -= 0.25;
        xhi += 0.25;
    } else {
        double pad = (xhi - xlo) * 0.04;
        xlo -= pad;
        xhi += pad;
    }
    ylo = floor(log10(ymin));
    yhi = ceil(log10(ymax));
    if (yhi <= ylo)
        yhi = ylo + 1;

    if (!(f = fopen(path, "w")))
        return false;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            WIDTH, height, WIDTH, height);
    fprintf(f, "<text x=\"%d\" y=\"26\" text-anchor=\"middle\" font-size=\"15\">", WIDTH / 2);
    xml_text(f, c->title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"46\" text-anchor=\"middle\" font-size=\"11\">", WIDTH / 2);
    xml_text(f, c->subtitle);
    fprintf(f, "</text>\n");

    /* Grid and ticks: a line per decade of y (and at 2 and 5 when the
     * chart spans two decades or less), one per x measured. */
    for (double d = ylo; d <= yhi + 1e-9; d += 1)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
            double v = m * pow(10, d), y;
            if ((m > 1 && yhi - ylo > 2) || v > pow(10, yhi) * 1.0001)
                continue;
            y = place(v, ylo, yhi, y0, y1);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#%s\"/>\n", x0, y, x1, y,
                    m == 1 ? "dddddd" : "eeeeee");
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", x0 - 6, y + 4, v);
        }
    for (int j = 0; j < nxs; j++) {
        double x = place(xs[j], xlo, xhi, x0, x1);
        if (c->x_sizes)
            size_text((uint64_t)xs[j], text, sizeof text);
        else
            snprintf(text, sizeof text, "%g", xs[j]);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", x, y0, x, y1);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x, y0 + 18, text);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", x0,
            y1, x1 - x0, y0 - y1);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (x0 + x1) / 2, y0 + 40);
    xml_text(f, c->x_label);
    fprintf(f, "</text>\n<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">", (y0 + y1) / 2);
    xml_text(f, c->y_label);
    fprintf(f, "</text>\n");

    for (int k = 0; k < c->nseries; k++) {
        const struct series *s = &c->series[k];
        const char *dash = s->dashed ? " stroke-dasharray=\"6 4\"" : "";
        double lx = k % 2 ? WIDTH / 2 + 10 : LEFT, ly = y0 + 66 + (k / 2) * LEGEND_ROW;

        fprintf(f, "<g stroke=\"%s\" fill=\"%s\">\n<polyline fill=\"none\" stroke-width=\"%d\"%s points=\"", s->colour,
                s->colour, s->dashed ? 1 : 2, dash);
        for (int i = 0; i < s->n; i++)
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", place(s->x[i], xlo, xhi, x0, x1),
                    place(s->y[i], ylo, yhi, y0, y1));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < s->n && !s->dashed; i++) {
            double x = place(s->x[i], xlo, xhi, x0, x1);
            if (isfinite(s->lo[i]) && isfinite(s->hi[i]) && s->lo[i] > 0) {
                double a = place(s->lo[i], ylo, yhi, y0, y1), b = place(s->hi[i], ylo, yhi, y0, y1);
                fprintf(f, "<path fill=\"none\" d=\"M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8\"/>\n", x, a, b, x - 4, a,
                        x - 4, b);
            }
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n", x, place(s->y[i], ylo, yhi, y0, y1));
        }
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"%d\"%s/>\n", lx, ly - 4,
                lx + 30, ly - 4, s->dashed ? 1 : 2, dash);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"black\">", lx + 38, ly);
        xml_text(f, s->label);
        fprintf(f, "</text>\n</g>\n");
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0;
}

/* The six buffer measures against the buffer size: clmem solid with min..max bars, raw
 * dashed. False when no size was measured. */
bool write_size_svg(const struct bench *b, const char *path)
{
    static const struct {
        const char *measure, *variant, *label, *colour;
    } spec[] = {
        {"staged_copy", "baseline", "(a) staged copy", "#9400d3"},
        {"import", "clmem", "(b) first import", "#009e73"},
        {"cached_import", "clmem", "(c) cached import", "#56b4e9"},
        {"handoff_wait", "clmem", "(d) handoff, host waits (per frame)", "#e69f00"},
        {"handoff_semaphore", "clmem", "(e) handoff, semaphores (per frame)", "#d55e00"},
        {"import", "raw", "(f) raw (b)", "#009e73"},
        {"handoff_wait", "raw", "(f) raw (d)", "#e69f00"},
        {"handoff_semaphore", "raw", "(f) raw (e)", "#d55e00"},
    };
    struct chart *c = calloc(1, sizeof *c);
    bool ok;

    if (!c)
        die("out of memory");
    snprintf(c->title, sizeof c->title, "clmem-bench: (a) to (f) against the buffer size, %s path",
             clmem_bridge_path_name(b->path));
    snprintf(c->subtitle, sizeof c->subtitle, "Vulkan: %s; OpenCL: %s; %s", b->vk.device_name, b->machine.cl_name,
             b->machine.date);
    c->x_label = "buffer size";
    c->y_label = "microseconds (median; bars: min..max)";
    c->x_sizes = true;
    for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
        struct series *s = add_series(c, spec[k].label, spec[k].colour, strcmp(spec[k].variant, "raw") == 0);
        for (int i = 0; i < result_count(); i++) {
            const struct result_row *r = result_at(i);
            if (strcmp(r->measure, spec[k].measure) == 0 && strcmp(r->variant, spec[k].variant) == 0)
                add_point(s, (double)r->x, r->s.median, r->s.min, r->s.max);
        }
        if (s->n == 0)
            c->nseries--;
    }
    ok = c->nseries > 0 && write_chart(c, path);
    free(c);
    return ok;
}

/* "x.svg" -> "x-batches.svg" */
void batch_svg_path(const char *svg, char *out, size_t len)
{
    size_t n = strlen(svg);
    if (n > 4 && strcmp(svg + n - 4, ".svg") == 0)
        snprintf(out, len, "%.*s-batches.svg", (int)(n - 4), svg);
    else
        snprintf(out, len, "%s-batches.svg", svg);
}

/* Time per frame against batch size: a line per handoff, ring size and
 * variant (raw dashed), and the staged copy of one frame flat. False
 * when the batch run measured nothing. */
bool write_batch_svg(const struct bench *b, const char *path)
{
    static const char *const colour[H_COUNT] = {"#d55e00", "#e69f00", "#0072b2"};
    const struct summary *staged = NULL;
    double kmin = INFINITY, kmax = 0;
    uint64_t frame = 0;
    struct chart *c = calloc(1, sizeof *c);
    char sz[32];
    bool ok;

    if (!c)
        die("out of memory");
    for (int h = 0; h < H_COUNT; h++)
        for (int ring = 1; ring <= MAX_RING; ring++)
            for (int v = V_CLMEM; v <= V_RAW; v++) {
                char label[128];
                struct series *s;
                snprintf(label, sizeof label, "%s, ring %d, %s", handoff_label[h], ring, variant_name[v]);
                if (!(s = add_series(c, label, colour[h], v == V_RAW)))
                    continue;
                for (int i = 0; i < result_count(); i++) {
                    const struct result_row *r = result_at(i);
                    if (r->ring == ring && strcmp(r->measure, handoff_measure[h]) == 0 &&
                        strcmp(r->variant, variant_name[v]) == 0) {
                        add_point(s, r->batch, r->s.median, r->s.min, r->s.max);
                        kmin = fmin(kmin, r->batch);
                        kmax = fmax(kmax, r->batch);
                        frame = r->x;
                    }
                }
                if (s->n == 0)
                    c->nseries--;
            }
    for (int i = 0; i < result_count(); i++)
        if (strcmp(result_at(i)->measure, "batch_staged_copy") == 0)
            staged = &result_at(i)->s;
    if (staged && c->nseries > 0) {
        char label[128];
        struct series *s;
        snprintf(label, sizeof label, "staged copy of one frame (%s)", size_text(frame, sz, sizeof sz));
        if ((s = add_series(c, label, "#9400d3", false))) {
            add_point(s, kmin, staged->median, NAN, NAN);
            if (kmax > kmin)
                add_point(s, kmax, staged->median, NAN, NAN);
        }
    }
    snprintf(c->title, sizeof c->title, "clmem-bench: frames in flight, frames of %s, %s path",
             size_text(frame, sz, sizeof sz), clmem_bridge_path_name(b->path));
    snprintf(c->subtitle, sizeof c->subtitle, "Vulkan: %s; OpenCL: %s; %s", b->vk.device_name, b->machine.cl_name,
             b->machine.date);
    c->x_label = "batch size (frames per semaphore signal and wait)";
    c->y_label = "microseconds per frame (median; bars: min..max)";
    ok = c->nseries > 0 && write_chart(c, path);
    free(c);
    return ok;
}

/* "x.svg" -> "x-xproc.svg" */
void xproc_svg_path(const char *svg, char *out, size_t len)
{
    size_t n = strlen(svg);
    if (n > 4 && strcmp(svg + n - 4, ".svg") == 0)
        snprintf(out, len, "%.*s-xproc.svg", (int)(n - 4), svg);
    else
        snprintf(out, len, "%s-xproc.svg", svg);
}

/* Frames across processes: time per frame against the frame's size, a
 * line per measure (raw dashed, the /dev/shm copy in purple). False when
 * (x) measured nothing. */
bool write_xproc_svg(const struct bench *b, const char *path)
{
    static const struct {
        const char *name, *label, *colour;
        bool dashed;
    } spec[] = {
        {"_inproc_e", "in-process (e), one frame", "#56b4e9", false},
        {"_ipc_d1", "across processes, libclmem-ipc, D=1", "#d55e00", false},
        {"_raw_d1", "across processes, raw calls, D=1", "#d55e00", true},
        {"_inproc_ring_d4", "in-process ring, D=4", "#009e73", false},
        {"_ipc_d4", "across processes, libclmem-ipc, D=4", "#e69f00", false},
        {"_shm_d1", "/dev/shm copy, D=1", "#9400d3", false},
        {"_shm_d4", "/dev/shm copy, D=4", "#9400d3", true},
    };
    struct chart *c = calloc(1, sizeof *c);
    bool ok;

    if (!c)
        die("out of memory");
    snprintf(c->title, sizeof c->title, "clmem-bench: frames across processes against the frame's size");
    snprintf(c->subtitle, sizeof c->subtitle, "Vulkan: %s; OpenCL: %s; %s", b->vk.device_name, b->machine.cl_name,
             b->machine.date);
    c->x_label = "frame size";
    c->y_label = "microseconds per frame (median; bars: min..max)";
    c->x_sizes = true;
    for (size_t k = 0; k < sizeof spec / sizeof spec[0]; k++) {
        struct series *s = add_series(c, spec[k].label, spec[k].colour, spec[k].dashed);
        if (!s)
            continue;
        for (int i = 0; i < result_count(); i++) {
            const struct result_row *r = result_at(i);
            size_t lm = strlen(r->measure), ln = strlen(spec[k].name);
            if (strcmp(r->section, "x") == 0 && strcmp(r->variant, "paired") != 0 && lm > ln &&
                strcmp(r->measure + lm - ln, spec[k].name) == 0)
                add_point(s, (double)r->x, r->s.median, r->s.min, r->s.max);
        }
        if (s->n == 0)
            c->nseries--;
    }
    ok = c->nseries > 0 && write_chart(c, path);
    free(c);
    return ok;
}
