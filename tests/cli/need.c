/*
 * `need FEATURE WHY`: a CLI case that the running kernel cannot run, through
 * the C tests' one skip mechanism (c-tests/check.h: NEED_SKIP): prints
 * "SKIP FEATURE: WHY" and exits 0, or, when KSYM_REQUIRE lists FEATURE,
 * says so and exits 1.
 */
#define _POSIX_C_SOURCE 200809L /* check.h's strtok_r */
#include "../../c-tests/check.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    (void)finish; /* the harness's summary line is not wanted here */
    NEED_SKIP(argv[1], "%s", argv[2]);
    return failures ? 1 : 0;
}
