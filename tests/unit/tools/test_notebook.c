/* NotebookEdit on notebooks written by hand in the format Jupyter writes
 * (nbformat's writer: indent 1, sorted keys, ", "-less separators, UTF-8,
 * \u001b escapes in lower case, Python float reprs, a final newline): each
 * edit's exact bytes, the untouched cells byte for byte, outputs cleared,
 * new ids, other indents and ensure_ascii files kept, and the errors. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "wsfix.h"

/* The notebook: a markdown cell "intro" and a code cell "calc" with a
 * colored stream output, then metadata with reals in Python's repr. */
#define CELL_INTRO                                                                                 \
    "  {\n"                                                                                        \
    "   \"cell_type\": \"markdown\",\n"                                                            \
    "   \"id\": \"intro\",\n"                                                                      \
    "   \"metadata\": {},\n"                                                                       \
    "   \"source\": [\n"                                                                           \
    "    \"# Title\\n\",\n"                                                                        \
    "    \"Some *text* \xe2\x80\x94 \xc3\xa9\"\n"                                                  \
    "   ]\n"                                                                                       \
    "  }"
#define CELL_CALC                                                                                  \
    "  {\n"                                                                                        \
    "   \"cell_type\": \"code\",\n"                                                                \
    "   \"execution_count\": 3,\n"                                                                 \
    "   \"id\": \"calc\",\n"                                                                       \
    "   \"metadata\": {\n"                                                                         \
    "    \"scrolled\": true\n"                                                                     \
    "   },\n"                                                                                      \
    "   \"outputs\": [\n"                                                                          \
    "    {\n"                                                                                      \
    "     \"name\": \"stdout\",\n"                                                                 \
    "     \"output_type\": \"stream\",\n"                                                          \
    "     \"text\": [\n"                                                                           \
    "      \"\\u001b[31m4\\u001b[0m\\n\"\n"                                                        \
    "     ]\n"                                                                                     \
    "    }\n"                                                                                      \
    "   ],\n"                                                                                      \
    "   \"source\": [\n"                                                                           \
    "    \"x = 2\\n\",\n"                                                                          \
    "    \"print(x * 2)\"\n"                                                                       \
    "   ]\n"                                                                                       \
    "  }"
#define HEAD "{\n \"cells\": [\n"
#define TAIL                                                                                       \
    "\n ],\n"                                                                                      \
    " \"metadata\": {\n"                                                                           \
    "  \"kernelspec\": {\n"                                                                        \
    "   \"display_name\": \"Python 3\",\n"                                                         \
    "   \"language\": \"python\",\n"                                                               \
    "   \"name\": \"python3\"\n"                                                                   \
    "  },\n"                                                                                       \
    "  \"widget\": {\n"                                                                            \
    "   \"big\": 1e+16,\n"                                                                         \
    "   \"e300\": 1.5e+300,\n"                                                                     \
    "   \"int_real\": 2.0,\n"                                                                      \
    "   \"k\": 123456789012345.6,\n"                                                               \
    "   \"neg\": -0.0,\n"                                                                          \
    "   \"ratio\": 0.1,\n"                                                                         \
    "   \"small\": 1e-05,\n"                                                                       \
    "   \"third\": 0.3333333333333333\n"                                                           \
    "  }\n"                                                                                        \
    " },\n"                                                                                        \
    " \"nbformat\": 4,\n"                                                                          \
    " \"nbformat_minor\": 5\n"                                                                     \
    "}\n"
#define NB HEAD CELL_INTRO ",\n" CELL_CALC TAIL

/* Puts a file in place and reads it, as the model would before editing
 * it (a file rewritten behind the tools' back is refused otherwise). */
static void fresh(agt_session *s, const char *rel, const char *data)
{
    put_file(rel, data);
    char args[200];
    snprintf(args, sizeof args, "{\"path\":\"%s\",\"n_lines\":1}", rel);
    agt_result *r = call(s, "Read", args);
    T_EQ_INT(agt_result_is_error(r), 0, "Read %s", rel);
    agt_result_free(r);
}

static void nbedit(agt_session *s, json_t *args, const char *want, int want_error, const char *name)
{
    char *a = json_dumps(args, JSON_COMPACT);
    expect(s, "NotebookEdit", a, want, want_error, name);
    free(a);
    json_decref(args);
}

/* Runs a call that must succeed and returns its text (malloc'd). */
static char *nbedit_text(agt_session *s, json_t *args, const char *name)
{
    char *a = json_dumps(args, JSON_COMPACT);
    agt_result *r = call(s, "NotebookEdit", a);
    T_EQ_INT(agt_result_is_error(r), 0, "%s: is_error (%s)", name, flat(agt_result_text(r)));
    char *t = strdup(agt_result_text(r));
    agt_result_free(r);
    free(a);
    json_decref(args);
    return t;
}

static void test_replace(agt_session *s)
{
    put_file("nb.ipynb", NB);
    /* the same source again: the file comes back byte for byte */
    nbedit(s,
           json_pack("{s:s, s:s, s:s}", "path", "nb.ipynb", "cell_id", "intro", "new_source",
                     "# Title\nSome *text* \xe2\x80\x94 \xc3\xa9"),
           "Replaced the source of the markdown cell at index 0 (id intro) of nb.ipynb: 2 lines.",
           0, "replace with the same source");
    T_EQ_STR(get_file("nb.ipynb", NULL), NB, "round trip: every byte as Jupyter wrote it");

    nbedit(s,
           json_pack("{s:s, s:s, s:s}", "path", "nb.ipynb", "cell_id", "calc", "new_source",
                     "y = 3\nprint(y)\n"),
           "Replaced the source of the code cell at index 1 (id calc) of nb.ipynb: 2 lines; its "
           "outputs and execution count were cleared.",
           0, "replace a code cell");
    T_EQ_STR(get_file("nb.ipynb", NULL),
             HEAD CELL_INTRO ",\n"
                             "  {\n"
                             "   \"cell_type\": \"code\",\n"
                             "   \"execution_count\": null,\n"
                             "   \"id\": \"calc\",\n"
                             "   \"metadata\": {\n"
                             "    \"scrolled\": true\n"
                             "   },\n"
                             "   \"outputs\": [],\n"
                             "   \"source\": [\n"
                             "    \"y = 3\\n\",\n"
                             "    \"print(y)\\n\"\n"
                             "   ]\n"
                             "  }" TAIL,
             "replace a code cell: bytes");

    /* by index, and to markdown: outputs and execution_count go */
    nbedit(s,
           json_pack("{s:s, s:i, s:s, s:s}", "path", "nb.ipynb", "cell_index", 1, "new_source", "",
                     "cell_type", "markdown"),
           "Replaced the source of the markdown cell at index 1 (id calc) of nb.ipynb: 0 lines; "
           "it was a code cell.",
           0, "code to markdown by index");
    T_EQ_STR(get_file("nb.ipynb", NULL),
             HEAD CELL_INTRO ",\n"
                             "  {\n"
                             "   \"cell_type\": \"markdown\",\n"
                             "   \"id\": \"calc\",\n"
                             "   \"metadata\": {\n"
                             "    \"scrolled\": true\n"
                             "   },\n"
                             "   \"source\": []\n"
                             "  }" TAIL,
             "code to markdown: bytes");

    /* markdown to code: the new keys take their sorted places */
    nbedit(s,
           json_pack("{s:s, s:s, s:s, s:s}", "path", "nb.ipynb", "cell_id", "intro", "new_source",
                     "a\r\nb\rc\xe2\x80\xa8"
                     "d\fe",
                     "cell_type", "code"),
           "Replaced the source of the code cell at index 0 (id intro) of nb.ipynb: 5 lines; it "
           "was a markdown cell.",
           0, "markdown to code, Python's line boundaries");
    T_EQ_STR(get_file("nb.ipynb", NULL),
             HEAD "  {\n"
                  "   \"cell_type\": \"code\",\n"
                  "   \"execution_count\": null,\n"
                  "   \"id\": \"intro\",\n"
                  "   \"metadata\": {},\n"
                  "   \"outputs\": [],\n"
                  "   \"source\": [\n"
                  "    \"a\\r\\n\",\n"
                  "    \"b\\r\",\n"
                  "    \"c\xe2\x80\xa8\",\n"
                  "    \"d\\f\",\n"
                  "    \"e\"\n"
                  "   ]\n"
                  "  },\n"
                  "  {\n"
                  "   \"cell_type\": \"markdown\",\n"
                  "   \"id\": \"calc\",\n"
                  "   \"metadata\": {\n"
                  "    \"scrolled\": true\n"
                  "   },\n"
                  "   \"source\": []\n"
                  "  }" TAIL,
             "markdown to code: bytes");
}

/* The 8 hex digits after "(id " in a result text, or "". */
static const char *id_in(const char *text, char out[9])
{
    const char *p = strstr(text, "(id ");
    out[0] = '\0';
    if (p != NULL && strlen(p) >= 12 && p[12] == ')') {
        memcpy(out, p + 4, 8);
        out[8] = '\0';
    }
    return out;
}

static void test_insert_delete(agt_session *s)
{
    fresh(s, "nb.ipynb", NB);
    char *t = nbedit_text(s,
                          json_pack("{s:s, s:s, s:s, s:s, s:s}", "path", "nb.ipynb", "edit_mode",
                                    "insert", "cell_id", "intro", "cell_type", "markdown",
                                    "new_source", "## Part 2"),
                          "insert after intro");
    char id[9], want[4096], got_want[600];
    id_in(t, id);
    T_CHECK(strlen(id) == 8 && strspn(id, "0123456789abcdef") == 8, "new id is 8 hex digits: %s",
            id);
    snprintf(got_want, sizeof got_want,
             "Inserted a markdown cell at index 1 (id %s) of nb.ipynb, 1 line; the notebook has 3 "
             "cells now.",
             id);
    T_EQ_STR(t, got_want, "insert: text");
    free(t);
    snprintf(want, sizeof want,
             HEAD CELL_INTRO ",\n"
                             "  {\n"
                             "   \"cell_type\": \"markdown\",\n"
                             "   \"id\": \"%s\",\n"
                             "   \"metadata\": {},\n"
                             "   \"source\": [\n"
                             "    \"## Part 2\"\n"
                             "   ]\n"
                             "  },\n" CELL_CALC TAIL,
             id);
    T_EQ_STR(get_file("nb.ipynb", NULL), want, "insert after intro: bytes");

    /* at the end by index, an empty code cell */
    t = nbedit_text(s,
                    json_pack("{s:s, s:s, s:i, s:s, s:s}", "path", "nb.ipynb", "edit_mode",
                              "insert", "cell_index", 3, "cell_type", "code", "new_source", ""),
                    "insert at the end");
    char id2[9];
    id_in(t, id2);
    snprintf(got_want, sizeof got_want,
             "Inserted a code cell at index 3 (id %s) of nb.ipynb, 0 lines; the notebook has 4 "
             "cells now.",
             id2);
    T_EQ_STR(t, got_want, "insert at the end: text");
    free(t);
    T_CHECK(strcmp(id, id2) != 0, "the two new ids differ");

    /* delete both new cells: back to the original bytes */
    snprintf(got_want, sizeof got_want,
             "Deleted the code cell at index 3 (id %s) of nb.ipynb; the notebook has 3 cells now.",
             id2);
    nbedit(s,
           json_pack("{s:s, s:s, s:i}", "path", "nb.ipynb", "edit_mode", "delete", "cell_index", 3),
           got_want, 0, "delete by index");
    snprintf(got_want, sizeof got_want,
             "Deleted the markdown cell at index 1 (id %s) of nb.ipynb; the notebook has 2 cells "
             "now.",
             id);
    nbedit(s,
           json_pack("{s:s, s:s, s:s}", "path", "nb.ipynb", "edit_mode", "delete", "cell_id", id),
           got_want, 0, "delete by id");
    T_EQ_STR(get_file("nb.ipynb", NULL), NB, "after both deletes: the original bytes");

    /* insert with neither id nor index: at the start */
    t = nbedit_text(s,
                    json_pack("{s:s, s:s, s:s, s:s}", "path", "nb.ipynb", "edit_mode", "insert",
                              "cell_type", "code", "new_source", "import os"),
                    "insert at the start");
    id_in(t, id);
    snprintf(want, sizeof want,
             HEAD "  {\n"
                  "   \"cell_type\": \"code\",\n"
                  "   \"execution_count\": null,\n"
                  "   \"id\": \"%s\",\n"
                  "   \"metadata\": {},\n"
                  "   \"outputs\": [],\n"
                  "   \"source\": [\n"
                  "    \"import os\"\n"
                  "   ]\n"
                  "  },\n" CELL_INTRO ",\n" CELL_CALC TAIL,
             id);
    T_EQ_STR(get_file("nb.ipynb", NULL), want, "insert at the start: bytes");
    free(t);
}

/* Formats other than Jupyter's own: kept as they are. */
static void test_styles(agt_session *s)
{
    /* indent 2, no final newline, nbformat 4.4 (cells without ids) */
    put_file("i2.ipynb", "{\n"
                         "  \"cells\": [\n"
                         "    {\n"
                         "      \"cell_type\": \"code\",\n"
                         "      \"execution_count\": 1,\n"
                         "      \"metadata\": {},\n"
                         "      \"outputs\": [],\n"
                         "      \"source\": \"1 + 1\"\n"
                         "    }\n"
                         "  ],\n"
                         "  \"metadata\": {},\n"
                         "  \"nbformat\": 4,\n"
                         "  \"nbformat_minor\": 4\n"
                         "}");
    nbedit(s,
           json_pack("{s:s, s:s, s:s, s:s}", "path", "i2.ipynb", "edit_mode", "insert", "cell_type",
                     "markdown", "new_source", "note\n"),
           "Inserted a markdown cell at index 0 of i2.ipynb, 1 line; the notebook has 2 cells now.",
           0, "nbformat 4.4: a new cell without id");
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "i2.ipynb", "cell_index", 1, "new_source", "2"),
           "Replaced the source of the code cell at index 1 of i2.ipynb: 1 line; its outputs and "
           "execution count were cleared.",
           0, "nbformat 4.4: replace by index");
    T_EQ_STR(get_file("i2.ipynb", NULL),
             "{\n"
             "  \"cells\": [\n"
             "    {\n"
             "      \"cell_type\": \"markdown\",\n"
             "      \"metadata\": {},\n"
             "      \"source\": [\n"
             "        \"note\\n\"\n"
             "      ]\n"
             "    },\n"
             "    {\n"
             "      \"cell_type\": \"code\",\n"
             "      \"execution_count\": null,\n"
             "      \"metadata\": {},\n"
             "      \"outputs\": [],\n"
             "      \"source\": [\n"
             "        \"2\"\n"
             "      ]\n"
             "    }\n"
             "  ],\n"
             "  \"metadata\": {},\n"
             "  \"nbformat\": 4,\n"
             "  \"nbformat_minor\": 4\n"
             "}",
             "indent 2 and no final newline kept");
    nbedit(s, json_pack("{s:s, s:s, s:s}", "path", "i2.ipynb", "cell_id", "x", "new_source", ""),
           "No cell of i2.ipynb has the id 'x'. Its cells have no ids (nbformat before 4.5): use "
           "cell_index. Nothing was changed.",
           1, "no ids to look up");

    /* ensure_ascii notebooks keep their escapes; keys not sorted stay */
    put_file("a.ipynb", "{\n"
                        " \"nbformat\": 4,\n"
                        " \"nbformat_minor\": 5,\n"
                        " \"cells\": [\n"
                        "  {\n"
                        "   \"id\": \"c1\",\n"
                        "   \"cell_type\": \"markdown\",\n"
                        "   \"source\": [\n"
                        "    \"caf\\u00e9 \\ud83d\\ude00\"\n"
                        "   ],\n"
                        "   \"metadata\": {}\n"
                        "  }\n"
                        " ],\n"
                        " \"metadata\": {}\n"
                        "}\n");
    nbedit(s,
           json_pack("{s:s, s:s, s:s}", "path", "a.ipynb", "cell_id", "c1", "new_source",
                     "\xc3\xbc\n\"q\"\\"),
           "Replaced the source of the markdown cell at index 0 (id c1) of a.ipynb: 2 lines.", 0,
           "ensure_ascii notebook");
    T_EQ_STR(get_file("a.ipynb", NULL),
             "{\n"
             " \"nbformat\": 4,\n"
             " \"nbformat_minor\": 5,\n"
             " \"cells\": [\n"
             "  {\n"
             "   \"id\": \"c1\",\n"
             "   \"cell_type\": \"markdown\",\n"
             "   \"source\": [\n"
             "    \"\\u00fc\\n\",\n"
             "    \"\\\"q\\\"\\\\\"\n"
             "   ],\n"
             "   \"metadata\": {}\n"
             "  }\n"
             " ],\n"
             " \"metadata\": {}\n"
             "}\n",
             "ensure_ascii and the key order kept");
}

static void test_errors(agt_session *s)
{
    fresh(s, "nb.ipynb", NB);
    nbedit(s, json_pack("{s:s, s:s, s:s}", "path", "nb.ipynb", "cell_id", "nope", "new_source", ""),
           "No cell of nb.ipynb has the id 'nope'. Its cells' ids: intro, calc. Nothing was "
           "changed.",
           1, "unknown id");
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "nb.ipynb", "cell_index", 2, "new_source", ""),
           "cell_index 2 is out of range: nb.ipynb has 2 cells, so an index is 0-1.", 1,
           "index out of range");
    nbedit(s,
           json_pack("{s:s, s:s, s:i, s:s, s:s}", "path", "nb.ipynb", "edit_mode", "insert",
                     "cell_index", 3, "cell_type", "code", "new_source", ""),
           "cell_index 3 is out of range: nb.ipynb has 2 cells, so an insert position is 0-2.", 1,
           "insert position out of range");
    nbedit(s,
           json_pack("{s:s, s:s, s:i, s:s}", "path", "nb.ipynb", "cell_id", "calc", "cell_index", 1,
                     "new_source", ""),
           "Give cell_id or cell_index, not both: they could name different cells.", 1, "both");
    nbedit(s, json_pack("{s:s, s:s}", "path", "nb.ipynb", "new_source", ""),
           "NotebookEdit needs cell_id or cell_index to replace a cell (Read the notebook to see "
           "its cells with their ids and indexes).",
           1, "neither");
    nbedit(s, json_pack("{s:s, s:s}", "path", "nb.ipynb", "cell_id", "calc"),
           "new_source is needed to replace a cell.", 1, "no new_source");
    nbedit(
        s,
        json_pack("{s:s, s:s, s:s}", "path", "nb.ipynb", "edit_mode", "insert", "new_source", "x"),
        "cell_type (code or markdown) is needed to insert a cell.", 1, "insert without type");
    put_file("n.py", "x = 1\n");
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "n.py", "cell_index", 0, "new_source", "y"),
           "'n.py' is not a notebook (.ipynb); NotebookEdit changes Jupyter notebooks only. Use "
           "Edit or Write for other files.",
           1, "not a notebook by name");
    T_EQ_STR(get_file("nb.ipynb", NULL), NB, "errors: the notebook is untouched");

    put_file("bad.ipynb", "{\n \"cells\": [\n");
    agt_result *r =
        call(s, "NotebookEdit", "{\"path\":\"bad.ipynb\",\"cell_index\":0,\"new_source\":\"\"}");
    const char *t = agt_result_text(r);
    T_CHECK(strncmp(t, "bad.ipynb is not valid JSON (line ", 34) == 0 &&
                strstr(t, "), so it cannot be edited as a notebook. Nothing was changed. Read it "
                          "to see the damage, and repair it with Write.") != NULL,
            "invalid JSON: %s", flat(t));
    T_EQ_INT(agt_result_status(r), AGT_EPARSE, "invalid JSON: status");
    agt_result_free(r);
    put_file("dup.ipynb", "{\"cells\": [], \"cells\": [], \"nbformat\": 4}");
    expect_prefix(s, "NotebookEdit",
                  "{\"path\":\"dup.ipynb\",\"cell_index\":0,\"new_source\":\"\"}",
                  "dup.ipynb is not valid JSON (line 1, column ", AGT_EPARSE,
                  "duplicate keys (they would be lost)");
    put_file("obj.ipynb", "{\"cells\": {}, \"nbformat\": 4}\n");
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "obj.ipynb", "cell_index", 0, "new_source", ""),
           "obj.ipynb is not a Jupyter notebook: it needs a top-level object with \"cells\" (an "
           "array) and \"nbformat\" (a number). Nothing was changed.",
           1, "cells not an array");
    put_file("v3.ipynb", "{\"cells\": [], \"nbformat\": 3}\n");
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "v3.ipynb", "cell_index", 0, "new_source", ""),
           "v3.ipynb is a notebook of nbformat 3; NotebookEdit changes nbformat 4 notebooks only "
           "(convert it with jupyter nbconvert --to notebook).",
           1, "nbformat 3");
    put_file("cell.ipynb", "{\"cells\": [{\"source\": []}], \"nbformat\": 4}\n");
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "cell.ipynb", "cell_index", 0, "new_source", ""),
           "Cell 0 of cell.ipynb is not a notebook cell (an object with a \"cell_type\"). Nothing "
           "was changed.",
           1, "a cell without cell_type");
    put_file("empty.ipynb", "{\"cells\": [], \"nbformat\": 4}\n");
    nbedit(
        s,
        json_pack("{s:s, s:s, s:i}", "path", "empty.ipynb", "edit_mode", "delete", "cell_index", 0),
        "empty.ipynb has no cells; there is none to delete.", 1, "delete in an empty notebook");
    expect(s, "NotebookEdit", "{\"path\":\"missing.ipynb\",\"cell_index\":0,\"new_source\":\"\"}",
           "missing.ipynb does not exist. Check the path (Glob finds files by name).", 1,
           "a missing notebook");
}

static void test_stale(agt_session *s)
{
    put_file("st.ipynb", NB);
    agt_result *r = call(s, "Read", "{\"path\":\"st.ipynb\",\"n_lines\":3}");
    agt_result_free(r);
    put_file("st.ipynb", HEAD CELL_CALC TAIL);
    nbedit(s, json_pack("{s:s, s:i, s:s}", "path", "st.ipynb", "cell_index", 0, "new_source", ""),
           "st.ipynb has changed on disk since it was last read (changed now: lines removed after "
           "line 3), by another program or a command. NotebookEdit did not change it. Read it "
           "again, then redo the change on what the file holds now.",
           1, "a notebook changed since it was read");
}

/* Read shows a notebook as its cells, paged like any file. */
static void test_read(agt_session *s)
{
    put_file("v.ipynb", NB);
    expect(s, "Read", "{\"path\":\"v.ipynb\"}",
           "1\tJupyter notebook v.ipynb: 2 cells (nbformat 4.5, python). This is a view of its "
           "cells, not its JSON text: change a cell with NotebookEdit (cell_id or cell_index).\n"
           "2\t<cell index=\"0\" id=\"intro\" type=\"markdown\">\n"
           "3\t# Title\n"
           "4\tSome *text* \xe2\x80\x94 \xc3\xa9\n"
           "5\t</cell>\n"
           "6\t<cell index=\"1\" id=\"calc\" type=\"code\" execution_count=\"3\">\n"
           "7\tx = 2\n"
           "8\tprint(x * 2)\n"
           "9\t<output stream=\"stdout\">\n"
           "10\t4\n"
           "11\t</output>\n"
           "12\t</cell>\n"
           "\nRead 12 lines (1-12) of 12; reached the end of the file.",
           0, "a notebook as cells");
    expect(s, "Read", "{\"path\":\"v.ipynb\",\"line_offset\":6,\"n_lines\":2}",
           "6\t<cell index=\"1\" id=\"calc\" type=\"code\" execution_count=\"3\">\n"
           "7\tx = 2\n"
           "\nRead 2 lines (6-7) of 12; stopped at n_lines (2); continue with line_offset 8.",
           0, "a window of the view");
    /* what Read recorded is the file: NotebookEdit after it applies */
    nbedit(s,
           json_pack("{s:s, s:s, s:s}", "path", "v.ipynb", "cell_id", "intro", "new_source",
                     "# Title\nSome *text* \xe2\x80\x94 \xc3\xa9"),
           "Replaced the source of the markdown cell at index 0 (id intro) of v.ipynb: 2 lines.", 0,
           "NotebookEdit after Read of the view");

    /* results, errors, images, other kinds; no ids (4.4) */
    put_file("o.ipynb",
             "{\"nbformat\": 4, \"nbformat_minor\": 4, \"metadata\": {\"language_info\": "
             "{\"name\": \"julia\"}}, \"cells\": [{\"cell_type\": \"code\", "
             "\"execution_count\": null, \"metadata\": {}, \"source\": \"f()\", \"outputs\": ["
             "{\"output_type\": \"execute_result\", \"execution_count\": 1, \"metadata\": {}, "
             "\"data\": {\"text/plain\": [\"42\"], \"image/png\": \"iVBORw0K\"}},"
             "{\"output_type\": \"display_data\", \"metadata\": {}, \"data\": "
             "{\"text/html\": [\"<b>x</b>\"]}},"
             "{\"output_type\": \"error\", \"ename\": \"ValueError\", \"evalue\": \"bad\", "
             "\"traceback\": [\"\\u001b[0;31mValueError\\u001b[0m: bad\"]}]}, "
             "{\"cell_type\": \"raw\", \"metadata\": {}, \"source\": []}]}");
    expect(s, "Read", "{\"path\":\"o.ipynb\"}",
           "1\tJupyter notebook o.ipynb: 2 cells (nbformat 4.4, julia). This is a view of its "
           "cells, not its JSON text: change a cell with NotebookEdit (cell_id or cell_index).\n"
           "2\t<cell index=\"0\" type=\"code\">\n"
           "3\tf()\n"
           "4\t<output result>\n"
           "5\t[image/png image, 8 bytes of base64: not shown here]\n"
           "6\t42\n"
           "7\t</output>\n"
           "8\t<output display>\n"
           "9\t[text/html output, 8 characters: not shown here]\n"
           "10\t</output>\n"
           "11\t<output error=\"ValueError\">\n"
           "12\tValueError: bad\n"
           "13\t</output>\n"
           "14\t</cell>\n"
           "15\t<cell index=\"1\" type=\"raw\">\n"
           "16\t</cell>\n"
           "\nRead 16 lines (1-16) of 16; reached the end of the file.",
           0, "outputs of every kind");

    /* not a notebook after all: shown as text */
    put_file("t.ipynb", "not json\n");
    expect(s, "Read", "{\"path\":\"t.ipynb\"}",
           "1\tnot json\n\nRead 1 line (1-1) of 1; reached the end of the file.", 0,
           "an .ipynb that is not JSON is shown as text");
}

int main(void)
{
    make_ws("notebook");
    agt_session *s = new_session();
    test_replace(s);
    test_insert_delete(s);
    test_styles(s);
    test_errors(s);
    test_stale(s);
    test_read(s);
    agt_session_free(s);
    rm_ws();
    return t_done();
}
