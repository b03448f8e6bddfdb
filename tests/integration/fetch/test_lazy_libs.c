/*
 * libcurl is loaded at the first transfer (lib/net/curl_dl.c), libxml2 at
 * the first HTML page reduced (lib/net/html.c) and libgit2 at the first
 * repository opened (lib/git/git_dl.c), not linked: a process
 * that needs neither never maps them; a missing or wrong library is a
 * clear AGT_EUNSUPPORTED, through the internal calls and through FetchURL. Each case runs in a
 * fresh child (the load is once per process) and reports back through a pipe.
 * A library counts as mapped when a loaded object's SONAME is exactly its
 * name (dl_iterate_phdr), not when some path contains a word.
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "core/core.h"
#include "harness.h"
#include "net/curl_dl.h"
#include "net/net.h"

#ifndef AGTI_LIBGIT2_SONAME
#error "the build names libgit2's shared object (meson.build: AGTI_LIBGIT2_SONAME)"
#endif

typedef struct soname_query {
    const char *want;
    bool found;
} soname_query;

/* One loaded object: whether its SONAME (DT_SONAME in its dynamic section,
 * read from memory) is exactly q->want. */
static int soname_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    soname_query *q = data;
    if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
        return 0; /* the program itself, the vDSO */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        ElfW(Addr) strtab = 0;
        ElfW(Xword) soname = 0;
        bool has = false;
        for (; d->d_tag != DT_NULL; d++) {
            if (d->d_tag == DT_STRTAB)
                strtab = d->d_un.d_ptr;
            else if (d->d_tag == DT_SONAME) {
                soname = d->d_un.d_val;
                has = true;
            }
        }
        /* glibc relocates DT_STRTAB in place; where it does not, it is an
         * offset from the load address */
        if (strtab != 0 && strtab < info->dlpi_addr)
            strtab += info->dlpi_addr;
        if (has && strtab != 0 && strcmp((const char *)(strtab + soname), q->want) == 0)
            q->found = true;
    }
    return 0;
}

/* true when a loaded object's SONAME is exactly soname */
static bool lib_mapped(const char *soname)
{
    soname_query q = {soname, false};
    dl_iterate_phdr(soname_cb, &q);
    return q.found;
}

/* the two names lib/net/curl_dl.c loads (the OpenSSL and GnuTLS builds) */
static bool curl_mapped(void)
{
    return lib_mapped("libcurl.so.4") || lib_mapped("libcurl-gnutls.so.4");
}

/* Runs fn in a child with the environment variable var = env (NULL:
 * unset); returns what it wrote (one line), malloc'd. */
static char *in_child_env(const char *var, const char *env, void (*fn)(FILE *out))
{
    int fds[2];
    if (pipe(fds) != 0)
        return NULL;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (env)
            setenv(var, env, 1);
        else
            unsetenv(var);
        FILE *out = fdopen(fds[1], "w");
        fn(out);
        fclose(out);
        _exit(0);
    }
    close(fds[1]);
    agti_buf b = AGTI_BUF_INIT;
    char chunk[512];
    ssize_t n;
    while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
        agti_buf_put(&b, chunk, (size_t)n);
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st))
        agti_buf_printf(&b, "[child died: status %d]", st);
    return agti_buf_detach(&b);
}

static char *in_child(const char *env, void (*fn)(FILE *out))
{
    return in_child_env("AGT_LIBCURL", env, fn);
}

static void html_report(FILE *out)
{
    bool before = lib_mapped("libxml2.so.2");
    bool ok = agti_html_available();
    agti_buf b = AGTI_BUF_INIT;
    const char page[] = "<html><head><title>T</title></head><body><p>Hello</p></body></html>";
    int rc = agti_html_to_text(page, sizeof page - 1, "utf-8", NULL, &b);
    fprintf(out, "before=%d available=%d rc=%d mapped=%d text=%s", before, ok, rc,
            lib_mapped("libxml2.so.2"), rc == AGT_OK ? agti_buf_cstr(&b) : agt_error_message());
    agti_buf_free(&b);
}

/* agt_changes_open on a fresh repository (git init by the git program) */
static void git_report(FILE *out)
{
    bool before = lib_mapped(AGTI_LIBGIT2_SONAME);
    char dir[] = "/tmp/agt-lazygit-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(out, "mkdtemp failed");
        return;
    }
    char *cmd = agti_aprintf("git init -q '%s' 2>/dev/null", dir);
    int st = cmd ? system(cmd) : -1;
    free(cmd);
    agt_changes *c = NULL;
    int rc = st == 0 ? agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL) : -999;
    fprintf(out, "before=%d rc=%d mapped=%d msg=%s", before, rc, lib_mapped(AGTI_LIBGIT2_SONAME),
            rc == AGT_OK ? "" : agt_error_message());
    agt_changes_free(c);
    cmd = agti_aprintf("rm -rf '%s'", dir);
    if (cmd && system(cmd) != 0)
        fprintf(out, " [cleanup failed]");
    free(cmd);
}

static void load_report(FILE *out)
{
    bool before = curl_mapped();
    int rc = agti_curl_ensure();
    fprintf(out, "before=%d rc=%d after=%d msg=%s", before, rc, curl_mapped(),
            rc == AGT_OK ? "" : agt_error_message());
}

static void load_twice(FILE *out)
{
    int a = agti_curl_ensure();
    CURL *h = a == AGT_OK ? curl_easy_init() : NULL;
    if (h)
        curl_easy_cleanup(h);
    agti_curl_shutdown();
    int b = agti_curl_ensure(); /* initialised again after a shutdown */
    fprintf(out, "%d %d %d", a, h != NULL, b);
}

static void fetch_report(FILE *out)
{
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    agt_result *r = NULL;
    char root[] = "/tmp/agt-curldl-XXXXXX";
    if (!mkdtemp(root) || agt_registry_new(&reg) != AGT_OK ||
        agt_registry_load_builtin(reg, "chat") != AGT_OK ||
        agt_session_new(&s, reg, root) != AGT_OK) {
        fprintf(out, "setup failed: %s", agt_error_message());
        return;
    }
    agt_session_set_mode(s, AGT_MODE_YOLO);
    int rc = agt_session_dispatch(s, "f", "FetchURL", "{\"url\":\"http://127.0.0.1:9/\"}", &r);
    fprintf(out, "rc=%d status=%d mapped=%d text=%s", rc, r ? agt_result_status(r) : 0,
            curl_mapped(), r ? agt_result_text(r) : "");
    agt_result_free(r);
    agt_session_free(s);
    agt_registry_free(reg);
    rmdir(root);
}

int main(void)
{
    /* the reader itself: libc's SONAME is found, exactly (not a prefix) */
    T_CHECK(lib_mapped("libc.so.6"), "the SONAME reader finds libc.so.6");
    T_CHECK(!lib_mapped("libc.so"), "the SONAME reader compares whole names");
    T_CHECK(!curl_mapped(), "a process that made no transfer has no libcurl mapped");

    char *got = in_child(NULL, load_report);
    T_EQ_STR(got, "before=0 rc=0 after=1 msg=", "first transfer loads libcurl (standard name)");
    free(got);

    got = in_child(NULL, load_twice);
    T_EQ_STR(got, "0 1 0", "loaded once, handles work, initialised again after shutdown");
    free(got);

    got = in_child("/nonexistent/libcurl.so.4", load_report);
    T_CHECK(got && strncmp(got,
                           "before=0 rc=-14 after=0 msg=libcurl is not installed: tried "
                           "/nonexistent/libcurl.so.4 (",
                           strlen("before=0 rc=-14 after=0 msg=libcurl is not installed: tried "
                                  "/nonexistent/libcurl.so.4 (")) == 0,
            "a missing library: AGT_EUNSUPPORTED naming the file tried (got '%s')", got);
    free(got);

    got = in_child("libm.so.6", load_report);
    T_EQ_STR(got, "before=0 rc=-14 after=0 msg=the loaded libcurl has no curl_easy_init",
             "a library without libcurl's functions is refused and unloaded");
    free(got);

    got = in_child("/nonexistent/libcurl.so.4", fetch_report);
    T_CHECK(got && strstr(got, "libcurl is not installed: tried /nonexistent/libcurl.so.4") &&
                strstr(got, "mapped=0"),
            "FetchURL without libcurl says so in its result (got '%s')", got);
    free(got);

    T_CHECK(!lib_mapped("libxml2.so.2"), "a process that reduced no HTML has no libxml2 mapped");
    got = in_child_env("AGT_LIBXML2", NULL, html_report);
    T_EQ_STR(got, "before=0 available=1 rc=0 mapped=1 text=Title: T\n\nHello",
             "the first page loads libxml2 and reduces it");
    free(got);
    got = in_child_env("AGT_LIBXML2", "/nonexistent/libxml2.so.2", html_report);
    T_EQ_STR(got,
             "before=0 available=0 rc=-14 mapped=0 text=no HTML parser: libxml2 "
             "(/nonexistent/libxml2.so.2) could not be loaded",
             "without libxml2: AGT_EUNSUPPORTED naming the file");
    free(got);

    T_CHECK(!lib_mapped(AGTI_LIBGIT2_SONAME),
            "a process that opened no repository has no libgit2 mapped");
    got = in_child_env("AGT_LIBGIT2", NULL, git_report);
    T_EQ_STR(got, "before=0 rc=0 mapped=1 msg=", "the first repository loads libgit2");
    free(got);
    got = in_child_env("AGT_LIBGIT2", "/nonexistent/libgit2.so", git_report);
    T_CHECK(got && strstr(got, "before=0 rc=-14 mapped=0 msg=libgit2 ") &&
                strstr(got, " is not installed: tried /nonexistent/libgit2.so ("),
            "without libgit2: AGT_EUNSUPPORTED naming the file (got '%s')", got);
    free(got);
    got = in_child_env("AGT_LIBGIT2", "libm.so.6", git_report);
    T_EQ_STR(got,
             "before=0 rc=-14 mapped=0 msg=libm.so.6 is not libgit2 (it has no "
             "git_libgit2_version)",
             "a library that is not libgit2 is refused");
    free(got);
    return t_done();
}
