/* The bpftrace test's workload: named "ksym-bcc-wl" (what the probes
 * filter on), it makes the same system calls every run: getpid, openat,
 * read, close, nanosleep. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
    prctl(PR_SET_NAME, "ksym-bcc-wl", 0, 0, 0);
    char buf[4096];
    for (int i = 0; i < 100; i++) {
        (void)getpid();
        int fd = open("/proc/self/stat", O_RDONLY);
        if (fd >= 0) {
            while (read(fd, buf, sizeof(buf)) > 0)
                ;
            close(fd);
        }
        fd = open("/etc/os-release", O_RDONLY);
        if (fd >= 0) {
            while (read(fd, buf, sizeof(buf)) > 0)
                ;
            close(fd);
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}
