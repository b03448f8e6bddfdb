/*
 * Minimal TAP test harness shared by the unit, conformance and integration
 * tests. Each check prints "ok N - name" or "not ok N - name" (TAP 13), and
 * t_done() prints the plan and returns the exit status for main().
 *
 *   T_CHECK(cond, "name %d", i);       any condition
 *   T_EQ_INT(got, want, "name");       integers (printed on failure)
 *   T_EQ_STR(got, want, "name");       NUL-terminated strings (NULL-safe)
 */
#ifndef AGT_TEST_HARNESS_H
#define AGT_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_count;
static int t_failed;

/* Prints a formatted check name on one line: a name that holds a tool's
 * multi-line result would otherwise break the TAP stream (meson reports
 * "Unknown TAP output lines" and the summary cannot count the lines after
 * it), so CR and LF are printed as the two characters \r and \n. */
static void t_print_line(const char *fmt, va_list ap)
{
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    char *text = small;
    if ((size_t)n >= sizeof small) {
        text = malloc((size_t)n + 1);
        if (text == NULL)
            return;
        vsnprintf(text, (size_t)n + 1, fmt, ap);
    }
    for (const char *c = text; *c; c++) {
        if (*c == '\n')
            fputs("\\n", stdout);
        else if (*c == '\r')
            fputs("\\r", stdout);
        else
            putchar(*c);
    }
    if (text != small)
        free(text);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), unused))
#endif
static int
t_check(int ok, const char *fmt, ...)
{
    va_list ap;
    t_count++;
    if (!ok)
        t_failed++;
    printf("%s %d - ", ok ? "ok" : "not ok", t_count);
    va_start(ap, fmt);
    t_print_line(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return ok;
}

#if defined(__GNUC__)
__attribute__((unused))
#endif
static void
t_diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    t_print_line(fmt, ap);
    va_end(ap);
    printf("\n");
}

#if defined(__GNUC__)
__attribute__((unused))
#endif
static int
t_skip(const char *why)
{
    t_count++;
    printf("ok %d # SKIP %s\n", t_count, why);
    return 1;
}

#if defined(__GNUC__)
__attribute__((unused))
#endif
static int
t_done(void)
{
    printf("1..%d\n", t_count);
    return t_failed ? 1 : 0;
}

#define T_CHECK(cond, ...) t_check((cond) ? 1 : 0, __VA_ARGS__)

#define T_EQ_INT(got, want, ...)                                                                   \
    do {                                                                                           \
        long long t_g_ = (long long)(got), t_w_ = (long long)(want);                               \
        if (!t_check(t_g_ == t_w_, __VA_ARGS__))                                                   \
            t_diag("  got %lld, want %lld (%s:%d)", t_g_, t_w_, __FILE__, __LINE__);               \
    } while (0)

#define T_EQ_STR(got, want, ...)                                                                   \
    do {                                                                                           \
        const char *t_g_ = (got), *t_w_ = (want);                                                  \
        int t_ok_ = (t_g_ == NULL && t_w_ == NULL) ||                                              \
                    (t_g_ != NULL && t_w_ != NULL && strcmp(t_g_, t_w_) == 0);                     \
        if (!t_check(t_ok_, __VA_ARGS__))                                                          \
            t_diag("  got  [%s]\n#   want [%s] (%s:%d)", t_g_ ? t_g_ : "(null)",                   \
                   t_w_ ? t_w_ : "(null)", __FILE__, __LINE__);                                    \
    } while (0)

#endif
