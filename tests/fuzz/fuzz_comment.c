/* fuzz_comment.c: libFuzzer target for the job comment deepshared reads from every Slurm job (screen.c's
 * strict parser) and for the escaping of user text bound for the log: what the parser accepts is in range
 * and of safe characters, and escaped text holds no control character. */
#include "daemon/daemon.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static void safe_name(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' && *s != '-') abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char comment[sizeof ((sl_job_t *)0)->comment];
    size_t n = size < sizeof comment - 1 ? size : sizeof comment - 1;
    memcpy(comment, data, n);
    comment[n] = 0;
    screen_hints_t h;
    char why[400];
    if (screen_hints(comment, &h, why, sizeof why) == 0) {
        if (h.gpus < 0 || h.gpus > SL_MAX_GPUS || h.batch < 0 || h.batch > 1000000 || h.amp < 0 || h.amp > 1 ||
            h.gmem < -1 || h.gmem > 10000000 || (h.klass != 0 && h.klass != DS_CLASS_BE && h.klass != DS_CLASS_G))
            abort();
        safe_name(h.model);
        safe_name(h.dataset);
    } else {
        for (const char *p = why; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) abort(); /* the reason is logged */
    }
    char out[sizeof comment * 4 + 1];
    screen_escape(comment, out, sizeof out);
    for (const char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) abort();
    return 0;
}
