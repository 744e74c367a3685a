// The header compiles as C++ and the library links from C++.
#include <ksym.h>

#include <cstdio>
#include <cstring>

int main()
{
    static const char text[] = "ffffffff81000000 T _text\nffffffff81000010 T schedule\n";
    ksym_table *t = ksym_table_from_buffer(text, sizeof(text) - 1, nullptr);
    ksym_symbol s;
    int ok = t && ksym_lookup(t, "schedule", &s) == 0 && s.addr == 0xffffffff81000010ull &&
             std::strcmp(s.module, "vmlinux") == 0;
    ksym_table_free(t);
    std::printf("test_cxx: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
