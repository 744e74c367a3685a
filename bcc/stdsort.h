/* libksym-bcc: libstdc++'s std::sort permutation (stdsort.c). */
#ifndef KSYM_BCC_STDSORT_H
#define KSYM_BCC_STDSORT_H

#include "types.h"

/* std::sort(first, last) of libstdc++ with bcc's comparison (address only):
 * the same permutation bcc's KSyms gets, so the same name comes last among
 * several at one address. */
void ksym_bcc_stdsort(struct ksent *first, struct ksent *last);

#endif
