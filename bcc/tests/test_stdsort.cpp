// stdsort.c against libstdc++'s std::sort itself: the same permutation of
// records compared by address only, for inputs of every shape (sizes around
// the insertion-sort threshold, few distinct keys, sorted, reversed, organ
// pipe, all equal, the running kernel's kallsyms in file order) and for
// inputs built by McIlroy's "killer adversary" against std::sort, which
// drive introsort to its depth limit and its heap sort.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" {
#include "../stdsort.h"
extern long ksym_bcc_heap_sorts;
}

struct rec {
    uint64_t addr;
    size_t idx;
    bool operator<(const rec &o) const { return addr < o.addr; }
};

static int checks, failures;

static bool same_permutation(const std::vector<uint64_t> &keys, const char *what)
{
    std::vector<rec> a(keys.size());
    std::vector<ksent> b(keys.size());
    for (size_t i = 0; i < keys.size(); i++) {
        a[i] = rec{ keys[i], i };
        b[i] = ksent{ keys[i], reinterpret_cast<const char *>(i), nullptr };
    }
    std::sort(a.begin(), a.end());
    ksym_bcc_stdsort(b.data(), b.data() + b.size());
    checks++;
    for (size_t i = 0; i < keys.size(); i++) {
        if (a[i].idx != reinterpret_cast<size_t>(b[i].name)) {
            failures++;
            std::fprintf(stderr, "%s (n=%zu): position %zu holds element %zu, std::sort's %zu\n", what,
                         keys.size(), i, reinterpret_cast<size_t>(b[i].name), a[i].idx);
            return false;
        }
    }
    return true;
}

static uint64_t state = 88172645463325252ULL;
static uint64_t rnd()
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

// McIlroy, "A Killer Adversary for Quicksort" (1999): values are decided
// during the sort, as late as possible, so that every partition is lopsided.
static std::vector<uint64_t> killer(size_t n)
{
    std::vector<uint64_t> val(n, n);
    const uint64_t gas = n;
    uint64_t solid = 0;
    size_t candidate = 0;
    std::vector<size_t> ptr(n);
    for (size_t i = 0; i < n; i++)
        ptr[i] = i;
    std::sort(ptr.begin(), ptr.end(), [&](size_t x, size_t y) {
        if (val[x] == gas && val[y] == gas) {
            if (x == candidate)
                val[x] = solid++;
            else
                val[y] = solid++;
        }
        if (val[x] == gas)
            candidate = x;
        else if (val[y] == gas)
            candidate = y;
        return val[x] < val[y];
    });
    return val;
}

int main(int argc, char **argv)
{
    for (size_t n = 0; n <= 70; n++)
        for (int rep = 0; rep < 20; rep++) {
            std::vector<uint64_t> k(n);
            for (auto &x : k)
                x = rnd() % (1 + n / 3);
            same_permutation(k, "random, few keys");
        }
    for (size_t n : { 100, 1000, 4097, 65536, 200000 }) {
        std::vector<uint64_t> k(n);
        for (auto &x : k)
            x = rnd() % 1000;
        same_permutation(k, "random, 1000 keys");
        for (size_t i = 0; i < n; i++)
            k[i] = i / 3;
        same_permutation(k, "sorted, triples");
        for (size_t i = 0; i < n; i++)
            k[i] = (n - i) / 2;
        same_permutation(k, "reversed, pairs");
        for (size_t i = 0; i < n; i++)
            k[i] = i < n / 2 ? i : n - i;
        same_permutation(k, "organ pipe");
        std::fill(k.begin(), k.end(), 7);
        same_permutation(k, "all equal");
        for (size_t i = 0; i < n; i++)
            k[i] = i % 17 == 0 ? rnd() % n : i;
        same_permutation(k, "sorted, some out of place");
    }
    ksym_bcc_heap_sorts = 0;
    for (size_t n : { 64, 1000, 5000, 30000 })
        same_permutation(killer(n), "killer adversary");
    checks++;
    if (ksym_bcc_heap_sorts == 0) {
        failures++;
        std::fprintf(stderr, "the killer inputs never reached the depth limit: the heap sort is untested\n");
    }
    // A kallsyms file in its own order (the addresses bcc sorts).
    const char *path = argc > 1 ? argv[1] : "/proc/kallsyms";
    if (FILE *f = std::fopen(path, "r")) {
        std::vector<uint64_t> k;
        char line[1024];
        unsigned long long a;
        while (std::fgets(line, sizeof(line), f))
            if (std::sscanf(line, "%llx", &a) == 1)
                k.push_back(a);
        std::fclose(f);
        same_permutation(k, path);
    }
    std::printf("test_stdsort: %d checks, %d failures (heap sort reached %ld times)\n", checks, failures,
                ksym_bcc_heap_sorts);
    return failures ? 1 : 0;
}
