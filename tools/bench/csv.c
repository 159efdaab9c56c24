/* clmem-bench: the CSV. */
#include "bench.h"

/* frames per handoff, for the CSV's batch column: 1 for what moves one
 * frame at a time, 0 for the imports, which hand nothing over */
static int measure_batch(enum measure m)
{
    return m == M_IMPORT || m == M_CACHED ? 0 : 1;
}

bool write_csv(const char *path, const struct size_result *res, int n, const struct batch_results *br)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return false;
    }
    fprintf(f, "size_bytes,measure,variant,median_us,min_us,max_us,reps,frames_per_rep,batch,ring\n");
    for (int i = 0; i < n; i++)
        for (int m = 0; m < M_COUNT; m++)
            for (int v = 0; v < V_COUNT; v++) {
                const struct summary *x = &res[i].s[m][v];
                if (x->have)
                    fprintf(f, "%llu,%s,%s,%.3f,%.3f,%.3f,%d,%d,%d,0\n", (unsigned long long)res[i].size,
                            measure_name[m], variant_name[v], x->median, x->min, x->max, x->reps, x->frames_per_rep,
                            measure_batch((enum measure)m));
            }
    /* the import's overhead, paired by rep: min_us and max_us hold the
     * bounds of the median's 95 % interval, reps the pairs */
    for (int i = 0; i < n; i++) {
        const struct paired *p = &res[i].import_overhead;
        if (p->have)
            fprintf(f, "%llu,import_overhead,paired,%.3f,%.3f,%.3f,%d,1,0,0\n", (unsigned long long)res[i].size,
                    p->median, p->lo, p->hi, p->pairs);
    }
    /* (g): size_bytes is the frame's texel bytes; the measure names the frame;
     * one frame per handoff, no ring: batch 1, ring 0, as the per-frame measures. */
    for (int i = 0; i < n_frame_results; i++) {
        const struct frame_result *fr = &frame_results[i];
        const struct summary *x[2] = {&fr->staged, &fr->handoff};
        for (int k = 0; k < 2; k++)
            fprintf(f, "%llu,frame_%s_%s,%s,%.3f,%.3f,%.3f,%d,1,1,0\n", (unsigned long long)fr->bytes,
                    k ? "handoff" : "staged_copy", fr->key, k ? "clmem" : "baseline", x[k]->median, x[k]->min,
                    x[k]->max, x[k]->reps);
    }
    write_consumer_csv(f);      /* (i) */
    write_ffmpeg_frames_csv(f); /* (j) */
    if (br && br->ran) {
        if (br->staged.have)
            fprintf(f, "%llu,batch_staged_copy,baseline,%.3f,%.3f,%.3f,%d,1,1,0\n",
                    (unsigned long long)br->frame_size, br->staged.median, br->staged.min, br->staged.max,
                    br->staged.reps);
        for (int h = 0; h < H_COUNT; h++)
            for (int i = 0; i < br->npoints; i++)
                for (int v = V_CLMEM; v <= V_RAW; v++) {
                    const struct summary *x = &br->points[i].s[h][v];
                    if (x->have)
                        fprintf(f, "%llu,%s,%s,%.3f,%.3f,%.3f,%d,%d,%d,%d\n", (unsigned long long)br->frame_size,
                                handoff_measure[h], variant_name[v], x->median, x->min, x->max, x->reps,
                                x->frames_per_rep, br->points[i].batch, br->points[i].ring);
                }
    }
    write_scaling_csv(f);
    return fclose(f) == 0;
}
