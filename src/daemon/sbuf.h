/* sbuf.h: the HTML and JSON escapes every user-supplied name in deepshared's answers (metrics, status
 * page, JSON) goes through, on the growing string of deepshare/strbuf.h. */
#ifndef DS_DAEMON_SBUF_H
#define DS_DAEMON_SBUF_H

#include "deepshare/strbuf.h"

/* s as HTML text or attribute value: & < > " ' become entities. */
void bput_html(ds_buf_t *b, const char *s);
/* s as a JSON string, quotes included: " \ and control characters escaped, < > & as \u003c \u003e \u0026
 * (safe inside HTML too), and bytes that are not valid UTF-8 as U+FFFD, so that any parser accepts it. */
void bput_json(ds_buf_t *b, const char *s);

#endif
