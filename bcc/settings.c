/* libksym-bcc: the settings read from the environment when it loads. */
#include "settings.h"

#include "note.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct settings ksym_bcc_settings;

static int note_fix_word;

static unsigned parse_fixes(const char *v)
{
    unsigned fixes = 0;
    while (v && *v) {
        size_t n = strcspn(v, ", ");
        static const struct {
            const char *word;
            unsigned bits;
        } words[] = { { "symbolize", FIX_SYMBOLIZE },
                      { "builtin", FIX_BUILTIN },
                      { "module", FIX_MODULE },
                      { "all", FIX_SYMBOLIZE | FIX_BUILTIN | FIX_MODULE } };
        int known = n == 0;
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
            if (strlen(words[i].word) == n && strncmp(v, words[i].word, n) == 0) {
                fixes |= words[i].bits;
                known = 1;
            }
        }
        if (!known)
            ksym_bcc_note(&note_fix_word, "KSYM_BCC_FIX: ignoring '%.*s' (known: symbolize, builtin, module, all)",
                          (int)n, v);
        v += n;
        v += strspn(v, ", ");
    }
    return fixes;
}

const char *ksym_bcc_fixes_text(unsigned f)
{
    static char buf[64];
    if (!f)
        return "none (bcc's answers)";
    snprintf(buf, sizeof(buf), "%s%s%s", (f & FIX_SYMBOLIZE) ? "symbolize " : "",
             (f & FIX_BUILTIN) ? "builtin " : "", (f & FIX_MODULE) ? "module " : "");
    buf[strlen(buf) - 1] = 0;
    return buf;
}

static const char *nonempty(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void ksym_bcc_settings_read(void)
{
    struct settings *s = &ksym_bcc_settings;
    s->fixes = parse_fixes(getenv("KSYM_BCC_FIX"));
    const char *d = getenv("KSYM_BCC_DEBUG");
    if (d && *d && strcmp(d, "0") != 0)
        s->debug = atoi(d) >= 2 ? 2 : 1;
    const char *dir = nonempty("KSYM_BCC_SNAPSHOT_DIR");
    if (dir && strcmp(dir, "none") == 0)
        s->no_snapshot = 1;
    else
        s->snapshot_dir = dir;
    s->forward_lib = nonempty("KSYM_BCC_FORWARD_LIB");
    s->bcc_version = nonempty("KSYM_BCC_BCC_VERSION");
}
