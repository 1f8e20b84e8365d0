/* main.c: the deepshare command: dispatches to subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "deepshare/policy.h"

/* CMake passes the project version; this fallback serves other builds. */
#ifndef DS_VERSION
#define DS_VERSION "0.1.0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: deepshare <command> [options]\n"
            "\n"
            "deepshare schedules multi-tenant GPU clusters with one signal per tenant, the Quota Assurance\n"
            "Degree. It replays traces against the baselines and drives a Slurm cluster.\n"
            "\n"
            "commands:\n"
            "  simulate   replay a trace (or the built-in synthetic workload) under one or more policies\n"
            "  explain    ask a running deepshared (Slurm daemon) why a job waits\n"
            "  train      train and evaluate the runtime and interference predictors (XGBoost)\n"
            "  predict    predict job durations or pair retentions with saved models\n"
            "  compare    run several policies side by side and write a report folder with plots and index.html\n"
            "  suite      the benchmark suite: every workload x every policy x both modes, with DeepShare's verdict\n"
            "  import     convert a published trace (Helios, Acme, Philly, Alibaba PAI) into jobs.csv and tenants.csv\n"
            "  replay-live  replay a trace on the live Slurm cluster (native Slurm or deepshared) and score it\n"
            "  usage      who used what: GPU-hours as G and BE, lent, borrowed, QAD compliance, from a journal or a run\n"
            "\n"
            "With no command, runs the built-in synthetic workload under every policy and prints the table\n"
            "(the same as 'deepshare simulate --policy all --mode both --trace-estimates drop': every\n"
            "policy that orders by runtime learns it online from the same predictor), ending with\n"
            "DeepShare's verdict against the benchmark suite's goal.\n"
            "\n"
            "policies:\n");
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) fprintf(f, "  %-12s %s\n", (*p)->name, (*p)->summary);
    fprintf(f, "\n'deepshare <command> --help' documents each command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        /* Each policy in both cluster modes: the baselines' reference setting is partitioned,
         * DeepShare's is pooled, and the table shows both for every policy. */
        /* Information parity: the generator's noisy estimates are dropped, so QSSF and Lucid learn their
         * runtimes online from the same predictor as DeepShare (the suite's default). */
        char *def[] = {"simulate", "--policy", "all", "--mode", "both", "--trace-estimates", "drop", NULL};
        return ds_cmd_simulate(7, def);
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("deepshare %s\n", DS_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "simulate")) return ds_cmd_simulate(argc - 1, argv + 1);
    if (!strcmp(cmd, "usage")) return ds_cmd_usage(argc - 1, argv + 1);
    if (!strcmp(cmd, "explain")) return ds_cmd_explain(argc - 1, argv + 1);
    if (!strcmp(cmd, "train")) return ds_cmd_train(argc - 1, argv + 1);
    if (!strcmp(cmd, "predict")) return ds_cmd_predict(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare")) return ds_cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "suite")) return ds_cmd_suite(argc - 1, argv + 1);
    if (!strcmp(cmd, "import")) return ds_cmd_import(argc - 1, argv + 1);
    if (!strcmp(cmd, "replay-live")) return ds_cmd_replay_live(argc - 1, argv + 1);
    fprintf(stderr, "deepshare: unknown command '%s' (see 'deepshare --help')\n", cmd);
    return 2;
}
