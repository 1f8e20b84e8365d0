/* sbuf.c: the HTML and JSON escapes of sbuf.h. */
#include "daemon/sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "deepshare/common.h"

/* escapes write byte runs */
static void put(ds_buf_t *b, const char *s, size_t len) { ds_bput(b, s, len); }

void bput_html(ds_buf_t *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&': put(b, "&amp;", 5); break;
        case '<': put(b, "&lt;", 4); break;
        case '>': put(b, "&gt;", 4); break;
        case '"': put(b, "&quot;", 6); break;
        case '\'': put(b, "&#39;", 5); break;
        default: put(b, p, 1);
        }
    }
}

/* Length of the valid UTF-8 sequence at p (1-4), 0 when it is not one. */
static int utf8_len(const unsigned char *p)
{
    int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80) return 0;
    if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) return 0; /* overlong, surrogates */
    if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))) return 0;
    return n;
}

void bput_json(ds_buf_t *b, const char *s)
{
    put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        char e[8];
        if (*p == '"' || *p == '\\') { e[0] = '\\', e[1] = (char)*p; put(b, e, 2); p++; }
        else if (*p == '\n') { put(b, "\\n", 2); p++; }
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f) {
            snprintf(e, sizeof e, "\\u%04x", *p);
            put(b, e, 6);
            p++;
        } else if (*p < 0x80) { put(b, (const char *)p, 1); p++; }
        else {
            int n = utf8_len(p);
            if (n) { put(b, (const char *)p, (size_t)n); p += n; }
            else { put(b, "\\ufffd", 6); p++; }
        }
    }
    put(b, "\"", 1);
}
