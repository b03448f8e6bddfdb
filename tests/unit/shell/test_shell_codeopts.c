/*
 * Options that make a program run code or open a file an argument chooses
 * (agti_sh_code_options, AGTI_SHX_CODE_OPT). Each line: a command and what
 * it gives, "-" for none, else each option found as "<why prefix>" or
 * "<why prefix>:<detail>", joined by " + ". The expected options come from
 * the programs' manuals (GNU make, OpenSSH ssh/scp/sftp, GNU sed, gawk,
 * GNU tar, ripgrep, less, man-db, vim, git, GNU findutils, zip, rsync,
 * curl, wget) and GNU getopt's rules (clusters, attached values,
 * abbreviations, options after operands, "--"), not from the code.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "harness.h"
#include "shell/shell.h"

/* The first words of each reason, enough to tell them apart. */
static void put_why(agti_buf *b, const char *why)
{
    size_t n = strcspn(why, ":");
    if (n > 24)
        n = 24;
    agti_buf_put(b, why, n);
}

/* The options of the last exec of src (or of a pattern's words, split on
 * spaces, a '*' ending a word's text). */
static char *options_of(const char *src, bool pattern, unsigned *flags_out)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_sh_codeopt o[16];
    size_t n = 0;
    if (pattern) {
        char *copy = strdup(src);
        char *argv[32];
        unsigned fl[32];
        size_t argc = 0;
        for (char *t = strtok(copy, " "); t && argc < 32; t = strtok(NULL, " ")) {
            char *star = strchr(t, '*');
            fl[argc] = star ? AGTI_SHW_GLOB : 0;
            if (star)
                *star = '\0';
            argv[argc++] = t;
        }
        n = agti_sh_code_options(argv, fl, argc, true, o, 16, NULL);
        free(copy);
    } else {
        agti_sh_script *s = NULL;
        agti_sh_analysis *a = NULL;
        if (agti_sh_parse(src, strlen(src), &s, NULL) != AGTI_SH_OK ||
            agti_sh_analyze(s, &a, NULL) != AGTI_SH_OK || agti_sh_nexecs(a) == 0) {
            agti_sh_free(s);
            return strdup("PARSE");
        }
        const agti_sh_exec *e = agti_sh_exec_at(a, agti_sh_nexecs(a) - 1);
        size_t at = (size_t)(e->argv - e->written);
        n = agti_sh_code_options(e->argv, e->wflags + at, e->argc, false, o, 16, NULL);
        *flags_out = e->flags;
        agti_sh_analysis_free(a);
        agti_sh_free(s);
    }
    if (n == 0)
        agti_buf_putc(&b, '-');
    for (size_t i = 0; i < n && i < 16; i++) {
        if (i)
            agti_buf_puts(&b, " + ");
        put_why(&b, o[i].why);
        if (o[i].detail[0])
            agti_buf_printf(&b, ":%s", o[i].detail);
    }
    return agti_buf_detach(&b);
}

typedef struct {
    const char *cmd, *want;
} case_t;

static void run(const char *group, const case_t *c, size_t n, bool pattern)
{
    for (size_t i = 0; i < n; i++) {
        unsigned flags = 0;
        char *got = options_of(c[i].cmd, pattern, &flags);
        T_EQ_STR(got, c[i].want, "%s: %s", group, c[i].cmd);
        if (!pattern)
            T_EQ_INT((flags & AGTI_SHX_CODE_OPT) != 0, strcmp(c[i].want, "-") != 0,
                     "%s: %s: CODE_OPT flag", group, c[i].cmd);
        free(got);
    }
}

#define RUN(g, arr) run(g, arr, sizeof arr / sizeof arr[0], false)

static void test_make(void)
{
    static const case_t c[] = {
        {"make", "-"},
        {"make -j2 check", "-"},
        {"make -j 4 all", "-"},
        {"make -k -s test", "-"},
        {"make -f /dev/stdin <<<'all:;id'", "-f/--file/--makefile"},
        {"make -f - < evil.mk", "-f/--file/--makefile"},
        {"make -fevil.mk", "-f/--file/--makefile"},
        {"make --file evil.mk", "-f/--file/--makefile"},
        {"make --makefile=evil.mk", "-f/--file/--makefile"},
        {"make --mak=evil.mk", "-f/--file/--makefile"},
        {"make --eval='$(shell id)'", "--eval/-E"},
        {"make --ev '$(shell id)'", "--eval/-E"},
        {"make -E '$(shell id)'", "--eval/-E"},
        {"make -C /elsewhere", "-C/--directory"},
        {"make -wC /elsewhere", "-C/--directory"},
        {"make --directory=/elsewhere", "-C/--directory"},
        {"make -I inc", "-I/--include-dir"},
        {"make SHELL=/tmp/x", "a NAME=value argument se:SHELL"},
        {"make all CC=./evil", "a NAME=value argument se:CC"},
        {"make X!=id", "a NAME=value argument se:X"},
        {"make MAKEFLAGS=-f/tmp/x", "a NAME=value argument se:MAKEFLAGS"},
        {"make all -f x", "-f/--file/--makefile"},      /* options after operands */
        {"make -- -f", "-"},                            /* after --: a target */
        {"make -o -f", "-f/--file/--makefile"},         /* a value that looks like an option */
        {"make $T", "an argument only known w"},        /* may be -f x or X=y */
        {"make \"$T\"", "an argument only known w"},    /* may start with a '-' */
        {"make x$T", "an argument only known w"},       /* may hold a '=' */
        {"timeout 5 make --eval=x", "--eval/-E"},       /* through a wrapper */
        {"/usr/bin/make -f x", "-f/--file/--makefile"}, /* a path */
        {"make -f a --eval=b", "-f/--file/--makefile + --eval/-E"},
        {"make -f a -f b", "-f/--file/--makefile + -f/--file/--makefile"},
        {"bmake -f x", "-f/--file/--makefile"},
    };
    RUN("make", c);
}

static void test_ssh(void)
{
    static const case_t c[] = {
        {"ssh host", "-"},
        {"ssh -p 2222 user@host", "-"},
        {"ssh -o StrictHostKeyChecking=no host", "-"},
        {"ssh -v -i key -L 8080:localhost:80 host", "-"},
        {"ssh -o ProxyCommand='id' host", "-o sets an option that r:proxycommand"},
        {"ssh -oProxyCommand=id host", "-o sets an option that r:proxycommand"},
        {"ssh -o 'ProxyCommand id' host", "-o sets an option that r:proxycommand"},
        {"ssh -o proxycommand=id host", "-o sets an option that r:proxycommand"},
        {"ssh -vo ProxyCommand=id host", "-o sets an option that r:proxycommand"},
        {"ssh host -o ProxyCommand=id", "-o sets an option that r:proxycommand"},
        {"ssh -o LocalCommand=id -o PermitLocalCommand=yes host",
         "-o sets an option that r:localcommand + -o sets an option that r:permitlocalcommand"},
        {"ssh -o KnownHostsCommand=id host", "-o sets an option that r:knownhostscommand"},
        /* ssh splits the -o line as a shell would: quotes are not read here */
        {"ssh -o '\"ProxyCommand\" id' host", "-o sets an option that r:\"proxycommand\""},
        {"ssh -o 'Proxy\"Command\" id' host", "-o sets an option that r:proxy\"command\""},
        {"ssh -o 'ProxyCommand \"id\"' host", "-o sets an option that r:proxycommand"},
        {"ssh -o 'User \"me\"' host", "-"},
        {"ssh -F evil.cfg host", "-F"},
        {"ssh -I ./lib.so host", "-I"},
        {"ssh -E log host", "-E"},
        {"ssh host id", "runs a command on the re"},
        {"ssh -p 22 host uptime", "runs a command on the re"},
        {"scp a host:b", "-"},
        {"scp -S ./evil a host:b", "-S"},
        {"scp -o ProxyCommand=id a host:b", "-o sets an option that r:proxycommand"},
        {"sftp -b batch host", "-b"},
        {"sftp -D ./server host", "-D"},
    };
    RUN("ssh", c);
}

static void test_sed_awk(void)
{
    static const case_t c[] = {
        {"sed -n 1p f", "-"},
        {"sed 's/a/b/g' f", "-"},
        {"sed 's/e/w/' f", "-"}, /* regex e, replacement w */
        {"sed '/e/d;/w/d' f", "-"},
        {"sed 's|a|b|2' f", "-"},
        {"sed -e 's/a/b/' -e 's/c/d/' f", "-"},
        {"sed -i 's/a/b/' f", "-"}, /* edits the files it names, as it says */
        {"sed 'y/abc/xyz/' f", "-"},
        {"sed -n '$=' f", "-"},
        {"sed '1i\\ hello' f", "-"},
        {"sed '/x/{n;p}' f", "-"},
        {"sed '1e id' f", "its program runs command"},
        {"sed 's/x/id/e' f", "its program runs command"},
        {"sed 's/x/y/gw out' f", "its program runs command"},
        {"sed -n '/x/w out' f", "its program runs command"},
        {"sed 'r /etc/passwd' f", "its program runs command"},
        {"sed '$!N;e id' f", "its program runs command"},
        {"sed -e p -e '1e id' f", "its program runs command"},
        {"sed --expression='1e id' f", "its program runs command"},
        {"sed --expr '1e id' f", "its program runs command"},
        {"sed -ne '1e id' f", "its program runs command"},
        {"sed 's/x/y' f", "its program runs command"}, /* does not parse */
        {"sed -f script.sed f", "-f/--file"},
        {"sed \"$P\" f", "an argument only known w + its program runs command"},
        {"sed --sandbox 's/x/y/e' f", "-"}, /* sed refuses e, w and r */
        {"awk '{print $1}' f", "-"},
        {"awk -F: '{print $1}' f", "-"},
        {"awk '$3 > 100' f", "-"},
        {"awk '/a|b/ {n++} END {print n}' f", "-"},
        {"awk '{print ($1 > 2)}' f", "-"},
        {"awk '$1 ~ /x|y/ || $2 >= 3' f", "-"},
        {"awk '{ s += $2 } END { print s / NR }' f", "-"},
        {"awk -v x=1 '{print x}' f", "-"},
        {"awk 'BEGIN{system(\"id\")}'", "its program runs command"},
        {"awk '{print | \"sh\"}' f", "its program runs command"},
        {"awk 'BEGIN{\"id\" | getline x}'", "its program runs command"},
        {"awk '{print > \"out\"}' f", "its program runs command"},
        {"awk '{print $1 >> \"/tmp/x\"}' f", "its program runs command"},
        {"awk '{printf(\"%s\", $1) > \"o\"}' f", "its program runs command"},
        {"awk '{ x = a / b | \"sh\" }' f", "its program runs command"},
        {"awk 'BEGIN{print \"a\"' f", "-"}, /* unterminated block: awk refuses it */
        {"awk 'BEGIN{print \"a}' f", "its program runs command"}, /* unterminated string */
        {"gawk '@include \"x\"'", "its program runs command"},
        {"mawk 'BEGIN{system(\"id\")}'", "its program runs command"},
        {"gawk -e 'BEGIN{system(\"id\")}'", "its program runs command"},
        {"gawk --source='BEGIN{system(\"id\")}'", "its program runs command"},
        {"awk -f prog.awk f", "-f/-E/--file/--exec/-i/-"},
        {"gawk -l ./ext.so 'BEGIN{}'", "-f/-E/--file/--exec/-i/-"},
        {"gawk -o/tmp/x '{}'", "-d/-o/-p/-D and --dump-v"},
        {"gawk --sandbox 'BEGIN{system(\"id\")}'", "-"},
        {"gawk -S 'BEGIN{system(\"id\")}'", "-"},
        /* mawk and BWK awk ignore options they do not know: no sandbox */
        {"awk --sandbox 'BEGIN{system(\"id\")}'", "its program runs command"},
        {"mawk -S 'BEGIN{system(\"id\")}'", "its program runs command"},
    };
    RUN("sed/awk", c);
}

static void test_others(void)
{
    static const case_t c[] = {
        {"tar -czf a.tgz src", "-"},
        {"tar xzf a.tgz", "-"},
        {"tar -C out -xf a.tar", "-"},
        {"tar --checkpoint=100 -cf a.tar d", "-"},
        {"tar -xf a.tar --to-command=id", "--to-command/--use-compr"},
        {"tar -x --to-c=id -f a.tar", "--to-command/--use-compr"},
        {"tar -I ./evil -xf a.tar", "--to-command/--use-compr"},
        {"tar xIf ./evil a.tar", "--to-command/--use-compr"},
        {"tar -cf a.tar --use-compress-program=./evil d", "--to-command/--use-compr"},
        {"tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id d", "--checkpoint-action"},
        {"tar -cf a.tar *", "an argument only known w"}, /* a file named --to-command=x */
        {"sort -r f", "-"},
        {"sort -k2,2 -t, -S 1G f", "-"},
        {"sort --compress-program=./x f", "--compress-program"},
        {"sort -k $K f", "an argument only known w"}, /* may split: 1 --compress-program=x */
        {"sort -k \"$K\" f", "-"},                    /* one word: -k's value */
        {"tar \"x$F\" a.tar", "an argument only known w"},
        {"sort --compress=./x f", "--compress-program"},
        {"sort -o out f", "-o/--output"},
        {"sort -ro out f", "-o/--output"},
        {"rg -n TODO src", "-"},
        {"rg --pre-glob '*.gz' foo", "-"},
        {"rg --pre ./x pat", "--pre/--hostname-bin"},
        {"rg --pre=./x pat", "--pre/--hostname-bin"},
        {"rg --hostname-bin=./x pat", "--pre/--hostname-bin"},
        {"less f", "-"},
        {"less -N -p pattern f", "-"},
        {"less +'!id' f", "+CMD"},
        {"less -p x +'!id' f", "+CMD"},
        {"less -k keys f", "-k/--lesskey-file/--less"},
        {"less -o log f", "-o/-O/--log-file"},
        {"man ls", "-"},
        {"man 3 printf", "-"},
        {"man -P ./x ls", "-P/--pager/-H/--html/-C/"},
        {"man --pager=./x ls", "-P/--pager/-H/--html/-C/"},
        {"man -H./x ls", "-P/--pager/-H/--html/-C/"},
        {"vim f", "-"},
        {"vim -R f", "-"},
        {"vim -c '!id' f", "+CMD/-c/--cmd/-S/-u/-U/-"},
        {"vim +'!id' f", "+CMD/-c/--cmd/-S/-u/-U/-"},
        {"vim -t tag +'!id'", "+CMD/-c/--cmd/-S/-u/-U/-"},
        {"vim --cmd '!id' f", "+CMD/-c/--cmd/-S/-u/-U/-"},
        {"vim -S evil.vim f", "+CMD/-c/--cmd/-S/-u/-U/-"},
        {"vim -es f", "+CMD/-c/--cmd/-S/-u/-U/- + +CMD/-c/--cmd/-S/-u/-U/-"},
        {"ex f", "+CMD/-c/--cmd/-S/-u/-U/-"}, /* reads editor commands from its input */
        {"find . -name '*.c'", "-"},
        {"find src -type f -print", "-"},
        {"find . -fprint /tmp/x", "-fprint/-fprint0/-fprint"},
        {"find . -fprintf /tmp/x %p", "-fprint/-fprint0/-fprint"},
        {"find . -fls /tmp/x", "-fprint/-fprint0/-fprint"},
        {"find . -name x.o -delete", "-fprint/-fprint0/-fprint"},
        {"zip -r a.zip d", "-"},
        {"zip -T -TT ./x a.zip f", "-TT/--unzip-command"},
        {"zip --unzip-command=./x -T a.zip f", "-TT/--unzip-command"},
        {"rsync -av a/ b/", "-"},
        {"rsync -av --exclude .git a/ b/", "-"},
        {"rsync -e ./x a host:b", "-e/--rsh/--rsync-path"},
        {"rsync -ave ./x a host:b", "-e/--rsh/--rsync-path"},
        {"rsync --rsh=./x a host:b", "-e/--rsh/--rsync-path"},
        {"rsync --rsync-path=./x a host:b", "-e/--rsh/--rsync-path"},
        {"rsync --log-file=/tmp/x a b", "--log-file/--write-batch"},
        {"curl -fsSL https://e.com", "-"},
        {"curl -H 'Accept: x' https://e.com", "-"},
        {"curl -o /tmp/x https://e.com", "-o/-O/--output/--output-"},
        {"curl -sSo x https://e.com", "-o/-O/--output/--output-"},
        {"curl -O https://e.com/x", "-o/-O/--output/--output-"},
        {"curl -K cfg https://e.com", "-o/-O/--output/--output-"},
        {"wget -q https://e.com/x", "-"},
        {"wget -O /tmp/x https://e.com", "-O/-o/-a/-P/--config/-e/"},
        {"wget --use-askpass=./x https://e.com", "-O/-o/-a/-P/--config/-e/"},
        {"python3 -c 'import os'", "-"}, /* a python rule already runs any code */
    };
    RUN("others", c);
}

static void test_git(void)
{
    static const case_t c[] = {
        {"git status", "-"},
        {"git log --oneline -3", "-"},
        {"git diff --no-ext-diff", "-"},
        {"git diff --stat HEAD~1", "-"},
        {"git diff -M HEAD", "-"},
        {"git push -u origin main", "-"}, /* push's -u is --set-upstream */
        {"git log --format='%H'", "-"},
        {"git --no-pager log -1", "-"},
        {"git diff --ext-diff", "--ext-diff"},
        {"git diff --ext HEAD", "--ext-diff"},
        {"git log --output=/tmp/x", "--output"},
        {"git log -p --output /tmp/x", "--output"},
        {"git -c core.pager=id log", "-c/--config-env sets a g:core.pager"},
        {"git -c core.fsmonitor=id status", "-c/--config-env sets a g:core.fsmonitor"},
        {"git -c Core.Pager=id log", "-c/--config-env sets a g:core.pager"},
        {"git --config-env=core.pager=E log", "-c/--config-env sets a g:core.pager"},
        {"git --exec-path=. status", "--exec-path"},
        {"git --exec-path", "-"}, /* prints the path */
        {"git -C /tmp/evil status", "-C/--git-dir"},
        {"git --git-dir=/tmp/evil/.git log", "-C/--git-dir"},
        {"git grep -O./x foo", "-O/--open-files-in-pager"},
        {"git grep --open-files-in-pager=./x foo", "-O/--open-files-in-pager"},
        {"git rebase -x id main", "-x/--exec/--extcmd"},
        {"git rebase --exec=id main", "-x/--exec/--extcmd"},
        {"git difftool -x ./x", "-x/--exec/--extcmd"},
        {"git fetch --upload-pack=./x origin", "--upload-pack/-u/--recei"},
        {"git clone -u ./x url d", "--upload-pack/-u/--recei"},
        {"git clone -c core.fsmonitor=id url d", "-c/--config-env sets a g:core.fsmonitor"},
        {"git clone --template=/tmp/t url d", "--template"},
        {"git push --receive-pack=./x origin main", "--upload-pack/-u/--recei"},
        {"git submodule foreach id", "runs the command given a"},
        {"git bisect run ./x", "runs the command given a"},
        {"git filter-branch --tree-filter id HEAD", "--*-filter/--setup/--smt"},
        {"git send-email --sendmail-cmd=./x a.patch", "--*-filter/--setup/--smt"},
        {"git help -w log", "--*-filter/--setup/--smt"},
        {"git help log", "-"},
        {"git instaweb", "runs the command given a"},
        {"git config core.pager id", "config"},
        {"git config --global alias.x '!id'", "config"},
        {"git config --add core.fsmonitor id", "config"},
        {"git config set core.pager id", "config"},
        {"git config -e", "config"},
        {"git config --unset core.hooksPath", "config"},
        {"git config edit", "config"},
        {"git config core.pager", "-"}, /* reads */
        {"git config --get core.pager", "-"},
        {"git config -l", "-"},
        {"git config --file x.cfg --list", "-"},
        {"git config get core.pager", "-"},
        {"git -C . -c core.pager=id log --ext-diff",
         "-C/--git-dir + -c/--config-env sets a g:core.pager + --ext-diff"},
    };
    RUN("git", c);
}

/* Debuggers, editors, build tools, compilers, database shells, socat, nc,
 * tcpdump, script. */
static void test_more(void)
{
    static const case_t c[] = {
        {"gdb ./prog", "-"},
        {"gdb -batch -ex 'shell id' ./prog", "-ex/-x/-iex/-ix/--eval-c"},
        {"gdb --eval-command='shell id' ./prog", "-ex/-x/-iex/-ix/--eval-c"},
        {"gdb -x cmds.gdb ./prog", "-ex/-x/-iex/-ix/--eval-c"},
        {"gdb --eval='shell id' ./prog", "-ex/-x/-iex/-ix/--eval-c"}, /* a prefix */
        {"emacs f.txt", "-"},
        {"emacs -nw f.txt", "-"},
        {"emacs --batch --eval '(shell-command \"id\")'", "--eval/-l/--load/-f/--fu"},
        {"emacs -l evil.el", "--eval/-l/--load/-f/--fu"},
        {"cmake -S . -B build", "-"},
        {"cmake --build build", "-"},
        {"cmake -P script.cmake", "-P/-C/-E/--toolchain"},
        {"cmake -E env X=1 id", "-P/-C/-E/--toolchain"},
        {"cmake -DCMAKE_C_COMPILER_LAUNCHER=./x -B b",
         "-D sets a cache variable:CMAKE_C_COMPILER_LAUNCHER"},
        {"cmake -D CMAKE_BUILD_TYPE=Release -B b", "-D sets a cache variable:CMAKE_BUILD_TYPE"},
        {"ninja -C build", "-f/-C"},
        {"ninja -f evil.ninja", "-f/-C"},
        {"ninja -j4 all", "-"},
        {"go build ./...", "-"},
        {"go test -run TestX ./...", "-"},
        {"go build -toolexec=./x ./...", "-toolexec/-exec/env -w"},
        {"go test -exec ./x ./...", "-toolexec/-exec/env -w"},
        {"go env -w GOFLAGS=-toolexec=./x", "-toolexec/-exec/env -w"},
        {"go env GOPATH", "-"},
        {"cargo build --release", "-"},
        {"cargo --config 'build.rustc-wrapper=\"./x\"' build", "--config"},
        {"cargo build --config target.x.runner=./x", "--config"},
        {"gcc -O2 -o x x.c", "-"},
        {"gcc -wrapper ./x,-v x.c", "-wrapper/-B/-fplugin/-fp"},
        {"gcc -B/tmp/x x.c", "-wrapper/-B/-fplugin/-fp"},
        {"gcc -fplugin=./x.so x.c", "-wrapper/-B/-fplugin/-fp"},
        {"gcc @opts x.c", "-wrapper/-B/-fplugin/-fp"},
        {"clang -Xclang -load -Xclang ./x.so x.c",
         "-wrapper/-B/-fplugin/-fp + -wrapper/-B/-fplugin/-fp"},
        {"gcc-12 -fuse-ld=/tmp/ld x.c", "-wrapper/-B/-fplugin/-fp"},
        {"clang -fuse-ld=lld x.c", "-"},
        {"sqlite3 db.sqlite 'select 1'", "-"},
        {"sqlite3 db.sqlite '.shell id'", "its SQL runs shell, file"},
        {"sqlite3 db.sqlite \"select writefile('x', 'y')\"", "its SQL runs shell, file"},
        {"sqlite3 db.sqlite \"ATTACH 'x.db' AS a\"", "its SQL runs shell, file"},
        {"sqlite3 db.sqlite", "its SQL runs shell, file"}, /* reads its input */
        {"sqlite3 -cmd '.system id' db.sqlite 'select 1'", "its SQL runs shell, file"},
        {"sqlite3 -safe db.sqlite '.shell id'", "-"},
        {"psql -c 'select 1' db", "-"},
        {"psql -c '\\! id' db", "its SQL runs shell, file"},
        {"psql -c \"COPY t TO PROGRAM 'id'\" db", "its SQL runs shell, file"},
        {"psql db", "its SQL runs shell, file"},
        {"psql -f x.sql db", "its SQL runs shell, file"},
        {"mysql -e 'select 1' db", "-"},
        {"mysql -e 'system id' db", "its SQL runs shell, file"},
        {"mysql -u root -p db", "its SQL runs shell, file"},
        {"socat - TCP:host:80", "-"},
        {"socat TCP-LISTEN:8080,fork TCP:host:80", "-"},
        {"socat TCP-LISTEN:8080 EXEC:id", "an address that runs a p"},
        {"socat - SYSTEM:id", "an address that runs a p"},
        {"socat - /tmp/x", "an address that runs a p"},
        {"nc host 80", "-"},
        {"nc -l -p 8080 -e /bin/sh", "-e/-c/--exec/--sh-exec/-"},
        {"ncat --sh-exec id -l 8080", "-e/-c/--exec/--sh-exec/-"},
        {"tcpdump -i eth0 -n", "-"},
        {"tcpdump -i eth0 -w x.pcap -G 1 -z ./x", "-z/-w + -z/-w"},
        /* script -c STRING is read as sh -c STRING (its commands are
         * checked as the string's own), without -c it runs a shell */
        {"script -qc id /dev/null", "-"},
        {"script -q /dev/null", "runs a shell, or the com"},
    };
    RUN("more", c);
}

/* A rule's pattern: what its words spell. */
static void test_patterns(void)
{
    static const case_t c[] = {
        {"make *", "-"},
        {"make", "-"},
        {"make -f *", "-f/--file/--makefile"},
        {"make -f build.mk *", "-f/--file/--makefile"},
        {"make CFLAGS=* *", "a NAME=value argument se:CFLAGS"},
        {"ssh *", "-"},
        {"ssh host *", "-"}, /* a wildcard does not spell a remote command */
        {"ssh host uptime", "-"},
        {"ssh -o ProxyCommand=* *", "-o sets an option that r:proxycommand"},
        {"ssh -o * *", "-"},
        {"sed *", "-"},
        {"sed -n *", "-"},
        {"awk *", "-"},
        {"git *", "-"},
        {"git -c color.ui=always *", "-c/--config-env sets a g:color.ui"},
        {"git -c *", "-"},
        {"git diff --ext-diff *", "--ext-diff"},
        {"tar *", "-"},
        {"make -C *", "-C/--directory"},
        {"cmake -DCMAKE_BUILD_TYPE=* *", "-D sets a cache variable:CMAKE_BUILD_TYPE"},
        {"cmake -D* *", "-"},
        {"sqlite3 *", "-"},
    };
    run("patterns", c, sizeof c / sizeof c[0], true);
}

int main(void)
{
    test_make();
    test_ssh();
    test_sed_awk();
    test_others();
    test_git();
    test_more();
    test_patterns();
    return t_done();
}
