/*
 * The permutation of libstdc++'s std::sort, for bcc's kernel symbols.
 *
 * bcc's KSyms reads /proc/kallsyms into a vector and sorts it with
 * std::sort comparing addresses only. std::sort is not stable: which of
 * several names at one address ends up last (the one bcc answers for every
 * address from there to the next symbol) depends on the whole input, every
 * BPF program and trampoline line included. To give bcc's answer the shim
 * sorts the same lines, in the same order, with the same algorithm: the
 * introsort of libstdc++ (GCC's <bits/stl_algo.h>, unchanged in this
 * respect since GCC 4), written here from its description:
 *
 *   sort:      introsort loop with a depth limit of 2*floor(log2(n)), then a
 *              final insertion sort (the first 16 elements guarded, the rest
 *              unguarded).
 *   loop:      while more than 16 elements: at the depth limit heap-sort the
 *              range; else move the median of (first+1, middle, last-1) to
 *              first, partition the rest around it (unguarded Hoare
 *              partition), recurse on the right part, loop on the left.
 *   heap sort: make_heap then sort_heap, with libstdc++'s adjust_heap (the
 *              hole goes down to a leaf, then the value up).
 *
 * Only the comparisons and moves matter for the permutation, so sorting
 * {address, name, module} records reproduces bcc's order of its
 * {name, module, address} objects exactly. The differential test
 * (bcc/tests/diff.c) checks the outcome against the real libbcc at every
 * address that several names share.
 */
#include "stdsort.h"

#include <stddef.h>
#include <string.h>

#define THRESHOLD 16

static inline int less(const struct ksent *a, const struct ksent *b)
{
    return a->addr < b->addr;
}

static inline void swap(struct ksent *a, struct ksent *b)
{
    struct ksent t = *a;
    *a = *b;
    *b = t;
}

/* The median of *a, *b, *c swapped into *result, as libstdc++ chooses it. */
static void median_to_first(struct ksent *result, struct ksent *a, struct ksent *b, struct ksent *c)
{
    if (less(a, b)) {
        if (less(b, c))
            swap(result, b);
        else if (less(a, c))
            swap(result, c);
        else
            swap(result, a);
    } else if (less(a, c)) {
        swap(result, a);
    } else if (less(b, c)) {
        swap(result, c);
    } else {
        swap(result, b);
    }
}

/* Hoare partition of [first, last) around *pivot, which lies outside it. */
static struct ksent *partition(struct ksent *first, struct ksent *last, const struct ksent *pivot)
{
    for (;;) {
        while (less(first, pivot))
            first++;
        last--;
        while (less(pivot, last))
            last--;
        if (!(first < last))
            return first;
        swap(first, last);
        first++;
    }
}

/* libstdc++'s __adjust_heap: the hole at `hole` sinks to a leaf along the
 * larger children, then `value` rises from there to its place. */
static void adjust_heap(struct ksent *first, ptrdiff_t hole, ptrdiff_t len, struct ksent value)
{
    const ptrdiff_t top = hole;
    ptrdiff_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (less(&first[child], &first[child - 1]))
            child--;
        first[hole] = first[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        first[hole] = first[child - 1];
        hole = child - 1;
    }
    ptrdiff_t parent = (hole - 1) / 2;
    while (hole > top && less(&first[parent], &value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

/* What std::sort falls back to at the depth limit: __partial_sort(first,
 * last, last), i.e. make_heap then sort_heap. */
static void heap_sort(struct ksent *first, struct ksent *last)
{
    ptrdiff_t len = last - first;
    if (len >= 2) {
        for (ptrdiff_t parent = (len - 2) / 2;; parent--) {
            adjust_heap(first, parent, len, first[parent]);
            if (parent == 0)
                break;
        }
    }
    while (last - first > 1) {
        last--;
        struct ksent value = *last;
        *last = *first;
        adjust_heap(first, 0, last - first, value);
    }
}

#ifdef KSYM_BCC_SORT_STATS
/* Tests: how often the depth limit was reached. */
long ksym_bcc_heap_sorts;
#endif

static void introsort_loop(struct ksent *first, struct ksent *last, long depth)
{
    while (last - first > THRESHOLD) {
        if (depth == 0) {
#ifdef KSYM_BCC_SORT_STATS
            ksym_bcc_heap_sorts++;
#endif
            heap_sort(first, last);
            return;
        }
        depth--;
        struct ksent *mid = first + (last - first) / 2;
        median_to_first(first, first + 1, mid, last - 1);
        struct ksent *cut = partition(first + 1, last, first);
        introsort_loop(cut, last, depth);
        last = cut;
    }
}

/* Moves *at left while its predecessor is greater (equal ones stay in
 * front): __unguarded_linear_insert. */
static void linear_insert(struct ksent *at)
{
    struct ksent value = *at;
    struct ksent *prev = at - 1;
    while (less(&value, prev)) {
        *at = *prev;
        at = prev;
        prev--;
    }
    *at = value;
}

static void insertion_sort(struct ksent *first, struct ksent *last)
{
    if (first == last)
        return;
    for (struct ksent *i = first + 1; i != last; i++) {
        if (less(i, first)) {
            struct ksent value = *i;
            memmove(first + 1, first, (size_t)(i - first) * sizeof(*first));
            *first = value;
        } else {
            linear_insert(i);
        }
    }
}

void ksym_bcc_stdsort(struct ksent *first, struct ksent *last)
{
    if (first == last)
        return;
    size_t n = (size_t)(last - first);
    long lg = 63 - __builtin_clzll((unsigned long long)n);
    introsort_loop(first, last, 2 * lg);
    if (last - first > THRESHOLD) {
        insertion_sort(first, first + THRESHOLD);
        for (struct ksent *i = first + THRESHOLD; i != last; i++)
            linear_insert(i);
    } else {
        insertion_sort(first, last);
    }
}
