/* replay_main.c: a main() for the fuzz targets without libFuzzer, so that ctest (release and ASan builds,
 * no clang needed) replays the seed corpus and every regression input through the same code. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n); /* a crash or sanitizer report fails the test */
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int bad = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) { /* a file, or a directory that does not exist (no regressions yet) */
            if (fopen(argv[i], "rb")) bad |= replay_file(argv[i]), files++;
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            bad |= replay_file(p);
            files++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return bad;
}
