/*
 * agt-tools: the tool layer from the command line. Lists and exports the
 * catalogue, validates JSON against a schema, and dispatches real tool calls
 * through a session — what an agent host does for each call of its model.
 * Built on the public headers only.
 */
#include <agenttools/agenttools.h>
#include <stdio.h>

#include "cli_sandbox.h"
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: agt-tools [options] COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  list                       tools in the catalogue, offered or not\n"
          "  export FORMAT              openai | anthropic | mcp | native (offered tools)\n"
          "  call TOOL [ARGS|-]         dispatch one tool call (ARGS: JSON object; - reads stdin)\n"
          "  validate SCHEMA [INSTANCE|-]  validate a JSON file against a JSON Schema file\n"
          "  demo                       a short tour: catalogue, a good call, a bad call\n"
          "  info                       what the sandbox enforces here (probe and policy)\n"
          "\n"
          "options:\n"
          "  --set NAME      built-in set to load: chat (default) or review; repeatable\n"
          "  --tools FILE    replace the catalogue with a tools.json file\n"
          "  --root DIR      workspace root (default: current directory)\n"
          "  --phase PHASE   all (default), plan or main\n"
          "  --version       print the program name and the library version, "
          "exit\n" CLI_SANDBOX_USAGE,
          f);
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (cap - n - 1 == 0) {
            char *p = realloc(buf, cap * 2);
            if (p == NULL) {
                free(buf);
                return NULL;
            }
            buf = p;
            cap *= 2;
        }
    }
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static char *read_file(const char *path, size_t *len)
{
    if (strcmp(path, "-") == 0)
        return read_all(stdin, len);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "agt-tools: cannot open %s\n", path);
        return NULL;
    }
    char *s = read_all(f, len);
    fclose(f);
    return s;
}

static int fail(const char *what)
{
    fprintf(stderr, "agt-tools: %s: %s\n", what, agt_error_message());
    return 2;
}

static int cmd_list(agt_registry *reg, int phase)
{
    for (size_t i = 0; i < agt_registry_count(reg); i++) {
        const char *name = agt_registry_name_at(reg, i);
        printf("%-16s %s\n", name,
               agt_registry_is_offered(reg, name, phase) ? "offered" : "not offered (no provider)");
    }
    return 0;
}

static int cmd_export(agt_registry *reg, const char *format, int phase)
{
    char *out = NULL;
    if (agt_registry_export(reg, format, phase, &out) != AGT_OK)
        return fail("export");
    puts(out);
    agt_free(out);
    return 0;
}

static int print_result(agt_result *r)
{
    printf("%s\n", agt_result_text(r));
    int err = agt_result_is_error(r);
    agt_result_free(r);
    return err ? 1 : 0;
}

static int cmd_call(agt_session *s, const char *tool, const char *args)
{
    size_t len = 0;
    char *owned = NULL;
    if (args != NULL && strcmp(args, "-") == 0) {
        owned = read_file("-", &len);
        args = owned;
    }
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "cli-1", tool, args, &r);
    free(owned);
    if (rc == AGT_EPENDING) {
        fprintf(stderr, "agt-tools: the call waits for approval\n");
        return 3;
    }
    if (rc != AGT_OK)
        return fail("dispatch");
    return print_result(r);
}

static int cmd_validate(const char *schema_path, const char *instance_path)
{
    size_t slen = 0, ilen = 0;
    char *schema_text = read_file(schema_path, &slen);
    char *inst = schema_text ? read_file(instance_path, &ilen) : NULL;
    if (schema_text == NULL || inst == NULL) {
        free(schema_text);
        return 2;
    }
    agt_schema *schema = NULL;
    int rc = agt_schema_compile(&schema, schema_text, slen);
    free(schema_text);
    if (rc != AGT_OK) {
        free(inst);
        return fail(schema_path);
    }
    char *errors = NULL;
    rc = agt_schema_validate(schema, inst, ilen, &errors);
    free(inst);
    agt_schema_free(schema);
    if (rc == AGT_OK) {
        puts("valid");
        return 0;
    }
    if (rc == AGT_EINVALID) {
        printf("invalid: %s\n", errors);
        agt_free(errors);
        return 1;
    }
    return fail(instance_path);
}

static int cmd_demo(agt_registry *reg, agt_session *s)
{
    char *out = NULL;
    printf("libagenttools %s, workspace %s\n", agt_version(), agt_session_root(s));
    size_t offered = 0;
    for (size_t i = 0; i < agt_registry_count(reg); i++)
        offered += agt_registry_is_offered(reg, agt_registry_name_at(reg, i), AGT_PHASE_ALL) == 1;
    printf("catalogue: %zu tools, %zu offered (the rest need a host callback)\n",
           agt_registry_count(reg), offered);
    if (agt_registry_export(reg, "openai", AGT_PHASE_ALL, &out) == AGT_OK) {
        printf("offered to the model (OpenAI tools JSON, %zu bytes)\n", strlen(out));
        agt_free(out);
    }
    const char *calls[][2] = {
        {"Glob", "{\"pattern\":\"include/agenttools/*.h\"}"},
        {"Grep", "{\"pattern\":\"AGT_EXTERN int agt_session_dispatch\",\"path\":\"include\","
                 "\"output_mode\":\"content\",\"-A\":1}"},
        {"Read", "{\"path\":\"README.md\",\"n_lines\":3}"},
        {"TodoList", "{\"todos\":[{\"title\":\"Read the failing test\",\"status\":\"done\"},"
                     "{\"title\":\"Fix the parser\",\"status\":\"in_progress\"},"
                     "{\"title\":\"Run the suite\",\"status\":\"pending\"}]}"},
        {"TodoList", "{\"todos\":[{\"title\":\"Ship it\",\"status\":\"finished\"}],\"x\":1}"},
        {"Read", "{\"path\":\"../../etc/passwd\"}"},
        {"Write", "{\"path\":\"notes.txt\",\"content\":\"hello\"}"},
        {"Teleport", "{}"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        printf("\n> %s %s\n", calls[i][0], calls[i][1]);
        agt_result *r = NULL;
        int rc = agt_session_dispatch(s, "demo", calls[i][0], calls[i][1], &r);
        if (rc == AGT_EPENDING) {
            /* manual mode: writes wait for the user; the demo declines */
            printf("[approval needed] the host would ask the user now; declining.\n");
            rc = agt_session_answer(s, "demo", AGT_DECISION_REJECT, "demo: no writes", &r);
        }
        if (rc != AGT_OK)
            return fail("dispatch");
        printf("%s%s\n", agt_result_is_error(r) ? "[error] " : "", agt_result_text(r));
        agt_result_free(r);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *sets[4];
    int nsets = 0, phase = AGT_PHASE_ALL;
    const char *tools_file = NULL, *root = ".";
    int i = 1;
    cli_sandbox sbo;
    cli_sandbox_init(&sbo);
    char sberr[512];
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("agt-tools %s\n", agt_version());
            return 0;
        }
        int sr = cli_sandbox_arg(&sbo, argc, argv, &i, sberr, sizeof sberr);
        if (sr < 0) {
            fprintf(stderr, "agt-tools: %s\n", sberr);
            return 2;
        }
        if (sr > 0)
            continue;
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        if (strcmp(argv[i], "--set") == 0 && nsets < 4)
            sets[nsets++] = argv[++i];
        else if (strcmp(argv[i], "--tools") == 0)
            tools_file = argv[++i];
        else if (strcmp(argv[i], "--root") == 0)
            root = argv[++i];
        else if (strcmp(argv[i], "--phase") == 0) {
            const char *p = argv[++i];
            phase = strcmp(p, "plan") == 0   ? AGT_PHASE_PLAN
                    : strcmp(p, "main") == 0 ? AGT_PHASE_MAIN
                    : strcmp(p, "all") == 0  ? AGT_PHASE_ALL
                                             : -1;
            if (phase < 0) {
                fprintf(stderr, "agt-tools: --phase takes all, plan or main\n");
                return 2;
            }
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[i++];
    if (strcmp(cmd, "validate") == 0) {
        if (i >= argc) {
            usage(stderr);
            return 2;
        }
        return cmd_validate(argv[i], i + 1 < argc ? argv[i + 1] : "-");
    }

    agt_registry *reg = NULL;
    agt_session *s = NULL;
    int rc = 2;
    if (agt_registry_new(&reg) != AGT_OK)
        return fail("registry");
    if (nsets == 0)
        sets[nsets++] = "chat";
    for (int k = 0; k < nsets; k++)
        if (agt_registry_load_builtin(reg, sets[k]) != AGT_OK) {
            rc = fail(sets[k]);
            goto out;
        }
    if (tools_file != NULL) {
        size_t len = 0;
        char *text = read_file(tools_file, &len);
        if (text == NULL)
            goto out;
        int lrc = agt_registry_load_json(reg, text, len);
        free(text);
        if (lrc != AGT_OK) {
            rc = fail(tools_file);
            goto out;
        }
    }
    agt_registry_freeze(reg);
    if (agt_session_new(&s, reg, root) != AGT_OK) {
        rc = fail("workspace");
        goto out;
    }
    agt_session_set_phase(s, phase);
    if (cli_sandbox_apply(&sbo, s, sberr, sizeof sberr) != AGT_OK) {
        fprintf(stderr, "agt-tools: %s\n", sberr);
        goto out;
    }
    if (strcmp(cmd, "info") == 0) {
        cli_sandbox_print(stdout, s);
        rc = 0;
    } else if (strcmp(cmd, "list") == 0)
        rc = cmd_list(reg, phase);
    else if (strcmp(cmd, "export") == 0 && i < argc)
        rc = cmd_export(reg, argv[i], phase);
    else if (strcmp(cmd, "call") == 0 && i < argc)
        rc = cmd_call(s, argv[i], i + 1 < argc ? argv[i + 1] : NULL);
    else if (strcmp(cmd, "demo") == 0)
        rc = cmd_demo(reg, s);
    else
        usage(stderr);
out:
    agt_session_free(s);
    agt_registry_free(reg);
    return rc;
}
