/* libksym-bcc: the one-line notes on stderr. */
#include "note.h"

#include <stdarg.h>
#include <stdio.h>

void ksym_bcc_note(int *once, const char *fmt, ...)
{
    if (__atomic_exchange_n(once, 1, __ATOMIC_RELAXED))
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "libksym-bcc: %s\n", line);
}
