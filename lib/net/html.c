/*
 * HTML reduced to readable text with libxml2's HTML parser (error-tolerant,
 * as browsers parse): scripts, styles, navigation, forms and page chrome are
 * dropped; headings, paragraphs, lists, links, code and tables are kept as
 * markdown-like text. The main content is <main>, else <article>, else <body>.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"

#if defined(__has_include)
#if __has_include(<libxml/HTMLparser.h>)
#define AGTI_HAVE_LIBXML2 1
#endif
#endif

#ifdef AGTI_HAVE_LIBXML2
#include <dlfcn.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/uri.h>

/* libxml2 is loaded the first time a page is reduced (dlopen), not linked:
 * linking it mapped ICU and seven more libraries into every program that
 * links this library (docs/embedding.md, "Start-up and the libraries
 * loaded on first use"). AGT_LIBXML2, when set, names the one file to load
 * instead of libxml2.so.2. */
#define AGTI_XML_FUNCTIONS(X)                                                                      \
    X(xmlInitParser)                                                                               \
    X(htmlReadMemory)                                                                              \
    X(xmlDocGetRootElement)                                                                        \
    X(xmlFreeDoc)                                                                                  \
    X(xmlGetProp)                                                                                  \
    X(xmlNodeGetContent)                                                                           \
    X(xmlBuildURI)

/* The slots have the exact types of the functions in the headers (the
 * compiler checks every call); xmlFree is a variable or a function
 * returning its address, depending on the version: found by hand. */
static struct {
#define AGTI_XML_SLOT(f) __typeof__(f) *f;
    AGTI_XML_FUNCTIONS(AGTI_XML_SLOT)
#undef AGTI_XML_SLOT
    xmlFreeFunc *(*free_loc)(void); /* where libxml2 keeps its xmlFree */
    xmlFreeFunc *free_var;          /* or the variable itself (no __xmlFree) */
} xml;
static bool xml_ok;

static xmlFreeFunc *xml_free_var(void)
{
    return xml.free_var;
}

static pthread_once_t parser_once = PTHREAD_ONCE_INIT;

static void parser_init(void)
{
    const char *env = getenv("AGT_LIBXML2");
    void *h = dlopen(env && *env ? env : "libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
#define AGTI_XML_LOAD(f)                                                                           \
    if (!(*(void **)&xml.f = dlsym(h, #f))) {                                                      \
        dlclose(h);                                                                                \
        return;                                                                                    \
    }
    AGTI_XML_FUNCTIONS(AGTI_XML_LOAD)
#undef AGTI_XML_LOAD
    if (!(*(void **)&xml.free_loc = dlsym(h, "__xmlFree"))) {
        if (!(xml.free_var = dlsym(h, "xmlFree"))) {
            dlclose(h);
            return;
        }
        xml.free_loc = xml_free_var;
    }
    /* libxml2 2.9 wants its parser set up once before threads parse
     * (FetchURL calls may run concurrently) */
    xml.xmlInitParser();
    xml_ok = true; /* the handle stays open for the process */
}

#undef xmlFree
#define htmlReadMemory (xml.htmlReadMemory)
#define xmlDocGetRootElement (xml.xmlDocGetRootElement)
#define xmlFreeDoc (xml.xmlFreeDoc)
#define xmlGetProp (xml.xmlGetProp)
#define xmlNodeGetContent (xml.xmlNodeGetContent)
#define xmlBuildURI (xml.xmlBuildURI)
#define xmlFree (*xml.free_loc())

bool agti_html_available(void)
{
    pthread_once(&parser_once, parser_init);
    return xml_ok;
}

typedef struct walk {
    agti_buf *out;
    int pre;
    const char *base;
    size_t indent; /* columns of the enclosing list items' markers */
} walk;

static bool is(const xmlNode *n, const char *name)
{
    return n->name && strcasecmp((const char *)n->name, name) == 0;
}

static bool dropped(const xmlNode *n)
{
    static const char *const drop[] = {
        "script", "style",    "noscript", "nav",    "header", "footer", "aside",  "form", "svg",
        "iframe", "template", "button",   "select", "head",   "object", "canvas", NULL};
    for (size_t i = 0; drop[i]; i++)
        if (is(n, drop[i]))
            return true;
    xmlChar *role = xmlGetProp(n, (const xmlChar *)"role");
    bool nav = role && (strcmp((const char *)role, "navigation") == 0 ||
                        strcmp((const char *)role, "banner") == 0 ||
                        strcmp((const char *)role, "contentinfo") == 0);
    xmlFree(role);
    xmlChar *hidden = xmlGetProp(n, (const xmlChar *)"hidden");
    bool h = hidden != NULL;
    xmlFree(hidden);
    return nav || h;
}

static bool block(const xmlNode *n)
{
    static const char *const blocks[] = {
        "p",  "div",        "section", "article", "main",       "ul", "ol",   "li", "table",
        "tr", "blockquote", "pre",     "h1",      "h2",         "h3", "h4",   "h5", "h6",
        "dl", "dt",         "dd",      "figure",  "figcaption", "hr", "body", NULL};
    for (size_t i = 0; blocks[i]; i++)
        if (is(n, blocks[i]))
            return true;
    return false;
}

static void newline(agti_buf *b, int count)
{
    while (b->len > 0 && b->ptr[b->len - 1] == ' ') /* no trailing blanks */
        agti_buf_truncate(b, b->len - 1);
    size_t have = 0;
    while (have < b->len && have < (size_t)count && b->ptr[b->len - 1 - have] == '\n')
        have++;
    if (b->len == 0)
        return;
    for (size_t i = have; i < (size_t)count; i++)
        agti_buf_putc(b, '\n');
}

static bool at_line_start(const agti_buf *b)
{
    return b->len == 0 || b->ptr[b->len - 1] == '\n';
}

static void put_text(walk *w, const char *s)
{
    if (w->pre) {
        agti_buf_puts(w->out, s);
        return;
    }
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f') {
            if (!at_line_start(w->out) && w->out->ptr[w->out->len - 1] != ' ')
                agti_buf_putc(w->out, ' ');
        } else {
            agti_buf_putc(w->out, *s);
        }
    }
}

static void children(walk *w, const xmlNode *n);
static void element(walk *w, const xmlNode *n);

/* A list: items as "- " or "1. ", a nested list indented under its item's
 * text (so the nesting survives), no blank lines inside a nested list. */
static void list(walk *w, const xmlNode *n, bool ordered)
{
    agti_buf *b = w->out;
    newline(b, w->indent ? 1 : 2);
    int k = 0;
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (!is(c, "li")) {
            element(w, c);
            continue;
        }
        if (dropped(c))
            continue;
        newline(b, 1);
        char marker[24];
        if (ordered)
            snprintf(marker, sizeof marker, "%d. ", ++k);
        else
            snprintf(marker, sizeof marker, "- ");
        for (size_t i = 0; i < w->indent; i++)
            agti_buf_putc(b, ' ');
        agti_buf_puts(b, marker);
        size_t saved = w->indent;
        w->indent += strlen(marker);
        children(w, c);
        w->indent = saved;
        newline(b, 1);
    }
    newline(b, w->indent ? 1 : 2);
}

static void element(walk *w, const xmlNode *n)
{
    if (dropped(n))
        return;
    agti_buf *b = w->out;
    if (is(n, "br")) {
        agti_buf_putc(b, '\n');
        return;
    }
    if (is(n, "img")) {
        xmlChar *alt = xmlGetProp(n, (const xmlChar *)"alt");
        if (alt && *alt)
            agti_buf_printf(b, "[image: %s]", (const char *)alt);
        xmlFree(alt);
        return;
    }
    if (is(n, "ul") || is(n, "ol")) {
        list(w, n, is(n, "ol"));
        return;
    }
    if (block(n))
        newline(b, is(n, "li") || is(n, "tr") || is(n, "dd") || is(n, "dt") ? 1 : 2);
    if (n->name && (n->name[0] == 'h' || n->name[0] == 'H') && n->name[1] >= '1' &&
        n->name[1] <= '6' && !n->name[2]) {
        for (int i = 0; i < n->name[1] - '0'; i++)
            agti_buf_putc(b, '#');
        agti_buf_putc(b, ' ');
    } else if (is(n, "li")) {
        agti_buf_puts(b, "- ");
    } else if (is(n, "hr")) {
        agti_buf_puts(b, "---");
    } else if (is(n, "blockquote")) {
        agti_buf_puts(b, "> ");
    }
    if (is(n, "pre")) {
        agti_buf_puts(b, "```\n");
        w->pre++;
        children(w, n);
        w->pre--;
        if (!at_line_start(b))
            agti_buf_putc(b, '\n');
        agti_buf_puts(b, "```");
        newline(b, 2);
        return;
    }
    if (is(n, "code") && !w->pre) {
        agti_buf_putc(b, '`');
        children(w, n);
        agti_buf_putc(b, '`');
        return;
    }
    if (is(n, "a")) {
        xmlChar *href = xmlGetProp(n, (const xmlChar *)"href");
        size_t start = b->len;
        children(w, n);
        if (href && *href && strncmp((const char *)href, "javascript:", 11) != 0 &&
            b->len > start) {
            xmlChar *abs = w->base ? xmlBuildURI(href, (const xmlChar *)w->base) : NULL;
            agti_buf_truncate(b, start);
            agti_buf_putc(b, '[');
            children(w, n);
            agti_buf_printf(b, "](%s)", (const char *)(abs ? abs : href));
            xmlFree(abs);
        }
        xmlFree(href);
        return;
    }
    if (is(n, "td") || is(n, "th")) {
        if (!at_line_start(b))
            agti_buf_puts(b, " | ");
    }
    children(w, n);
    if (block(n))
        newline(b, is(n, "li") || is(n, "tr") || is(n, "dd") || is(n, "dt") ? 1 : 2);
}

static void children(walk *w, const xmlNode *n)
{
    for (const xmlNode *c = n->children; c; c = c->next) {
        if (c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) {
            if (c->content)
                put_text(w, (const char *)c->content);
        } else if (c->type == XML_ELEMENT_NODE) {
            element(w, c);
        }
    }
}

static const xmlNode *find(const xmlNode *n, const char *name)
{
    for (const xmlNode *c = n; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (is(c, name))
            return c;
        const xmlNode *f = find(c->children, name);
        if (f)
            return f;
    }
    return NULL;
}

int agti_html_to_text(const char *html, size_t len, const char *charset, const char *base_url,
                      agti_buf *out)
{
    if (len > (size_t)INT32_MAX)
        return agti_error(AGT_ELIMIT, "HTML document larger than 2 GiB");
    if (!agti_html_available())
        return agti_error(AGT_EUNSUPPORTED, "no HTML parser: libxml2 (%s) could not be loaded",
                          getenv("AGT_LIBXML2") && *getenv("AGT_LIBXML2") ? getenv("AGT_LIBXML2")
                                                                          : "libxml2.so.2");
    size_t start = out->len;
    htmlDocPtr doc = htmlReadMemory(html, (int)len, base_url, charset,
                                    HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                        HTML_PARSE_NONET | HTML_PARSE_NOBLANKS);
    if (!doc)
        return agti_error(AGT_EPARSE, "the HTML parser could not read the document");
    const xmlNode *root = xmlDocGetRootElement(doc);
    const xmlNode *title = root ? find(root->children, "title") : NULL;
    walk w = {out, 0, base_url};
    if (title) {
        xmlChar *t = xmlNodeGetContent(title);
        if (t && *t) {
            agti_buf_puts(out, "Title: ");
            put_text(&w, (const char *)t);
            agti_buf_puts(out, "\n\n");
        }
        xmlFree(t);
    }
    const xmlNode *main = root ? find(root->children, "main") : NULL;
    if (!main && root)
        main = find(root->children, "article");
    if (!main && root)
        main = find(root->children, "body");
    if (!main)
        main = root;
    if (main)
        children(&w, main);
    xmlFreeDoc(doc);
    size_t n = out->len;
    while (n > start && (out->ptr[n - 1] == '\n' || out->ptr[n - 1] == ' '))
        n--;
    agti_buf_truncate(out, n);
    /* libxml2 passes bytes that are not valid in the declared charset
     * through as they are: the text must be UTF-8 */
    if (!out->oom && !agti_utf8_valid(agti_buf_cstr(out) + start, n - start)) {
        agti_buf clean = AGTI_BUF_INIT;
        agti_utf8_sanitize(&clean, agti_buf_cstr(out) + start, n - start);
        agti_buf_truncate(out, start);
        agti_buf_put(out, agti_buf_cstr(&clean), clean.len);
        if (clean.oom)
            out->oom = true;
        agti_buf_free(&clean);
    }
    return out->oom ? agti_oom() : AGT_OK;
}

#else

bool agti_html_available(void)
{
    return false;
}

int agti_html_to_text(const char *html, size_t len, const char *charset, const char *base_url,
                      agti_buf *out)
{
    (void)html;
    (void)len;
    (void)charset;
    (void)base_url;
    (void)out;
    return agti_error(AGT_EUNSUPPORTED, "this build has no HTML parser (libxml2)");
}

#endif
