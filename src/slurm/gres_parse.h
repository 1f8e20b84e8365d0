/* gres_parse.h: parsing of the GRES strings of Slurm's job and node records (gres_parse.c), apart from
 * libslurm so that tests can feed them the strings a real cluster shows. */
#ifndef DS_GRES_PARSE_H
#define DS_GRES_PARSE_H

#include "slurm_io.h"

/* Whether the GRES type at the start of rest (up to ':' or '(') names one GPU: "gN" (deepshared's pinning
 * types) or "MODEL_gN" (the same with the GPU's model, docs/deepshared.md "GPU sharing on nodes typed by
 * model"); 1 with its index in *idx and the model ("" for gN) in model (size mn), 0 when it names none. */
int sl_pin_type(const char *rest, int *idx, char *model, size_t mn);
/* Typed pins of tres_per_node ("gres:gpu:g2:1", "gres:shard:v100_g3:1") into j->gpu_idx and on_shard; a
 * request typed by model ("gres:gpu:v100:2") into gpu_type; an untyped count ("gres:gpu:2") into
 * untyped_gpus; every gpu and shard entry's count into gres_gpus and gres_shards. Adds to j. */
void sl_parse_tres(const char *tres, sl_job_t *j);
/* gres_detail's index list after "IDX:" ("0-2,5)") into j->gpu_idx. */
void sl_parse_idx_list(const char *s, sl_job_t *j);
/* A running job's gres_detail ("gpu:v100:2(IDX:0-1)", or on GPUs typed per index one entry per type:
 * "gpu:g0:0(IDX:),gpu:g1:1(IDX:1),gpu:g2:1(IDX:2),gpu:g3:0(IDX:)") into j->gpu_idx: every entry's
 * indices, each once, in order. */
void sl_parse_gres_detail(const char *detail, sl_job_t *j);
/* One GRES list of a node (Gres or GresUsed): the count of each per-GPU shard entry ("shard:gN:C",
 * "shard:MODEL_gN:C") into shards[N] (entries absent leave it as it was); returns the GPUs its gpu entries
 * add up to. With nd, the model of its gpu entries goes to nd->gpu_type (nd->types: how many distinct
 * ones) and how it is given to nd->model_pins / nd->model_picks. */
int sl_scan_gres(const char *gres, int *shards, sl_node_t *nd);

#endif
