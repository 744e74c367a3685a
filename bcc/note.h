/* libksym-bcc: the one-line notes on stderr (note.c). */
#ifndef KSYM_BCC_NOTE_H
#define KSYM_BCC_NOTE_H

/* One line on stderr, "libksym-bcc: ...", the first time `once` is seen (a
 * static flag per message). */
void ksym_bcc_note(int *once, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
