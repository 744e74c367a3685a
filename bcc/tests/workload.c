/* The tests' workload: named "ksym-bcc-wl" (what bpftrace's probes filter
 * on), it makes the same system calls every run: getpid, openat, read,
 * close, nanosleep, 100 times. With --wait it first reads a byte from its
 * standard input (the tools attach to its pid meanwhile), and ends with
 * half a second of reading /proc/self/stat (on a CPU, in the kernel: what
 * profile samples). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static void read_all(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        while (read(fd, buf, len) > 0)
            ;
        close(fd);
    }
}

int main(int argc, char **argv)
{
    prctl(PR_SET_NAME, "ksym-bcc-wl", 0, 0, 0);
    char buf[4096];
    int wait = argc > 1 && !strcmp(argv[1], "--wait");
    if (wait && read(0, buf, 1) != 1)
        return 1;
    for (int i = 0; i < 100; i++) {
        (void)getpid();
        read_all("/proc/self/stat", buf, sizeof(buf));
        read_all("/etc/os-release", buf, sizeof(buf));
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    if (wait) {
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            read_all("/proc/self/stat", buf, sizeof(buf));
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
    }
    return 0;
}
