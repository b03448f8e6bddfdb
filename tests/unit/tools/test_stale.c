/* The staleness check of the editing tools: a file changed on disk since
 * the session last read (or wrote) it is refused by Edit, MultiEdit and
 * Write with the changed line ranges, even when the change keeps its size
 * and modification time; partial reads count; the record survives save and
 * restore; the session options turn the check off or require a read first.
 * Expected texts and line ranges are worked out by hand from the inputs. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "wsfix.h"

#define PRE "The lines around it now read:"
#define TAIL                                                                                       \
    ", by another program or a command. Edit did not change it. Read it again, then redo the "     \
    "change on what the file holds now."

static void edit(agt_session *s, const char *path, const char *old, const char *nw,
                 const char *want, int want_error, const char *name)
{
    json_t *a = json_pack("{s:s, s:s, s:s}", "path", path, "old_string", old, "new_string", nw);
    char *args = json_dumps(a, JSON_COMPACT);
    expect(s, "Edit", args, want, want_error, name);
    free(args);
    json_decref(a);
}

static void read_ok(agt_session *s, const char *args, const char *name)
{
    agt_result *r = call(s, "Read", args);
    T_EQ_INT(agt_result_is_error(r), 0, "Read: %s", name);
    agt_result_free(r);
}

static void test_same_size_same_mtime(agt_session *s)
{
    put_file("a.txt", "one\ntwo\nsix\n");
    read_ok(s, "{\"path\":\"a.txt\"}", "a.txt");
    sneak("a.txt", "one\nTWO\nsix\n");
    edit(s, "a.txt", "six", "ten",
         "a.txt has changed on disk since it was last read (changed now: line 2)" TAIL, 1,
         "same size and mtime: the hash catches it");
    T_EQ_STR(get_file("a.txt", NULL), "one\nTWO\nsix\n", "refused: the file is untouched");
    read_ok(s, "{\"path\":\"a.txt\"}", "a.txt again");
    edit(s, "a.txt", "six", "ten",
         "Edited a.txt: replaced 1 occurrence at line 3. " PRE "\n1\tone\n2\tTWO\n3\tten", 0,
         "after a new Read the edit applies");
    /* the tool's own write counts as seen: a second edit needs no Read */
    edit(s, "a.txt", "one", "1",
         "Edited a.txt: replaced 1 occurrence at line 1. " PRE "\n1\t1\n2\tTWO\n3\tten", 0,
         "an edit after an edit");
    T_EQ_STR(get_file("a.txt", NULL), "1\nTWO\nten\n", "both edits applied");
}

static void test_partial_read(agt_session *s)
{
    put_file("p.txt", "l1\nl2\nl3\nl4\nl5\n");
    read_ok(s, "{\"path\":\"p.txt\",\"line_offset\":2,\"n_lines\":1}", "line 2 only");
    sneak("p.txt", "l1\nl2\nl3\nl4\nL5\n");
    edit(s, "p.txt", "l2", "x",
         "p.txt has changed on disk since it was last read (changed now: line 5)" TAIL, 1,
         "a partial Read counts, and the whole file is compared");
    read_ok(s, "{\"path\":\"p.txt\",\"line_offset\":-1}", "last line only");
    edit(s, "p.txt", "l2", "x",
         "Edited p.txt: replaced 1 occurrence at line 2. " PRE "\n1\tl1\n2\tx\n3\tl3\n4\tl4", 0,
         "after a partial Read the edit applies");
}

static void test_ranges(agt_session *s)
{
    put_file("r.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    read_ok(s, "{\"path\":\"r.txt\"}", "r.txt");
    /* line 2 changed, line 5 deleted, a line inserted after 8 */
    sneak("r.txt", "1\nX\n3\n4\n6\n7\n8\nnew\n9\n10\n");
    edit(s, "r.txt", "3", "c",
         "r.txt has changed on disk since it was last read (changed now: line 2, lines removed "
         "after line 4, line 8)" TAIL,
         1, "three ranges");
    read_ok(s, "{\"path\":\"r.txt\"}", "r.txt again");
    sneak("r.txt", "6\n7\n8\nnew\n9\n10\n");
    edit(s, "r.txt", "6", "f",
         "r.txt has changed on disk since it was last read (changed now: lines removed at the "
         "start)" TAIL,
         1, "lines removed at the start");
    read_ok(s, "{\"path\":\"r.txt\"}", "r.txt a third time");
    sneak("r.txt", "a\nb\nc\n6\n7\n8\nnew\n9\n10\nz\n");
    edit(s, "r.txt", "6", "f",
         "r.txt has changed on disk since it was last read (changed now: lines 1-3, line 10)" TAIL,
         1, "a block of lines and the last line");
    read_ok(s, "{\"path\":\"r.txt\"}", "r.txt a fourth time");
    /* seven separate one-line changes: five are named */
    put_file("many.txt", "a\n-\nb\n-\nc\n-\nd\n-\ne\n-\nf\n-\ng\n");
    read_ok(s, "{\"path\":\"many.txt\"}", "many.txt");
    sneak("many.txt", "A\n-\nB\n-\nC\n-\nD\n-\nE\n-\nF\n-\nG\n");
    edit(s, "many.txt", "-", "+",
         "many.txt has changed on disk since it was last read (changed now: line 1, line 3, line "
         "5, line 7, line 9 and 2 more)" TAIL,
         1, "more than five ranges");
    /* a final line break removed: the last line differs */
    put_file("nl.txt", "x\ny\n");
    read_ok(s, "{\"path\":\"nl.txt\"}", "nl.txt");
    sneak("nl.txt", "x\ny");
    edit(s, "nl.txt", "x", "z",
         "nl.txt has changed on disk since it was last read (changed now: line 2)" TAIL, 1,
         "the final line break");
    /* an empty file that got content */
    put_file("e.txt", "");
    read_ok(s, "{\"path\":\"e.txt\"}", "e.txt (empty)");
    sneak("e.txt", "p\nq\n");
    edit(s, "e.txt", "p", "P",
         "e.txt has changed on disk since it was last read (changed now: lines 1-2)" TAIL, 1,
         "an empty file filled");
}

static void test_other_tools(agt_session *s)
{
    put_file("m.txt", "alpha\nbeta\n");
    read_ok(s, "{\"path\":\"m.txt\"}", "m.txt");
    sneak("m.txt", "alpha\nBETA\n");
    expect(s, "MultiEdit",
           "{\"path\":\"m.txt\",\"edits\":[{\"old_string\":\"alpha\",\"new_string\":\"a\"}]}",
           "m.txt has changed on disk since it was last read (changed now: line 2), by another "
           "program or a command. MultiEdit did not change it. Read it again, then redo the "
           "change on what the file holds now.",
           1, "MultiEdit refused");
    expect(s, "Write", "{\"path\":\"m.txt\",\"content\":\"new\\n\"}",
           "m.txt has changed on disk since it was last read (changed now: line 2), by another "
           "program or a command. Write did not change it. Read it again, then redo the change "
           "on what the file holds now.",
           1, "Write (overwrite) refused");
    expect(s, "Write", "{\"path\":\"m.txt\",\"content\":\"more\\n\",\"mode\":\"append\"}",
           "m.txt has changed on disk since it was last read (changed now: line 2), by another "
           "program or a command. Write did not change it. Read it again, then redo the change "
           "on what the file holds now.",
           1, "Write (append) refused");
    T_EQ_STR(get_file("m.txt", NULL), "alpha\nBETA\n", "refused three times: untouched");
    read_ok(s, "{\"path\":\"m.txt\"}", "m.txt again");
    expect(s, "Write", "{\"path\":\"m.txt\",\"content\":\"gamma\\n\",\"mode\":\"append\"}",
           "Appended m.txt: 6 bytes written at the end (the file now has 17 bytes).", 0,
           "append after the Read");
    /* the append is known: the whole new content is what the session saw */
    edit(s, "m.txt", "gamma", "G",
         "Edited m.txt: replaced 1 occurrence at line 3. " PRE "\n1\talpha\n2\tBETA\n3\tG", 0,
         "Edit after the append needs no Read");
    expect(s, "Write", "{\"path\":\"m.txt\",\"content\":\"w\\n\"}",
           "Overwrote m.txt: 2 bytes written.", 0, "Write over a file the session wrote");
    sneak("m.txt", "W\n");
    edit(s, "m.txt", "w", "v",
         "m.txt has changed on disk since it was last read (changed now: line 1)" TAIL, 1,
         "what Write wrote is the record");
    /* the same file by its absolute path and by a relative one */
    put_file("abs.txt", "x\n");
    char args[900];
    snprintf(args, sizeof args, "{\"path\":\"%s/abs.txt\"}", ws);
    read_ok(s, args, "abs.txt by its absolute path");
    sneak("abs.txt", "y\n");
    edit(s, "./abs.txt", "y", "z",
         "abs.txt has changed on disk since it was last read (changed now: line 1)" TAIL, 1,
         "read by absolute path, edited by a relative one");
    /* read through a symbolic link, edited by its own name */
    put_file("target.txt", "t\n");
    char lk[1024], tg[1024];
    snprintf(lk, sizeof lk, "%s/link.txt", ws);
    snprintf(tg, sizeof tg, "%s/target.txt", ws);
    T_CHECK(symlink(tg, lk) == 0, "symlink link.txt -> target.txt");
    read_ok(s, "{\"path\":\"link.txt\"}", "target.txt through link.txt");
    sneak("target.txt", "T\n");
    edit(s, "target.txt", "T", "u",
         "target.txt has changed on disk since it was last read (changed now: line 1)" TAIL, 1,
         "read through a link, edited by its name");
    /* a file the session never read is edited as before */
    put_file("never.txt", "q\n");
    edit(s, "never.txt", "q", "r",
         "Edited never.txt: replaced 1 occurrence at line 1. " PRE "\n1\tr", 0,
         "never read: editable by default");
}

static void test_options(void)
{
    agt_session *s = new_session();
    put_file("o.txt", "k\n");
    read_ok(s, "{\"path\":\"o.txt\"}", "o.txt");
    sneak("o.txt", "K\n");
    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK), AGT_OK, "check off");
    edit(s, "o.txt", "K", "j", "Edited o.txt: replaced 1 occurrence at line 1. " PRE "\n1\tj", 0,
         "check off: a changed file is edited");
    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_REQUIRE_READ), AGT_OK, "require read");
    put_file("u.txt", "u\n");
    edit(s, "u.txt", "u", "v",
         "u.txt has not been read in this session, and this session lets Edit change only files "
         "that were read first. Nothing was changed. Read it (a part of it is enough), then call "
         "Edit again.",
         1, "require read: Edit of a file never read");
    expect(s, "Write", "{\"path\":\"u.txt\",\"content\":\"w\\n\"}",
           "u.txt has not been read in this session, and this session lets Write change only "
           "files that were read first. Nothing was changed. Read it (a part of it is enough), "
           "then call Write again.",
           1, "require read: Write over a file never read");
    expect(s, "Write", "{\"path\":\"u.txt\",\"content\":\"+\\n\",\"mode\":\"append\"}",
           "Appended u.txt: 2 bytes written at the end (the file now has 4 bytes).", 0,
           "require read: append to a file never read");
    expect(s, "Write", "{\"path\":\"brand-new.txt\",\"content\":\"n\\n\"}",
           "Created brand-new.txt: 2 bytes written.", 0, "require read: a new file");
    edit(s, "brand-new.txt", "n", "m",
         "Edited brand-new.txt: replaced 1 occurrence at line 1. " PRE "\n1\tm", 0,
         "require read: the file Write created");
    read_ok(s, "{\"path\":\"u.txt\",\"n_lines\":1}", "u.txt");
    edit(s, "u.txt", "+", "-", "Edited u.txt: replaced 1 occurrence at line 2. " PRE "\n1\tu\n2\t-",
         0, "require read: after a Read");
    T_EQ_INT(agt_session_set_edit_options(s, 8), AGT_EINVAL, "an unknown flag");
    agt_session_free(s);
}

static void test_save_restore(void)
{
    agt_session *a = new_session();
    put_file("s.txt", "red\ngreen\n");
    read_ok(a, "{\"path\":\"s.txt\"}", "s.txt");
    char *doc = NULL;
    T_EQ_INT(agt_session_save(a, &doc), AGT_OK, "save");
    json_t *j = json_loads(doc ? doc : "", 0, NULL);
    json_t *seen = json_object_get(j, "seen");
    T_EQ_INT((long long)json_array_size(seen), 1, "the document has one seen file");
    char abs[700];
    snprintf(abs, sizeof abs, "%s/s.txt", ws);
    T_EQ_STR(json_string_value(json_object_get(json_array_get(seen, 0), "path")), abs,
             "seen[0].path");
    T_EQ_INT(json_integer_value(json_object_get(json_array_get(seen, 0), "size")), 10,
             "seen[0].size");
    T_EQ_INT((long long)json_string_length(json_object_get(json_array_get(seen, 0), "hash")), 16,
             "seen[0].hash has 16 hex digits");
    json_decref(j);
    agt_session_free(a);

    agt_session *b = new_session();
    T_EQ_INT(agt_session_restore(b, doc, strlen(doc)), AGT_OK, "restore");
    sneak("s.txt", "RED\ngreen\n");
    edit(b, "s.txt", "green", "blue",
         "s.txt has changed on disk since it was last read (its size is the same, its content is "
         "not)" TAIL,
         1, "restored: the change is caught (no line ranges)");
    sneak("s.txt", "red\ngreen\n");
    edit(b, "s.txt", "green", "blue",
         "Edited s.txt: replaced 1 occurrence at line 2. " PRE "\n1\tred\n2\tblue", 0,
         "restored: the content as read is edited");
    put_file("s.txt", "red\n");
    agt_session_free(b);

    agt_session *c = new_session();
    T_EQ_INT(agt_session_restore(c, doc, strlen(doc)), AGT_OK, "restore again");
    edit(c, "s.txt", "red", "x",
         "s.txt has changed on disk since it was last read (4 bytes now, 10 when it was read)" TAIL,
         1, "restored: another size");
    const char *bad = "{\"format\":1,\"seen\":[{\"path\":\"rel.txt\",\"size\":1,"
                      "\"hash\":\"0000000000000000\"}]}";
    T_EQ_INT(agt_session_restore(c, bad, strlen(bad)), AGT_EINVALID, "a relative seen path");
    T_EQ_STR(agt_error_message(),
             "session file: seen[0] needs \"path\" (absolute), \"size\" (0 or more) and \"hash\" "
             "(16 lower-case hex digits)",
             "its message");
    const char *bad2 = "{\"format\":1,\"seen\":[{\"path\":\"/x\",\"size\":1,\"hash\":\"00\"}]}";
    T_EQ_INT(agt_session_restore(c, bad2, strlen(bad2)), AGT_EINVALID, "a short hash");
    const char *bad3 = "{\"format\":1,\"seen\":{}}";
    T_EQ_INT(agt_session_restore(c, bad3, strlen(bad3)), AGT_EINVALID, "seen not an array");
    /* the failed restores left the record as it was */
    edit(c, "s.txt", "red", "x",
         "s.txt has changed on disk since it was last read (4 bytes now, 10 when it was read)" TAIL,
         1, "failed restores change nothing");
    agt_session_free(c);
    free(doc);
}

int main(void)
{
    make_ws("stale");
    agt_session *s = new_session();
    test_same_size_same_mtime(s);
    test_partial_read(s);
    test_ranges(s);
    test_other_tools(s);
    agt_session_free(s);
    test_options();
    test_save_restore();
    rm_ws();
    return t_done();
}
