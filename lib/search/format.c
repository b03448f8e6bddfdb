/* Result ordering and ripgrep-style text rendering for the Grep tool. */
#include <stdlib.h>
#include <string.h>

#include "search/search_internal.h"

static int cmp_mtime(const void *a, const void *b)
{
    const agti_search_file *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns > y->mtime_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

void agti_search_sort_by_mtime(agti_search_result *res)
{
    if (res != NULL && res->nfiles > 1)
        qsort(res->files, res->nfiles, sizeof *res->files, cmp_mtime);
}

void agti_search_format_line(agti_buf *b, const agti_search_line *l, bool with_line_numbers)
{
    char sep = l->is_match ? ':' : '-';
    agti_buf_putc(b, sep);
    if (with_line_numbers)
        agti_buf_printf(b, "%llu%c", (unsigned long long)l->line_no, sep);
    if (l->cut_from > 0)
        agti_buf_printf(b, "[... %zu characters] ", l->cut_from);
    agti_buf_put(b, l->text, l->len);
    if (l->cut)
        agti_buf_puts(b, " [... line cut]");
    agti_buf_putc(b, '\n');
}

void agti_search_format(agti_buf *b, const agti_searcher *s, const agti_search_result *res,
                        bool with_line_numbers)
{
    int mode = s->o.mode;
    bool context = s->o.before > 0 || s->o.after > 0;
    bool first_group = true;
    for (size_t i = 0; i < res->nfiles; i++) {
        const agti_search_file *f = &res->files[i];
        if (mode == AGTI_SEARCH_FILES || (f->binary && mode != AGTI_SEARCH_COUNT)) {
            agti_buf_puts(b, f->path);
            if (f->binary && mode == AGTI_SEARCH_CONTENT)
                agti_buf_puts(b, ": binary file matches");
            agti_buf_putc(b, '\n');
            continue;
        }
        if (mode == AGTI_SEARCH_COUNT) {
            agti_buf_printf(b, "%s:%zu\n", f->path, f->nmatch_lines);
            continue;
        }
        for (size_t k = 0; k < f->nlines; k++) {
            const agti_search_line *l = &f->lines[k];
            bool starts = k == 0 || l->group_start;
            if (context && starts && !first_group)
                agti_buf_puts(b, "--\n");
            if (starts)
                first_group = false;
            agti_buf_puts(b, f->path);
            agti_search_format_line(b, l, with_line_numbers);
        }
    }
}
