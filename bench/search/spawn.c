/*
 * bench-search-spawn: runs a command and prints its rusage ("maxrss_kb
 * utime_us stime_us") on fd 3. Linux carries the peak RSS of the process
 * that calls exec into the new program's ru_maxrss, so a tool spawned
 * directly by bench-search (which links the whole library) would inherit
 * the benchmark's own peak; started from this small process, it reports
 * its own.
 *
 *   bench-search-spawn command [args...]
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 126;
    pid_t pid = fork();
    if (pid < 0)
        return 126;
    if (pid == 0) {
        close(3);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return 126;
    dprintf(3, "%ld %ld %ld\n", ru.ru_maxrss,
            (long)ru.ru_utime.tv_sec * 1000000L + (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec * 1000000L + (long)ru.ru_stime.tv_usec);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 126;
}
