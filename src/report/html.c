/* html.c: index.html of the compare report: the table and every plot, self-contained and offline. */
#include "deepshare/plot.h"

#include <math.h>

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void summary_table(FILE *f, const ds_plot_input_t *in)
{
    fputs("<table>\n<tr><th>policy</th><th>mode</th><th>jobs</th><th>avg JCT (s)</th><th>avg queue (s)</th>"
          "<th>p99 queue (s)</th><th>p99.9 queue (s)</th><th>makespan (days)</th><th>GPU alloc</th>"
          "<th>SM util</th><th>GPU mem util</th><th>preemptions</th><th>colocated jobs</th>"
          "<th>QAD compliance</th></tr>\n",
          f);
    for (int i = 0; i < in->n; i++) {
        const ds_sim_result_t *x = in->res[i];
        fputs("<tr><td>", f);
        esc(f, x->policy);
        fprintf(f, "</td><td>%s</td><td>%lld</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.2f</td>"
                   "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%lld</td><td>%lld</td><td>%.3f</td></tr>\n",
                x->mode == DS_MODE_POOLED ? "pooled" : "partitioned", (long long)x->jobs, x->jct.avg, x->queue.avg,
                x->queue.p99, x->queue.p999, (double)x->makespan / 86400.0, x->gpu_alloc, x->sm_util, x->gmem_util,
                (long long)x->preemptions, (long long)x->colocated_jobs, x->qad_compliance);
    }
    fputs("</table>\n", f);
}

static void sweep_table(FILE *f, const ds_plot_input_t *in)
{
    fputs("<h2>DeepShare sensitivity sweep</h2>\n<p>One parameter varied at a time, the others at their defaults "
          "(and any given on the command line). Also in <a href=\"sweep.csv\">sweep.csv</a>.</p>\n"
          "<table>\n<tr><th>parameter</th><th>value</th><th>SM util</th><th>GPU alloc</th>"
          "<th>colocated jobs</th><th>slowdown of colocated jobs</th><th>avg queue (s)</th><th>avg JCT (s)</th>"
          "<th>QAD compliance</th></tr>\n",
          f);
    for (int i = 0; i < in->nsweep; i++) {
        const ds_sweep_point_t *p = &in->sweep[i];
        fputs("<tr><td>", f);
        esc(f, p->param);
        fprintf(f, "</td><td>%g", p->value);
        if (p->note[0]) {
            fputs(" (", f);
            esc(f, p->note);
            fputs(")", f);
        }
        fputs("</td>", f);
        if (!p->ok) {
            fputs("<td colspan=\"7\">run failed (see the terminal output)</td></tr>\n", f);
            continue;
        }
        fprintf(f, "<td>%.3f</td><td>%.3f</td><td>%lld</td>", p->sm_util, p->gpu_alloc, (long long)p->colocated_jobs);
        if (isnan(p->coloc_slowdown)) fputs("<td>-</td>", f);
        else fprintf(f, "<td>%.3f</td>", p->coloc_slowdown);
        fprintf(f, "<td>%.0f</td><td>%.0f</td><td>%.3f</td></tr>\n", p->avg_queue, p->avg_jct, p->qad_compliance);
    }
    fputs("</table>\n", f);
}

int ds_report_html(FILE *f, const ds_plot_input_t *in, const ds_plot_list_t *plots, int plots_ok, const char *note)
{
    const ds_trace_t *t = in->trace;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>deepshare compare: ", f);
    esc(f, t->source);
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:2em;max-width:1100px}\n"
          "table{border-collapse:collapse;font-size:90%}\n"
          "th,td{border:1px solid #bbb;padding:3px 7px;text-align:right}\n"
          "th{background:#eee}td:first-child{text-align:left}\n"
          "figure{margin:2em 0}img{max-width:100%;border:1px solid #ddd}\n"
          ".note{background:#fff3cd;border:1px solid #e0c060;padding:.7em}\n"
          "</style>\n</head>\n<body>\n<h1>deepshare compare</h1>\n<p>Workload: ",
          f);
    esc(f, t->source);
    fprintf(f, ", %d jobs, %d tenants", t->njobs, t->ntenants);
    if (in->n) fprintf(f, ", %lld GPUs", (long long)in->res[0]->total_gpus);
    fputs(".</p>\n<h2>Summary</h2>\n<p>The same numbers as <code>deepshare simulate --json</code>: "
          "<a href=\"summary.csv\">summary.csv</a>, <a href=\"summary.json\">summary.json</a>. Times in seconds; "
          "utilizations and QAD compliance as fractions.</p>\n",
          f);
    summary_table(f, in);
    fputs("<h2>Plots</h2>\n", f);
    if (!plots_ok) {
        fputs("<p class=\"note\">", f);
        esc(f, note ? note : "The plots were not rendered.");
        fputs("</p>\n", f);
    }
    for (int i = 0; i < plots->n; i++) {
        const ds_plot_t *p = &plots->v[i];
        fputs("<figure>\n", f);
        if (plots_ok) {
            fprintf(f, "<a href=\"plots/%s.svg\"><img src=\"plots/%s.png\" alt=\"", p->name, p->name);
            esc(f, p->title);
            fputs("\"></a>\n", f);
        }
        fputs("<figcaption>", f);
        esc(f, p->title);
        if (plots_ok) fprintf(f, " (<a href=\"plots/%s.svg\">SVG</a>)", p->name);
        fputs("</figcaption>\n</figure>\n", f);
    }
    if (in->nsweep) sweep_table(f, in);
    fputs("<p>Plot data are in <code>data/</code>; <code>gnuplot plots.gp</code> in this folder redraws the "
          "plots. With <code>--details</code>, per-policy job, time-series, QAD and tenant CSVs are in one "
          "folder per policy.</p>\n"
          "</body>\n</html>\n",
          f);
    return ferror(f) ? DS_EIO : DS_OK;
}
