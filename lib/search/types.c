/* Generated from `rg --type-list` (ripgrep 13.0.0) plus aliases rb, kt, yml, python,
   javascript, typescript, golang, rs, shell, bash, cxx, c++. */
#include <string.h>

#include "search/search.h"

static const struct {
    const char *name;
    const char *globs;
} TYPES[] = {
    {"asm", "{*.S,*.asm,*.s}"},
    {"bash", "{*.bash,*.bashrc,*.csh,*.cshrc,*.ksh,*.kshrc,*.sh,*.tcsh,*.zsh,.bash_login,.bash_"
             "logout,.bash_profile,.bashrc,.cshrc,.kshrc,.login,.logout,.profile,.tcshrc,.zlogin,."
             "zlogout,.zprofile,.zshenv,.zshrc,bash_login,bash_logout,bash_profile,bashrc,profile,"
             "zlogin,zlogout,zprofile,zshenv,zshrc}"},
    {"c", "{*.[chH],*.[chH].in,*.cats}"},
    {"c++", "{*.[ChH],*.[ChH].in,*.[ch]pp,*.[ch]pp.in,*.[ch]xx,*.[ch]xx.in,*.cc,*.cc.in,*.hh,*.hh."
            "in,*.inl}"},
    {"clojure", "{*.clj,*.cljc,*.cljs,*.cljx}"},
    {"cmake", "{*.cmake,CMakeLists.txt}"},
    {"config", "{*.cfg,*.conf,*.config,*.ini}"},
    {"cpp", "{*.[ChH],*.[ChH].in,*.[ch]pp,*.[ch]pp.in,*.[ch]xx,*.[ch]xx.in,*.cc,*.cc.in,*.hh,*.hh."
            "in,*.inl}"},
    {"cs", "{*.cs}"},
    {"csharp", "{*.cs}"},
    {"css", "{*.css,*.scss}"},
    {"csv", "{*.csv}"},
    {"cxx", "{*.[ChH],*.[ChH].in,*.[ch]pp,*.[ch]pp.in,*.[ch]xx,*.[ch]xx.in,*.cc,*.cc.in,*.hh,*.hh."
            "in,*.inl}"},
    {"cython", "{*.pxd,*.pxi,*.pyx}"},
    {"d", "{*.d}"},
    {"dart", "{*.dart}"},
    {"elixir", "{*.eex,*.ex,*.exs}"},
    {"elm", "{*.elm}"},
    {"erlang", "{*.erl,*.hrl}"},
    {"fish", "{*.fish}"},
    {"fortran", "{*.F,*.F77,*.F90,*.F95,*.f,*.f77,*.f90,*.f95,*.pfo}"},
    {"go", "{*.go}"},
    {"golang", "{*.go}"},
    {"groovy", "{*.gradle,*.groovy}"},
    {"h", "{*.h,*.hpp}"},
    {"haskell", "{*.c2hs,*.cpphs,*.hs,*.hsc,*.lhs}"},
    {"html", "{*.ejs,*.htm,*.html}"},
    {"java", "{*.java,*.jsp,*.jspx,*.properties}"},
    {"javascript", "{*.js,*.jsx,*.vue}"},
    {"jl", "{*.jl}"},
    {"js", "{*.js,*.jsx,*.vue}"},
    {"json", "{*.json,composer.lock}"},
    {"jsonl", "{*.jsonl}"},
    {"julia", "{*.jl}"},
    {"kotlin", "{*.kt,*.kts}"},
    {"kt", "{*.kt,*.kts}"},
    {"less", "{*.less}"},
    {"lua", "{*.lua}"},
    {"make", "{*.mak,*.mk,[Gg][Nn][Uu]makefile,[Gg][Nn][Uu]makefile.am,[Gg][Nn][Uu]makefile.in,[Mm]"
             "akefile,[Mm]akefile.am,[Mm]akefile.in}"},
    {"markdown", "{*.markdown,*.md,*.mdown,*.mkdn}"},
    {"md", "{*.markdown,*.md,*.mdown,*.mkdn}"},
    {"nim", "{*.nim,*.nimble,*.nimf,*.nims}"},
    {"nix", "{*.nix}"},
    {"objc", "{*.h,*.m}"},
    {"ocaml", "{*.ml,*.mli,*.mll,*.mly}"},
    {"perl", "{*.PL,*.perl,*.pl,*.plh,*.plx,*.pm,*.t}"},
    {"php", "{*.php,*.php3,*.php4,*.php5,*.phtml}"},
    {"protobuf", "{*.proto}"},
    {"ps", "{*.cdxml,*.ps1,*.ps1xml,*.psd1,*.psm1}"},
    {"py", "{*.py}"},
    {"python", "{*.py}"},
    {"r", "{*.R,*.Rmd,*.Rnw,*.r}"},
    {"rb", "{*.gemspec,*.rb,*.rbw,.irbrc,Gemfile,Rakefile,config.ru}"},
    {"rs", "{*.rs}"},
    {"rst", "{*.rst}"},
    {"ruby", "{*.gemspec,*.rb,*.rbw,.irbrc,Gemfile,Rakefile,config.ru}"},
    {"rust", "{*.rs}"},
    {"sass", "{*.sass,*.scss}"},
    {"scala", "{*.sbt,*.scala}"},
    {"sh", "{*.bash,*.bashrc,*.csh,*.cshrc,*.ksh,*.kshrc,*.sh,*.tcsh,*.zsh,.bash_login,.bash_"
           "logout,.bash_profile,.bashrc,.cshrc,.kshrc,.login,.logout,.profile,.tcshrc,.zlogin,."
           "zlogout,.zprofile,.zshenv,.zshrc,bash_login,bash_logout,bash_profile,bashrc,profile,"
           "zlogin,zlogout,zprofile,zshenv,zshrc}"},
    {"shell", "{*.bash,*.bashrc,*.csh,*.cshrc,*.ksh,*.kshrc,*.sh,*.tcsh,*.zsh,.bash_login,.bash_"
              "logout,.bash_profile,.bashrc,.cshrc,.kshrc,.login,.logout,.profile,.tcshrc,.zlogin,."
              "zlogout,.zprofile,.zshenv,.zshrc,bash_login,bash_logout,bash_profile,bashrc,profile,"
              "zlogin,zlogout,zprofile,zshenv,zshrc}"},
    {"sql", "{*.psql,*.sql}"},
    {"swift", "{*.swift}"},
    {"tex", "{*.bib,*.cls,*.dtx,*.ins,*.ltx,*.sty,*.tex}"},
    {"tf", "{*.tf}"},
    {"toml", "{*.toml,Cargo.lock}"},
    {"ts", "{*.ts,*.tsx}"},
    {"txt", "{*.txt}"},
    {"typescript", "{*.ts,*.tsx}"},
    {"vim", "{*.vim}"},
    {"xml", "{*.dtd,*.rng,*.sch,*.xhtml,*.xjb,*.xml,*.xml.dist,*.xsd,*.xsl,*.xslt}"},
    {"yaml", "{*.yaml,*.yml}"},
    {"yml", "{*.yaml,*.yml}"},
    {"zig", "{*.zig}"},
    {"zsh",
     "{*.zsh,.zlogin,.zlogout,.zprofile,.zshenv,.zshrc,zlogin,zlogout,zprofile,zshenv,zshrc}"},
};

const char *agti_search_type_globs(const char *name)
{
    size_t lo = 0, hi = sizeof TYPES / sizeof TYPES[0];
    if (name == NULL)
        return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, TYPES[mid].name);
        if (c == 0)
            return TYPES[mid].globs;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const char *agti_search_type_names(void)
{
    return "asm, bash, c, c++, clojure, cmake, config, cpp, cs, csharp, css, csv, cxx, cython, d, "
           "dart, elixir, elm, erlang, fish, fortran, go, golang, groovy, h, haskell, html, java, "
           "javascript, jl, js, json, jsonl, julia, kotlin, kt, less, lua, make, markdown, md, "
           "nim, nix, objc, ocaml, perl, php, protobuf, ps, py, python, r, rb, rs, rst, ruby, "
           "rust, sass, scala, sh, shell, sql, swift, tex, tf, toml, ts, txt, typescript, vim, "
           "xml, yaml, yml, zig, zsh";
}
