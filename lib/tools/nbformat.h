/* Jupyter notebooks (nbformat 4) as the notebook tools read and write
 * them: the JSON text Jupyter writes (nbformat's writer: json.dumps with
 * indent 1, separators "," and ": ", keys in the file's order, non-ASCII
 * kept as UTF-8, a final newline), so a notebook changed by NotebookEdit
 * differs from the original only in the cells it changed. */
#ifndef AGT_LIB_TOOLS_NBFORMAT_H
#define AGT_LIB_TOOLS_NBFORMAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"

/* How a notebook file was written, so it is written back the same way. */
typedef struct agti_nb_style {
    int indent;     /* spaces per level (Jupyter: 1) */
    bool ascii;     /* non-ASCII written as \uXXXX (json.dumps ensure_ascii) */
    bool final_eol; /* the text ends with "\n" */
} agti_nb_style;

/* The style of the notebook text[0..len): its indent (1 when it cannot be
 * told), whether it escapes non-ASCII characters, its final newline. */
void agti_nb_style_of(const char *text, size_t len, agti_nb_style *st);

/* Appends v to b as Python's json.dumps(v, indent=st->indent,
 * separators=(",", ": "), ensure_ascii=st->ascii) writes it (objects in
 * their key order, reals in Python's shortest repr), then "\n" when
 * st->final_eol. */
void agti_nb_dump(agti_buf *b, const json_t *v, const agti_nb_style *st);

/* The lines of s[0..len) as Jupyter stores a multi-line string: split
 * after each line boundary of Python's str.splitlines (\n, \r, \r\n, \v,
 * \f, \x1c-\x1e, U+0085, U+2028, U+2029), each line keeping its boundary;
 * "" gives []. NULL when out of memory. */
json_t *agti_nb_split_lines(const char *s, size_t len);

/* The text of a notebook string field (a string, or an array of strings
 * joined), into b; false when v is neither. */
bool agti_nb_text(agti_buf *b, const json_t *v);

/* Appends to b the view Read gives of the notebook text[0..len) (display
 * name rel): a header line, then each cell as <cell index=.. id=.. type=..
 * execution_count=..>, its source, its outputs (stream text, results'
 * text/plain, errors' tracebacks, without ANSI escapes; images and other
 * kinds named with their size), </cell>. false (b unchanged) when the text
 * is not an nbformat 4 notebook. */
bool agti_nb_render(agti_buf *b, const char *rel, const char *text, size_t len);

#endif
