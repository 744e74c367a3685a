/* need FEATURE WHY: the shell tests' skip, through the C tests' one
 * mechanism (c-tests/check.h: NEED_SKIP and KSYM_REQUIRE): prints
 * "SKIP FEATURE: WHY" and exits 0, or fails (exit 1) when the environment
 * requires FEATURE. */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: need FEATURE WHY\n");
        return 2;
    }
    NEED_SKIP(argv[1], "%s", argv[2]);
    (void)finish;
    return failures ? 1 : 0;
}
