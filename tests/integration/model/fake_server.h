/*
 * Starts and stops a local test server script (fake_server.py here, and the
 * fetch tests' fetch_server.py): it listens on 127.0.0.1 with an ephemeral
 * port, prints the port, and exits when its stdin closes (so it also goes away
 * if the test crashes).
 */
#ifndef AGT_TEST_FAKE_SERVER_H
#define AGT_TEST_FAKE_SERVER_H

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct fake_server {
    pid_t pid;
    int stdin_fd;
    int port;
} fake_server;

/* argv[1] of the test is python3, argv[2] the server script. */
__attribute__((unused)) static int fake_server_start(fake_server *fs, const char *python,
                                                     const char *script)
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(python, python, script, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    int port = 0;
    if (!f || fscanf(f, "%d", &port) != 1 || port <= 0) {
        if (f)
            fclose(f);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    fclose(f);
    fs->pid = pid;
    fs->stdin_fd = in[1];
    fs->port = port;
    return 0;
}

__attribute__((unused)) static void fake_server_stop(fake_server *fs)
{
    if (fs->pid <= 0)
        return;
    close(fs->stdin_fd);
    int status;
    for (int i = 0; i < 100; i++) {
        if (waitpid(fs->pid, &status, WNOHANG) == fs->pid) {
            fs->pid = 0;
            return;
        }
        usleep(20000);
    }
    kill(fs->pid, SIGKILL);
    waitpid(fs->pid, &status, 0);
    fs->pid = 0;
}

/* The base URL of a scenario: http://127.0.0.1:PORT/<scenario>/v1 */
__attribute__((unused)) static void fake_server_url(const fake_server *fs, const char *scenario,
                                                    char *buf, size_t cap)
{
    snprintf(buf, cap, "http://127.0.0.1:%d/%s/v1", fs->port, scenario);
}

static size_t fake_collect(char *p, size_t size, size_t n, void *ud)
{
    FILE *f = ud;
    return fwrite(p, size, n, f);
}

/* GET <path> (from "/") on the server: the body as text (malloc'd), NULL when
 * the request fails. */
__attribute__((unused)) static char *fake_server_get(const fake_server *fs, const char *path)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", fs->port, path);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, fake_collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, mem);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    CURLcode cc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    fclose(mem);
    if (cc != CURLE_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* GET /<scenario>/last: the last request the server saw, as JSON text (malloc'd). */
__attribute__((unused)) static char *fake_server_last(const fake_server *fs, const char *scenario)
{
    char path[160];
    snprintf(path, sizeof path, "/%s/last", scenario);
    return fake_server_get(fs, path);
}

#endif
