/*
 * Overhead of a foreground command through the process engine, side by side
 * with the alternatives, all running the same thing:
 *
 *   direct-sh    posix_spawn("/bin/sh -c true") with stdout+stderr on a pipe,
 *                read to EOF, waitpid    <- the like-for-like baseline
 *   engine       agti_proc_run_to_completion("true") + agti_proc_output
 *                (also runs /bin/sh -c true: own group, env, pidfd, capture)
 *   python       subprocess.run(["/bin/sh", "-c", "true"], capture_output=True,
 *                stdin=DEVNULL) timed inside /usr/bin/python3
 *   direct-true  posix_spawn("/bin/true") + waitpid, no shell, no capture
 *                (a floor, not like for like)
 *
 * Rounds alternate between the rows so drift (CPU frequency, other load)
 * hits all of them alike. Usage: bench-proc [iterations per row, default 2000]
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/proc.h"

extern char **environ;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time (user + system) this process has used, in seconds. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int direct_sh(void)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    char *argv[] = {(char *)"/bin/sh", (char *)"-c", (char *)"true", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    char buf[4096];
    while (read(fds[0], buf, sizeof buf) > 0)
        ;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int direct_true(void)
{
    char *argv[] = {(char *)"/bin/true", NULL};
    pid_t pid;
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0)
        return -1;
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int engine(void)
{
    agti_proc *p;
    if (agti_proc_run_to_completion(&p, "true", NULL) != AGT_OK)
        return -1;
    char *out;
    agti_proc_output(p, &out, NULL);
    free(out);
    int code = agti_proc_exit_code(p);
    agti_proc_free(p);
    return code;
}

/* Seconds per call of subprocess.run, measured by Python over n calls. */
static double python_per_call(int n)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import subprocess,time\n"
             "n=%d\n"
             "t=time.perf_counter()\n"
             "for _ in range(n): subprocess.run([\"/bin/sh\",\"-c\",\"true\"],"
             "capture_output=True,stdin=subprocess.DEVNULL)\n"
             "print((time.perf_counter()-t)/n)'",
             n);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return -1;
    double v = -1;
    if (fscanf(f, "%lf", &v) != 1)
        v = -1;
    pclose(f);
    return v;
}

#define ROUNDS 20

typedef struct row {
    const char *name, *what;
    int (*fn)(void);
    double per_round[ROUNDS]; /* seconds per call in each round */
    double cpu;               /* the parent's CPU seconds, all rounds */
    int calls, failures;
} row;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[ROUNDS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    if (iters < ROUNDS)
        iters = ROUNDS;
    int per = iters / ROUNDS;
    row rows[] = {
        {"direct-sh",
         "posix_spawn /bin/sh -c true, pipe capture, waitpid",
         direct_sh,
         {0},
         0,
         0,
         0},
        {"engine",
         "agti_proc_run_to_completion(\"true\") via /bin/sh -c, capture",
         engine,
         {0},
         0,
         0},
        {"direct-true",
         "posix_spawn /bin/true, waitpid (no shell, no capture)",
         direct_true,
         {0},
         0,
         0},
    };
    size_t nrows = sizeof rows / sizeof rows[0];
    double py[ROUNDS];
    int py_rounds = 0;
    for (size_t i = 0; i < nrows; i++) /* warm up */
        for (int k = 0; k < 20; k++)
            rows[i].fn();
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < nrows; i++) {
            double t = now_s(), c = cpu_s();
            for (int k = 0; k < per; k++)
                rows[i].failures += rows[i].fn() != 0;
            rows[i].per_round[r] = (now_s() - t) / per;
            rows[i].cpu += cpu_s() - c;
            rows[i].calls += per;
        }
        double v = python_per_call(per);
        if (v > 0)
            py[py_rounds++] = v;
    }
    double base = median(rows[0].per_round, ROUNDS);
    printf("bench-proc: %d calls per row in %d alternating rounds; median of the rounds\n\n",
           rows[0].calls, ROUNDS);
    printf("%-12s %10s %10s %8s %9s  %s\n", "row", "us/call", "best", "vs sh", "cpu us",
           "what it runs");
    for (size_t i = 0; i < nrows; i++) {
        double med = median(rows[i].per_round, ROUNDS);
        double best = rows[i].per_round[0];
        for (int r = 1; r < ROUNDS; r++)
            best = rows[i].per_round[r] < best ? rows[i].per_round[r] : best;
        printf("%-12s %10.1f %10.1f %7.2fx %9.1f  %s%s\n", rows[i].name, med * 1e6, best * 1e6,
               med / base, rows[i].cpu / rows[i].calls * 1e6, rows[i].what,
               rows[i].failures ? "  (FAILURES)" : "");
    }
    if (py_rounds > 0) {
        double med = median(py, py_rounds), best = py[0];
        for (int r = 1; r < py_rounds; r++)
            best = py[r] < best ? py[r] : best;
        printf("%-12s %10.1f %10.1f %7.2fx %9s  %s\n", "python", med * 1e6, best * 1e6, med / base,
               "-", "subprocess.run([/bin/sh,-c,true], capture_output=True) in python3");
    } else {
        printf("%-12s %10s %10s %8s  %s\n", "python", "n/a", "", "",
               "/usr/bin/python3 not runnable");
    }
    printf("\n(cpu us = the calling process's own CPU time per call, child excluded)\n");
    printf("engine / direct-sh = %.3f (target <= 1.2)\n", median(rows[1].per_round, ROUNDS) / base);
    return 0;
}
