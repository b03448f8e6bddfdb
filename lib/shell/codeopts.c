/* Programs whose options or arguments make them run code, or write or read a
 * file, that an argument chooses (shell.h, agti_sh_code_options): make -f
 * and --eval, ssh -o ProxyCommand, sed's e and w commands, awk's system(),
 * tar --to-command, ... A table per program, read as GNU getopt reads a
 * command line: short options cluster (-fE), an option's value is attached
 * (-oProxyCommand=x, --eval=x) or the next word, a long option may be
 * abbreviated (--ev is --eval; an ambiguous prefix counts as every option it
 * could be), options may come after operands, "--" ends them. What cannot be
 * read (a word only known when it runs, a program text that does not parse)
 * counts as such an option: the caller fails closed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "shell/shell.h"

#define WORD_DYN (AGTI_SHW_DYNAMIC | AGTI_SHW_UNQUOTED_EXP | AGTI_SHW_GLOB | AGTI_SHW_BRACE)

/* What an option's value (or the option itself) is. */
enum {
    R_CODE = 1,    /* the option runs code, or writes or reads a file it names */
    R_PROG,        /* its value is program text (sed -e, awk --source): read */
    R_PROGFILE,    /* R_CODE, and the program is not the first operand (sed -f) */
    R_SANDBOX,     /* disables the program's code and file commands (sed --sandbox) */
    R_SSHOPT,      /* its value is an ssh_config line (ssh -o) */
    R_GITCFG,      /* its value is a git config NAME=VALUE (git -c) */
    R_CODE_IF_ARG, /* R_CODE only with a value (git --exec-path=DIR; alone it prints) */
    R_PROG_ARG,    /* its value is program text and the program is not an operand (awk -e) */
    R_VAR          /* its value is NAME=VALUE: the detail is NAME (cmake -D) */
};

typedef struct copt {
    char s;            /* short letter, 0: none */
    const char *l;     /* long names "|a|b|", NULL: none */
    unsigned char arg; /* 0 none, 1 required (attached or the next word), 2 optional (attached) */
    unsigned char role;
    const char *why;
} copt;

/* kinds of operand handling */
enum {
    K_PLAIN = 0,
    K_MAKE,      /* NAME=value operands set make variables */
    K_SSH,       /* first operand the destination, the rest a remote command */
    K_SED,       /* the program is the first operand unless -e/-f */
    K_AWK,       /* the same for awk */
    K_TAR,       /* a first word without '-' is a cluster of options (tar xzf) */
    K_LESS,      /* +CMD operands are commands */
    K_VIM,       /* +CMD operands are commands */
    K_FIND,      /* primaries, not getopt */
    K_ZIP,       /* zip's -TT CMD (two letters) */
    K_GIT,       /* global options, then a subcommand */
    K_GITSUB,    /* a git subcommand: its options (table row of git_subs) */
    K_SSHCMD,    /* git submodule foreach / bisect run: the rest is a command */
    K_GITCONFIG, /* git config: a write unless it only reads */
    K_LONGONLY,  /* getopt_long_only: -name and --name are long options (gdb, emacs) */
    K_GO,        /* go's flags: -name, --name, -name=v; go env -w */
    K_CC,        /* compiler drivers: -wrapper, -B, -fplugin=, @file, ... */
    K_SQLITE,    /* sqlite3 DB [SQL]...: dot-commands, file functions, stdin */
    K_PSQL,      /* psql: -c SQL, else its input */
    K_MYSQL,     /* mysql: -e SQL, else its input */
    K_SOCAT,     /* socat ADDRESS ADDRESS */
    K_ALWAYS     /* runs code whatever its options (script) */
};

typedef struct cprog {
    const char *names; /* "|make|gmake|" */
    const char *sarg;  /* other short options taking a value */
    const char *sopt;  /* other short options with an optional attached value */
    const char *larg;  /* other long options taking a value "|a|b|" */
    const copt *code;  /* terminated by an entry with why == NULL */
    int kind;
    const char *lsafe; /* long options that are not code although a code option starts with
                        * their name (tar --checkpoint, --checkpoint-action): exact only */
} cprog;

/* ---- reasons (their addresses identify an option: see agti_sh_codeopt) -- */

static const char W_DYNAMIC[] = "an argument only known when it runs may be such an option";
static const char W_MAKE_FILE[] = "-f/--file/--makefile: the makefile it names runs its recipes";
static const char W_MAKE_EVAL[] = "--eval/-E: evaluates its text as makefile code";
static const char W_MAKE_DIR[] = "-C/--directory: runs the makefile of another folder";
static const char W_MAKE_INC[] = "-I/--include-dir: includes makefiles from the folder it names";
static const char W_MAKE_VAR[] =
    "a NAME=value argument sets a make variable, which recipes run (SHELL=, CC=, $(shell ...))";
static const char W_SSH_CMD[] = "runs a command on the remote host";
static const char W_SSH_F[] = "-F: reads a configuration file, which can run commands";
static const char W_SSH_I[] = "-I: loads the PKCS#11 library it names";
static const char W_SSH_E[] = "-E: appends its log to the file it names";
static const char W_SSH_OPT[] =
    "-o sets an option that runs a command or loads code (ProxyCommand, LocalCommand, "
    "KnownHostsCommand, RemoteCommand, PKCS11Provider, SecurityKeyProvider, XAuthLocation)";
static const char W_SCP_S[] = "-S: runs the program it names instead of ssh";
static const char W_SFTP_D[] = "-D: runs the sftp server program it names";
static const char W_SFTP_B[] = "-b: runs a batch file, whose ! lines run local commands";
static const char W_SORT_COMP[] = "--compress-program: runs the program it names";
static const char W_SORT_OUT[] = "-o/--output: writes the file it names";
static const char W_SED_FILE[] = "-f/--file: runs a script file, which can run commands";
static const char W_SED_PROG[] =
    "its program runs commands (e, s///e), writes or reads files (w, W, s///w, r, R), or "
    "cannot be read";
static const char W_AWK_FILE[] =
    "-f/-E/--file/--exec/-i/--include/-l/--load: runs a program file or loads an extension";
static const char W_AWK_OUT[] = "-d/-o/-p/-D and --dump-variables, --pretty-print, --profile, "
                                "--debug: write a file or read debugger commands";
static const char W_AWK_W[] = "-W: an implementation option (mawk -W exec, gawk -W source)";
static const char W_AWK_PROG[] =
    "its program runs commands or opens files (system(), getline, | and > redirections, "
    "@include/@load) or cannot be read";
static const char W_TAR_CMD[] = "--to-command/--use-compress-program/-I/--info-script/-F/"
                                "--new-volume-script/--rsh-command/--rmt-command: runs the "
                                "program it names";
static const char W_TAR_CKPT[] = "--checkpoint-action: can run a command (exec=)";
static const char W_TAR_INDEX[] = "--index-file: writes the file it names";
static const char W_RG_PRE[] = "--pre/--hostname-bin: runs the program it names";
static const char W_LESS_CMD[] = "+CMD: runs a less command at start (!cmd runs a shell)";
static const char W_LESS_KEY[] = "-k/--lesskey-file/--lesskey-src/--lesskey-content: key "
                                 "bindings and environment (LESSOPEN) from the text it names";
static const char W_LESS_LOG[] = "-o/-O/--log-file: writes the file it names";
static const char W_MAN_PAGER[] = "-P/--pager/-H/--html/-C/--config-file: runs the pager or "
                                  "browser it names, or reads a configuration that names them";
static const char W_VIM_CMD[] = "+CMD/-c/--cmd/-S/-u/-U/-s/-e/-E/-l/--remote-send/--remote-expr: "
                                "runs editor commands, which can run shell commands";
static const char W_VIM_OUT[] = "-w/-W/-i/-V/--startuptime: writes the file it names";
static const char W_FIND_WRITE[] = "-fprint/-fprint0/-fprintf/-fls/-delete: writes or deletes "
                                   "files";
static const char W_ZIP_TT[] = "-TT/--unzip-command: runs the command it names";
static const char W_RSYNC_RSH[] =
    "-e/--rsh/--rsync-path: runs the program it names (locally or on the remote host)";
static const char W_RSYNC_OUT[] = "--log-file/--write-batch/--only-write-batch: writes the file "
                                  "it names";
static const char W_CURL_OUT[] =
    "-o/-O/--output/--output-dir/-D/-c/--trace/--libcurl/--etag-save/--stderr/--hsts/"
    "--alt-svc/-K/--config: writes the file it names, or reads a configuration that can";
static const char W_WGET_OUT[] =
    "-O/-o/-a/-P/--config/-e/--execute/--use-askpass: writes the file it names, "
    "runs the program it names, or runs wgetrc commands that can";
static const char W_GIT_CFG[] = "-c/--config-env sets a git configuration value, which can run "
                                "commands (core.pager, core.fsmonitor, core.sshCommand, alias.*)";
static const char W_GIT_EXEC[] = "--exec-path: runs git's commands from the folder it names";
static const char W_GIT_DIR[] =
    "-C/--git-dir: uses another repository, whose configuration can run commands";
static const char W_GIT_EXT[] = "--ext-diff: runs the external diff program of the configuration";
static const char W_GIT_OUTPUT[] = "--output: writes the file it names";
static const char W_GIT_PAGER[] = "-O/--open-files-in-pager: runs the pager it names";
static const char W_GIT_XCMD[] = "-x/--exec/--extcmd: runs the command it names (rebase, difftool)";
static const char W_GIT_PACK[] = "--upload-pack/-u/--receive-pack/--exec: runs the program it "
                                 "names";
static const char W_GIT_TEMPLATE[] = "--template: copies hooks from the folder it names";
static const char W_GIT_CONFIG[] = "config: writes a configuration value, which can run "
                                   "commands (core.pager, core.fsmonitor, alias.*)";
static const char W_GDB[] = "-ex/-x/-iex/-ix/--eval-command/--command: runs debugger commands, "
                            "which can run shell commands";
static const char W_EMACS[] = "--eval/-l/--load/-f/--funcall/--script/-x: runs Lisp code";
static const char W_CMAKE[] = "-P/-C/-E/--toolchain: runs a CMake script or a command";
static const char W_CMAKE_VAR[] = "-D sets a cache variable, which can name a program "
                                  "(CMAKE_C_COMPILER, CMAKE_*_LAUNCHER)";
static const char W_NINJA[] = "-f/-C: runs the build file it names, or that of another folder";
static const char W_GO[] = "-toolexec/-exec/env -w: runs the program it names, or writes go's "
                           "settings (GOFLAGS)";
static const char W_CARGO[] = "--config: sets a configuration value, which can name a program "
                              "(build.rustc-wrapper, target.*.runner)";
static const char W_CC[] = "-wrapper/-B/-fplugin/-fpass-plugin/-specs/-fuse-ld/--ld-path/"
                           "-Xclang/-Xlinker/@file: runs or loads a program, or reads options "
                           "from a file";
static const char W_SQL[] =
    "its SQL runs shell, file or extension commands (sqlite3 .shell/.system/.output, ATTACH, "
    "VACUUM INTO, load_extension, writefile, edit; psql \\! \\o COPY PROGRAM; mysql system, "
    "\\!, source, INTO OUTFILE), or it reads them from its input or a file";
static const char W_SOCAT[] = "an address that runs a program or opens a file (EXEC:, SYSTEM:, "
                              "OPEN:, CREATE:, a path, ...), or -L/-W/-lf: writes a file";
static const char W_NC[] =
    "-e/-c/--exec/--sh-exec/--lua-exec/-o/--output: runs the program it names, or writes a file";
static const char W_TCPDUMP[] = "-z/-w: runs the command it names after each file, or writes one";
static const char W_SCRIPT[] = "runs a shell, or the command given with -c, and writes its log";
static const char W_GIT_FILTER[] =
    "--*-filter/--setup/--smtp-server/--sendmail-cmd/--*-cmd/help --web: runs the command or "
    "browser it names";
static const char W_GIT_RUN[] = "runs the command given after it (submodule foreach, bisect run)";

/* ---- the tables ------------------------------------------------------- */

static const copt make_code[] = {{'f', "|file|makefile|", 1, R_CODE, W_MAKE_FILE},
                                 {'E', "|eval|", 1, R_CODE, W_MAKE_EVAL},
                                 {'C', "|directory|", 1, R_CODE, W_MAKE_DIR},
                                 {'I', "|include-dir|", 1, R_CODE, W_MAKE_INC},
                                 {0, NULL, 0, 0, NULL}};

/* OpenSSH: "1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy" */
static const copt ssh_code[] = {{'o', NULL, 1, R_SSHOPT, W_SSH_OPT},
                                {'F', NULL, 1, R_CODE, W_SSH_F},
                                {'I', NULL, 1, R_CODE, W_SSH_I},
                                {'E', NULL, 1, R_CODE, W_SSH_E},
                                {0, NULL, 0, 0, NULL}};
/* scp: "12346ABCTdfOpqRrstvD:F:J:P:S:c:i:l:o:X:" */
static const copt scp_code[] = {{'o', NULL, 1, R_SSHOPT, W_SSH_OPT},
                                {'F', NULL, 1, R_CODE, W_SSH_F},
                                {'S', NULL, 1, R_CODE, W_SCP_S},
                                {'D', NULL, 1, R_CODE, W_SFTP_D},
                                {0, NULL, 0, 0, NULL}};
/* sftp: "1246AafhNpqrvCc:D:i:l:o:s:S:b:B:F:J:P:R:X:" */
static const copt sftp_code[] = {
    {'o', NULL, 1, R_SSHOPT, W_SSH_OPT}, {'F', NULL, 1, R_CODE, W_SSH_F},
    {'S', NULL, 1, R_CODE, W_SCP_S},     {'D', NULL, 1, R_CODE, W_SFTP_D},
    {'b', NULL, 1, R_CODE, W_SFTP_B},    {0, NULL, 0, 0, NULL}};

static const copt sort_code[] = {{0, "|compress-program|", 1, R_CODE, W_SORT_COMP},
                                 {'o', "|output|", 1, R_CODE, W_SORT_OUT},
                                 {0, NULL, 0, 0, NULL}};

static const copt sed_code[] = {{'e', "|expression|", 1, R_PROG, W_SED_PROG},
                                {'f', "|file|", 1, R_PROGFILE, W_SED_FILE},
                                {0, NULL, 0, 0, NULL}};

static const copt awk_code[] = {{'f', "|file|", 1, R_PROGFILE, W_AWK_FILE},
                                {'E', "|exec|", 1, R_PROGFILE, W_AWK_FILE},
                                {'i', "|include|", 1, R_CODE, W_AWK_FILE},
                                {'l', "|load|", 1, R_CODE, W_AWK_FILE},
                                {'e', "|source|", 1, R_PROG_ARG, W_AWK_PROG},
                                {'d', "|dump-variables|", 2, R_CODE, W_AWK_OUT},
                                {'o', "|pretty-print|", 2, R_CODE, W_AWK_OUT},
                                {'p', "|profile|", 2, R_CODE, W_AWK_OUT},
                                {'D', "|debug|", 2, R_CODE, W_AWK_OUT},
                                {'W', NULL, 1, R_CODE, W_AWK_W},
                                {0, NULL, 0, 0, NULL}};

static const copt tar_code[] = {
    {'I',
     "|use-compress-program|to-command|info-script|new-volume-script|rsh-command|rmt-"
     "command|",
     1, R_CODE, W_TAR_CMD},
    {'F', NULL, 1, R_CODE, W_TAR_CMD},
    {0, "|checkpoint-action|", 1, R_CODE, W_TAR_CKPT},
    {0, "|index-file|", 1, R_CODE, W_TAR_INDEX},
    {0, NULL, 0, 0, NULL}};

static const copt rg_code[] = {{0, "|pre|hostname-bin|", 1, R_CODE, W_RG_PRE},
                               {0, NULL, 0, 0, NULL}};

static const copt less_code[] = {
    {'k', "|lesskey-file|lesskey-src|lesskey-content|", 1, R_CODE, W_LESS_KEY},
    {'o', "|log-file|", 1, R_CODE, W_LESS_LOG},
    {'O', "|LOG-FILE|", 1, R_CODE, W_LESS_LOG},
    {0, NULL, 0, 0, NULL}};

static const copt man_code[] = {{'P', "|pager|", 1, R_CODE, W_MAN_PAGER},
                                {'H', "|html|", 2, R_CODE, W_MAN_PAGER},
                                {'C', "|config-file|", 1, R_CODE, W_MAN_PAGER},
                                {0, NULL, 0, 0, NULL}};

static const copt vim_code[] = {{'c', "|cmd|remote-send|remote-expr|", 1, R_CODE, W_VIM_CMD},
                                {'S', NULL, 1, R_CODE, W_VIM_CMD},
                                {'u', NULL, 1, R_CODE, W_VIM_CMD},
                                {'U', NULL, 1, R_CODE, W_VIM_CMD},
                                {'s', NULL, 1, R_CODE, W_VIM_CMD},
                                {'e', NULL, 0, R_CODE, W_VIM_CMD},
                                {'E', NULL, 0, R_CODE, W_VIM_CMD},
                                {'l', NULL, 0, R_CODE, W_VIM_CMD},
                                {'w', "|startuptime|", 1, R_CODE, W_VIM_OUT},
                                {'W', NULL, 1, R_CODE, W_VIM_OUT},
                                {'i', NULL, 1, R_CODE, W_VIM_OUT},
                                {'V', NULL, 2, R_CODE, W_VIM_OUT},
                                {0, NULL, 0, 0, NULL}};

static const copt zip_code[] = {{0, "|unzip-command|", 1, R_CODE, W_ZIP_TT}, {0, NULL, 0, 0, NULL}};

static const copt rsync_code[] = {
    {'e', "|rsh|rsync-path|", 1, R_CODE, W_RSYNC_RSH},
    {0, "|log-file|write-batch|only-write-batch|", 1, R_CODE, W_RSYNC_OUT},
    {0, NULL, 0, 0, NULL}};

static const copt curl_code[] = {
    {'o',
     "|output|output-dir|dump-header|cookie-jar|trace|trace-ascii|libcurl|etag-save|"
     "stderr|hsts|alt-svc|config|",
     1, R_CODE, W_CURL_OUT},
    {'O', "|remote-name|remote-name-all|", 0, R_CODE, W_CURL_OUT},
    {'D', NULL, 1, R_CODE, W_CURL_OUT},
    {'c', NULL, 1, R_CODE, W_CURL_OUT},
    {'K', NULL, 1, R_CODE, W_CURL_OUT},
    {0, NULL, 0, 0, NULL}};

static const copt wget_code[] = {
    {'O', "|output-document|output-file|append-output|directory-prefix|config|execute|use-askpass|",
     1, R_CODE, W_WGET_OUT},
    {'o', NULL, 1, R_CODE, W_WGET_OUT},
    {'a', NULL, 1, R_CODE, W_WGET_OUT},
    {'P', NULL, 1, R_CODE, W_WGET_OUT},
    {'e', NULL, 1, R_CODE, W_WGET_OUT},
    {0, NULL, 0, 0, NULL}};

static const copt gdb_code[] = {
    {0, "|ex|eval-command|x|command|iex|init-eval-command|ix|init-command|", 1, R_CODE, W_GDB},
    {0, NULL, 0, 0, NULL}};
static const copt emacs_code[] = {
    {0, "|eval|execute|l|load|f|funcall|script|x|", 1, R_CODE, W_EMACS}, {0, NULL, 0, 0, NULL}};
static const copt cmake_code[] = {
    {'P', NULL, 1, R_CODE, W_CMAKE},    {'C', NULL, 1, R_CODE, W_CMAKE},
    {'E', NULL, 0, R_CODE, W_CMAKE},    {0, "|toolchain|", 1, R_CODE, W_CMAKE},
    {'D', NULL, 1, R_VAR, W_CMAKE_VAR}, {0, NULL, 0, 0, NULL}};
static const copt ninja_code[] = {
    {'f', NULL, 1, R_CODE, W_NINJA}, {'C', NULL, 1, R_CODE, W_NINJA}, {0, NULL, 0, 0, NULL}};
static const copt cargo_code[] = {{0, "|config|", 1, R_CODE, W_CARGO}, {0, NULL, 0, 0, NULL}};
static const copt nc_code[] = {{'e', "|exec|sh-exec|lua-exec|", 1, R_CODE, W_NC},
                               {'c', NULL, 1, R_CODE, W_NC},
                               {'o', "|output|hex-dump|", 1, R_CODE, W_NC},
                               {0, NULL, 0, 0, NULL}};
static const copt tcpdump_code[] = {
    {'z', NULL, 1, R_CODE, W_TCPDUMP}, {'w', NULL, 1, R_CODE, W_TCPDUMP}, {0, NULL, 0, 0, NULL}};
static const copt psql_code[] = {{'c', "|command|", 1, R_PROG, W_SQL},
                                 {'f', "|file|", 1, R_PROGFILE, W_SQL},
                                 {'o', "|output|log-file|", 1, R_CODE, W_SQL},
                                 {'L', NULL, 1, R_CODE, W_SQL},
                                 {0, NULL, 0, 0, NULL}};
static const copt mysql_code[] = {{'e', "|execute|", 1, R_PROG, W_SQL},
                                  {0, "|pager|tee|init-command|", 1, R_CODE, W_SQL},
                                  {0, NULL, 0, 0, NULL}};

static const cprog progs[] = {
    {"|make|gmake|bmake|pmake|remake|", "oW", "jlO",
     "|old-file|assume-old|what-if|new-file|assume-new|", make_code, K_MAKE},
    {"|ssh|slogin|", "bceilmpBDJLOPQRSwW", "", "||", ssh_code, K_SSH},
    {"|scp|", "JPcilX", "", "||", scp_code, K_PLAIN},
    {"|sftp|", "cilsBJPRX", "", "||", sftp_code, K_PLAIN},
    {"|sort|", "ktST", "",
     "|key|field-separator|buffer-size|temporary-directory|parallel|"
     "files0-from|random-source|sort|batch-size|",
     sort_code, K_PLAIN},
    {"|sed|gsed|", "l", "i", "|line-length|", sed_code, K_SED},
    {"|awk|gawk|mawk|nawk|original-awk|", "vF", "L", "|assign|field-separator|", awk_code, K_AWK},
    {"|tar|gtar|bsdtar|", "bCfgHKLNTVX", "",
     "|file|directory|blocking-factor|record-size|files-from|"
     "exclude-from|exclude|format|group|owner|mode|mtime|newer|"
     "after-date|newer-mtime|starting-file|tape-length|"
     "volno-file|label|listed-incremental|transform|xform|"
     "suffix|",
     tar_code, K_TAR, "|checkpoint|"},
    {"|rg|", "ABCEefgjMmrTt", "",
     "|regexp|file|glob|iglob|type|type-not|type-add|type-clear|replace|max-count|max-columns|"
     "max-depth|max-filesize|threads|encoding|engine|sort|sortr|context|after-context|"
     "before-context|colors|color|path-separator|pre-glob|ignore-file|",
     rg_code, K_PLAIN},
    {"|less|", "bhjpPtTxyz#D", "", "|pattern|prompt|tag|tag-file|shift|window|tabs|", less_code,
     K_LESS},
    {"|man|", "LMmSsEepRr", "",
     "|locale|manpath|systems|sections|encoding|extension|"
     "preprocessor|prompt|",
     man_code, K_PLAIN},
    {"|vim|vi|nvim|view|gvim|vimdiff|gview|ex|rvim|", "tT", "", "||", vim_code, K_VIM},
    {"|find|", "", "", "||", NULL, K_FIND},
    {"|zip|", "bnt", "", "||", zip_code, K_ZIP},
    {"|rsync|", "BfTM", "",
     "|filter|exclude|include|exclude-from|include-from|files-from|"
     "temp-dir|compare-dest|copy-dest|link-dest|backup-dir|suffix|chmod|"
     "chown|usermap|groupmap|timeout|contimeout|port|block-size|"
     "max-size|min-size|partial-dir|out-format|password-file|bwlimit|"
     "remote-option|",
     rsync_code, K_PLAIN},
    {"|curl|", "AbdeEFHmrTuUwxXyYzC", "",
     "|data|data-binary|data-raw|data-urlencode|header|user|user-agent|referer|request|url|"
     "form|max-time|proxy|cookie|",
     curl_code, K_PLAIN},
    {"|wget|", "iBtTwUlADRIXQ", "", "|input-file|base|tries|timeout|wait|user-agent|level|",
     wget_code, K_PLAIN},
    {"|git|", "", "", "||", NULL, K_GIT},
    {"|gdb|", "", "", "||", gdb_code, K_LONGONLY},
    {"|emacs|", "", "", "||", emacs_code, K_LONGONLY},
    {"|cmake|", "GTASBWUL", "", "|preset|log-level|", cmake_code, K_PLAIN},
    {"|ninja|", "jkldtw", "", "||", ninja_code, K_PLAIN},
    {"|go|", "", "", "||", NULL, K_GO},
    {"|cargo|", "pjFZ", "", "|package|jobs|features|target|manifest-path|", cargo_code, K_PLAIN},
    {"|gcc|g++|cc|c++|clang|clang++|cpp|gfortran|", "", "", "||", NULL, K_CC},
    {"|sqlite3|", "", "", "||", NULL, K_SQLITE},
    {"|psql|", "dhpUvPTFRwW", "", "|dbname|host|port|username|variable|set|pset|", psql_code,
     K_PSQL},
    {"|mysql|mariadb|", "uhPDSOb", "p", "|user|host|port|database|socket|", mysql_code, K_MYSQL},
    {"|socat|", "bTDs", "", "||", NULL, K_SOCAT},
    {"|nc|ncat|netcat|", "ipsTwxXIOMVqbmg", "", "|proxy|proxy-type|source|wait|", nc_code, K_PLAIN},
    {"|tcpdump|", "BcCEFGiIjMmrsTVWyZ", "", "||", tcpdump_code, K_PLAIN},
    {"|script|", "", "", "||", NULL, K_ALWAYS},
};

/* git subcommands and their options (read after the global options). */
static const copt git_diff_code[] = {{0, "|ext-diff|", 0, R_CODE, W_GIT_EXT},
                                     {0, "|output|", 1, R_CODE, W_GIT_OUTPUT},
                                     {0, NULL, 0, 0, NULL}};
static const copt git_grep_code[] = {{'O', "|open-files-in-pager|", 2, R_CODE, W_GIT_PAGER},
                                     {0, NULL, 0, 0, NULL}};
static const copt git_xcmd_code[] = {{'x', "|exec|extcmd|", 1, R_CODE, W_GIT_XCMD},
                                     {0, NULL, 0, 0, NULL}};
static const copt git_clone_code[] = {{'u', "|upload-pack|", 1, R_CODE, W_GIT_PACK},
                                      {'c', "|config|", 1, R_GITCFG, W_GIT_CFG},
                                      {0, "|template|", 1, R_CODE, W_GIT_TEMPLATE},
                                      {0, NULL, 0, 0, NULL}};
static const copt git_fetch_code[] = {{0, "|upload-pack|exec|", 1, R_CODE, W_GIT_PACK},
                                      {0, NULL, 0, 0, NULL}};
static const copt git_push_code[] = {{0, "|receive-pack|exec|", 1, R_CODE, W_GIT_PACK},
                                     {0, NULL, 0, 0, NULL}};
static const copt git_init_code[] = {{0, "|template|", 1, R_CODE, W_GIT_TEMPLATE},
                                     {0, NULL, 0, 0, NULL}};
static const copt git_filter_code[] = {
    {0,
     "|tree-filter|index-filter|msg-filter|env-filter|commit-filter|parent-filter|tag-name-"
     "filter|setup|smtp-server|sendmail-cmd|to-cmd|cc-cmd|header-cmd|",
     1, R_CODE, W_GIT_FILTER},
    {0, NULL, 0, 0, NULL}};
static const copt git_help_code[] = {{'w', "|web|", 0, R_CODE, W_GIT_FILTER},
                                     {0, NULL, 0, 0, NULL}};
static const copt git_none[] = {{0, NULL, 0, 0, NULL}};

static const cprog git_subs[] = {
    {"|diff|log|show|format-patch|whatchanged|diff-tree|diff-files|diff-index|range-diff|stash|"
     "reflog|",
     "SGL", "lMCBOU", "||", git_diff_code, K_GITSUB},
    {"|grep|", "efABCm", "", "||", git_grep_code, K_GITSUB},
    {"|rebase|difftool|", "Xst", "S", "||", git_xcmd_code, K_GITSUB},
    {"|clone|", "objo", "", "||", git_clone_code, K_GITSUB},
    {"|fetch|pull|ls-remote|archive|", "oj", "", "||", git_fetch_code, K_GITSUB},
    {"|push|send-pack|", "o", "", "||", git_push_code, K_GITSUB},
    {"|init|", "", "", "||", git_init_code, K_GITSUB},
    {"|submodule|bisect|", "", "", "||", git_none, K_SSHCMD},
    {"|config|", "", "", "||", git_none, K_GITCONFIG},
    {"|filter-branch|send-email|", "d", "", "||", git_filter_code, K_GITSUB},
    {"|help|", "", "", "||", git_help_code, K_GITSUB},
    {"|instaweb|", "", "", "||", git_none, K_SSHCMD},
};

/* ---- helpers ------------------------------------------------------------ */

bool agti_sh_opt_listed(const char *list, const char *name, size_t n)
{
    if (n == 0)
        return false;
    for (const char *p = list; (p = strchr(p, '|')) != NULL && p[1];) {
        p++;
        size_t m = strcspn(p, "|");
        if (m == n && memcmp(p, name, n) == 0)
            return true;
        p += m;
    }
    return false;
}

static bool in_names(const char *list, const char *name)
{
    return agti_sh_opt_listed(list, name, strlen(name));
}

/* Whether name[0..n) is a long option of list or an abbreviation of one
 * (GNU getopt_long and git take any unambiguous prefix; an ambiguous one is
 * counted as each option it could be). */
static bool long_meets(const char *list, const char *name, size_t n)
{
    if (list == NULL || n == 0)
        return false;
    for (const char *p = list; (p = strchr(p, '|')) != NULL && p[1];) {
        p++;
        size_t m = strcspn(p, "|");
        if (m >= n && memcmp(p, name, n) == 0)
            return true;
        p += m;
    }
    return false;
}

typedef struct cctx {
    agti_sh_codeopt *out;
    size_t max, n;
    bool pattern;    /* the words are a rule's pattern (wildcards: AGTI_SHW_GLOB) */
    bool sandbox;    /* sed/awk --sandbox */
    bool prog_given; /* -e/-f: the program is not an operand */
    agti_buf prog;   /* sed: the -e texts joined by newlines */
    bool prog_dyn;
    bool oom;
    const char *name; /* the program's name (argv[0]) */
} cctx;

static void hit(cctx *c, const char *why, const char *detail, size_t dlen, bool lower)
{
    if (why == NULL)
        return;
    if (dlen >= sizeof c->out[0].detail)
        dlen = sizeof c->out[0].detail - 1;
    char d[sizeof c->out[0].detail];
    for (size_t i = 0; i < dlen; i++) {
        char ch = detail[i];
        d[i] = lower && ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
    }
    d[dlen] = '\0';
    /* each one is counted (a rule spelling one -f covers one), but for the
     * words only known when it runs: once */
    size_t have = c->n < c->max ? c->n : c->max;
    for (size_t i = 0; why == W_DYNAMIC && i < have; i++)
        if (c->out[i].why == why)
            return;
    if (c->n < c->max) {
        c->out[c->n].why = why;
        memcpy(c->out[c->n].detail, d, dlen + 1);
    }
    c->n++;
}

/* A word that is only known when it runs and may become an option or
 * several words: an unquoted expansion, a glob, a brace expansion, or one
 * that starts with an expansion or a '-'. */
static bool dyn_maybe_option(const char *w, unsigned f, bool dashdash)
{
    if (!(f & WORD_DYN))
        return false;
    if (f & (AGTI_SHW_UNQUOTED_EXP | AGTI_SHW_GLOB | AGTI_SHW_BRACE))
        return true;
    return !dashdash && (w[0] == '-' || w[0] == '$' || w[0] == '`');
}

/* ---- sed programs -------------------------------------------------------- */

/* Skips a delimited part (s/REGEX/, y/SRC/) starting after the delimiter;
 * returns the index after the closing delimiter, or SIZE_MAX. */
static size_t sed_delim(const char *p, size_t n, size_t i, char d)
{
    for (; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n) {
            i++;
            continue;
        }
        if (p[i] == d)
            return i + 1;
        if (p[i] == '\n' && d != '\n')
            return SIZE_MAX;
    }
    return SIZE_MAX;
}

static size_t skip_line(const char *p, size_t n, size_t i)
{
    while (i < n && p[i] != '\n')
        i++;
    return i;
}

/* Whether a GNU sed program can run a command or write or read a file (e,
 * s///e, w, W, s///w, r, R), or cannot be read. */
static bool sed_unsafe(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        char ch = p[i];
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '}' || ch == '{' ||
            ch == '!') {
            i++;
            continue;
        }
        if (ch == '#') {
            i = skip_line(p, n, i);
            continue;
        }
        /* addresses */
        if ((ch >= '0' && ch <= '9') || ch == '$' || ch == ',' || ch == '~' || ch == '+') {
            i++;
            continue;
        }
        if (ch == '/' || ch == '\\') {
            char d = '/';
            if (ch == '\\') {
                if (i + 1 >= n)
                    return true;
                d = p[++i];
            }
            i = sed_delim(p, n, i + 1, d);
            if (i == SIZE_MAX)
                return true;
            while (i < n && (p[i] == 'I' || p[i] == 'M'))
                i++;
            continue;
        }
        i++;
        switch (ch) {
        case 'e':
        case 'w':
        case 'W':
        case 'r':
        case 'R':
            return true;
        case 's':
        case 'y': {
            if (i >= n || p[i] == '\n' || p[i] == '\\')
                return true;
            char d = p[i];
            i = sed_delim(p, n, i + 1, d);
            if (i == SIZE_MAX)
                return true;
            i = sed_delim(p, n, i, d);
            if (i == SIZE_MAX)
                return true;
            if (ch == 'y')
                break;
            while (i < n && strchr("gpiImM0123456789", p[i]) != NULL)
                i++;
            if (i < n && (p[i] == 'e' || p[i] == 'w'))
                return true;
            break;
        }
        case ':':
        case 'b':
        case 't':
        case 'T':
        case 'v':
            while (i < n && p[i] != '\n' && p[i] != ';')
                i++;
            break;
        case 'a':
        case 'i':
        case 'c':
            /* text to the end of the line; a backslash before the newline
             * continues it */
            while (i < n) {
                if (p[i] == '\\' && i + 1 < n) {
                    i += 2;
                    continue;
                }
                if (p[i] == '\n')
                    break;
                i++;
            }
            break;
        case 'l':
        case 'q':
        case 'Q':
        case 'L':
            while (i < n && (p[i] == ' ' || (p[i] >= '0' && p[i] <= '9')))
                i++;
            break;
        case 'd':
        case 'D':
        case 'g':
        case 'G':
        case 'h':
        case 'H':
        case 'n':
        case 'N':
        case 'p':
        case 'P':
        case 'x':
        case 'z':
        case 'F':
        case '=':
            break;
        default:
            return true; /* not a command sed knows, or one not read here */
        }
    }
    return false;
}

/* ---- awk programs ---------------------------------------------------------- */

static bool awk_ident_c(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Whether an awk program can run a command or open a file chosen by its
 * text: system(), getline, a | pipe, a > or >> redirection of print or
 * printf, @include/@load (gawk); or cannot be read (an unterminated string
 * or regex). A '/' starts a regex only where no operand precedes it; where
 * that is not certain it is read as division, so a regex's text is then
 * read as code (never the other way round). */
static bool awk_unsafe(const char *p, size_t n)
{
    bool operand = false, in_print = false;
    int depth = 0, print_depth = 0;
    for (size_t i = 0; i < n;) {
        char ch = p[i];
        if (ch == ' ' || ch == '\t' || ch == '\r') {
            i++;
            continue;
        }
        if (ch == '\\' && i + 1 < n && p[i + 1] == '\n') {
            i += 2;
            continue;
        }
        if (ch == '\n' || ch == ';' || ch == '{' || ch == '}') {
            in_print = false;
            operand = false;
            i++;
            continue;
        }
        if (ch == '#') {
            i = skip_line(p, n, i);
            continue;
        }
        if (ch == '"' || (ch == '/' && !operand)) {
            size_t k = i + 1;
            while (k < n && p[k] != ch && p[k] != '\n') {
                if (p[k] == '\\' && k + 1 < n)
                    k++;
                k++;
            }
            if (k >= n || p[k] != ch)
                return true;
            i = k + 1;
            operand = true;
            continue;
        }
        if (awk_ident_c(ch)) {
            size_t k = i;
            while (k < n && awk_ident_c(p[k]))
                k++;
            size_t m = k - i;
            if ((m == 6 && memcmp(p + i, "system", 6) == 0) ||
                (m == 7 && memcmp(p + i, "getline", 7) == 0))
                return true;
            bool pr = (m == 5 && memcmp(p + i, "print", 5) == 0) ||
                      (m == 6 && memcmp(p + i, "printf", 6) == 0);
            if (pr) {
                in_print = true;
                print_depth = depth;
            }
            operand = !(pr || (m == 6 && memcmp(p + i, "return", 6) == 0));
            i = k;
            continue;
        }
        if (ch == '@')
            return true;
        if (ch == '|') {
            if (i + 1 < n && p[i + 1] == '|') {
                i += 2;
                operand = false;
                continue;
            }
            return true;
        }
        if (ch == '>') {
            if (i + 1 < n && p[i + 1] == '=') {
                i += 2;
                operand = false;
                continue;
            }
            if (in_print && depth <= print_depth)
                return true;
            i++;
            operand = false;
            continue;
        }
        if (ch == '(' || ch == '[') {
            depth++;
            operand = false;
        } else if (ch == ')' || ch == ']') {
            depth--;
            operand = true;
        } else if ((ch == '+' || ch == '-') && i + 1 < n && p[i + 1] == ch) {
            i += 2;
            operand = true; /* a++ / 2: division */
            continue;
        } else {
            operand = false;
        }
        i++;
    }
    return false;
}

/* ---- ssh -o ------------------------------------------------------------- */

static void ssh_option(cctx *c, const char *v, unsigned f)
{
    if (c->pattern && (f & AGTI_SHW_GLOB) && v[0] == '\0')
        return; /* a wildcard value: the rule does not spell an option */
    static const char *const kws[] = {"proxycommand",       "localcommand",
                                      "permitlocalcommand", "knownhostscommand",
                                      "remotecommand",      "pkcs11provider",
                                      "smartcarddevice",    "securitykeyprovider",
                                      "xauthlocation",      NULL};
    while (*v == ' ' || *v == '\t')
        v++;
    size_t k = strcspn(v, "= \t");
    if (!c->pattern && (f & WORD_DYN)) {
        hit(c, W_DYNAMIC, "", 0, false);
        return;
    }
    /* ssh splits the line as a shell would: a quote or a backslash in the
     * keyword ("ProxyCommand" id, Proxy\Command) is not read here */
    size_t q = strcspn(v, "\"'\\");
    if (q < k || (q < strlen(v) && v[k] != '=' && v[k] != ' ' && v[k] != '\t')) {
        hit(c, W_SSH_OPT, v, k, true);
        return;
    }
    for (size_t i = 0; kws[i]; i++)
        if (strlen(kws[i]) == k && strncasecmp(kws[i], v, k) == 0) {
            hit(c, W_SSH_OPT, v, k, true);
            return;
        }
}

/* ---- git -c NAME=VALUE ------------------------------------------------------ */

static void git_config(cctx *c, const char *v, unsigned f)
{
    if (c->pattern && (f & AGTI_SHW_GLOB) && strchr(v, '=') == NULL)
        return; /* the name is not spelled */
    if (!c->pattern && (f & WORD_DYN) && strchr(v, '=') == NULL) {
        hit(c, W_DYNAMIC, "", 0, false);
        return;
    }
    hit(c, W_GIT_CFG, v, strcspn(v, "="), true);
}

/* ---- the getopt reading ------------------------------------------------------- */

/* One option's value v (word flags f): what its role says. */
static void value_role(cctx *c, const copt *o, const char *v, unsigned f, bool has)
{
    switch (o->role) {
    case R_CODE:
        hit(c, o->why, "", 0, false);
        break;
    case R_PROGFILE:
        c->prog_given = true;
        hit(c, o->why, "", 0, false);
        break;
    case R_SANDBOX:
        c->sandbox = true;
        break;
    case R_SSHOPT:
        if (has)
            ssh_option(c, v, f);
        break;
    case R_GITCFG:
        if (has)
            git_config(c, v, f);
        break;
    case R_VAR: {
        size_t k = strcspn(v, ":=");
        if (c->pattern && (f & AGTI_SHW_GLOB) && v[k] == '\0')
            break; /* the name is not spelled */
        if (!c->pattern && (f & WORD_DYN) && v[k] == '\0')
            hit(c, W_DYNAMIC, "", 0, false);
        else
            hit(c, o->why, v, k, false);
        break;
    }
    case R_CODE_IF_ARG:
        if (has)
            hit(c, o->why, "", 0, false);
        break;
    case R_PROG:
    case R_PROG_ARG:
        c->prog_given = true;
        if (!has)
            break;
        if (c->pattern && (f & AGTI_SHW_GLOB)) {
            c->prog_dyn = true; /* a wildcard in the program: spells nothing */
            break;
        }
        if (f & WORD_DYN)
            c->prog_dyn = true;
        if (c->prog.len)
            agti_buf_putc(&c->prog, '\n');
        agti_buf_puts(&c->prog, v);
        break;
    default:
        break;
    }
}

static const copt *find_short(const copt *code, char ch)
{
    for (size_t i = 0; code && code[i].why != NULL; i++)
        if (code[i].s == ch)
            return &code[i];
    return NULL;
}

/* GNU sed's and gawk's --sandbox (gawk -S): only under these names, since
 * mawk ignores a -W option it does not know and BWK awk an unknown option,
 * and then run system() all the same. */
static bool sandbox_names(const cctx *c, const cprog *sp)
{
    return sp->kind == K_SED || (sp->kind == K_AWK && strcmp(c->name, "gawk") == 0);
}

static bool sandbox_long(const cctx *c, const cprog *sp, const char *name, size_t n)
{
    return sandbox_names(c, sp) && n >= 2 && long_meets("|sandbox|", name, n) &&
           !long_meets("|source|", name, n);
}

static bool sandbox_short(const cctx *c, const cprog *sp, char ch)
{
    return sp->kind == K_AWK && sandbox_names(c, sp) && ch == 'S';
}

/* Whether the word after an option is read as its value: not when it looks
 * like an option (a prefix read wrongly then only asks more), nor a +CMD of
 * less or vim. */
static bool takes_word(const cprog *sp, const char *v)
{
    if (v[0] == '-' && v[1] != '\0')
        return false;
    return !((sp->kind == K_LESS || sp->kind == K_VIM) && v[0] == '+');
}

/* Takes w[i + 1] as an option's value: one that may split into several
 * words when it runs ($X unquoted, a glob) may give an option after it. */
static size_t take_value(cctx *c, const unsigned *f, size_t i)
{
    if (!c->pattern && (f[i + 1] & (AGTI_SHW_UNQUOTED_EXP | AGTI_SHW_GLOB | AGTI_SHW_BRACE)))
        hit(c, W_DYNAMIC, "", 0, false);
    return i + 1;
}

/* Reads w[from..n) as GNU getopt would for program sp; the operands go to
 * *ops (indices) in order. */
static void read_opts(cctx *c, const cprog *sp, char *const *w, const unsigned *f, size_t from,
                      size_t n, size_t *ops, size_t *nops)
{
    bool dashdash = false;
    *nops = 0;
    for (size_t i = from; i < n; i++) {
        const char *a = w[i];
        unsigned fl = f[i];
        if (!c->pattern && dyn_maybe_option(a, fl, dashdash))
            hit(c, W_DYNAMIC, "", 0, false);
        if (c->pattern && (fl & AGTI_SHW_GLOB) && a[0] == '\0') {
            ops[(*nops)++] = i; /* a wildcard: an operand that spells nothing */
            continue;
        }
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (dashdash || a[0] != '-' || a[1] == '\0') {
            ops[(*nops)++] = i;
            continue;
        }
        if (a[1] == '-') {
            const char *name = a + 2;
            size_t nl = strcspn(name, "=");
            bool eq = name[nl] == '=';
            bool takes = false;
            if (sandbox_long(c, sp, name, nl))
                c->sandbox = true;
            char exact[64];
            if (sp->lsafe != NULL && nl + 3 < sizeof exact) {
                snprintf(exact, sizeof exact, "|%.*s|", (int)nl, name);
                if (strstr(sp->lsafe, exact) != NULL)
                    continue;
            }
            for (size_t k = 0; sp->code && sp->code[k].why != NULL; k++) {
                const copt *o = &sp->code[k];
                if (!long_meets(o->l, name, nl))
                    continue;
                const char *v = eq ? name + nl + 1 : (o->arg == 1 && i + 1 < n ? w[i + 1] : NULL);
                unsigned vf = eq ? fl : (v ? f[i + 1] : 0);
                value_role(c, o, v ? v : "", vf, v != NULL);
                if (o->arg == 1)
                    takes = true;
            }
            if (long_meets(sp->larg, name, nl))
                takes = true;
            if (takes && !eq && i + 1 < n && takes_word(sp, w[i + 1]))
                i = take_value(c, f, i);
            continue;
        }
        for (size_t k = 1; a[k]; k++) {
            char ch = a[k];
            if (sandbox_short(c, sp, ch))
                c->sandbox = true;
            const copt *o = find_short(sp->code, ch);
            if (o != NULL) {
                if (o->arg == 0) {
                    value_role(c, o, "", 0, false);
                    continue;
                }
                bool att = a[k + 1] != '\0';
                const char *v = att ? a + k + 1 : (o->arg == 1 && i + 1 < n ? w[i + 1] : NULL);
                unsigned vf = att ? fl : (v ? f[i + 1] : 0);
                value_role(c, o, v ? v : "", vf, v != NULL);
                if (!att && o->arg == 1 && i + 1 < n && takes_word(sp, w[i + 1]))
                    i = take_value(c, f, i);
                break;
            }
            if (strchr(sp->sarg, ch) != NULL) {
                if (a[k + 1] == '\0' && i + 1 < n && takes_word(sp, w[i + 1]))
                    i = take_value(c, f, i);
                break;
            }
            if (strchr(sp->sopt, ch) != NULL)
                break;
        }
    }
}

static bool any_ci(const char *t, size_t n, const char *const *words);

/* The operands: what each kind does with them. */
static void read_operands(cctx *c, const cprog *sp, char *const *w, const unsigned *f,
                          const size_t *ops, size_t nops)
{
    switch (sp->kind) {
    case K_MAKE:
        for (size_t k = 0; k < nops; k++) {
            const char *a = w[ops[k]];
            unsigned fl = f[ops[k]];
            if (c->pattern && (fl & AGTI_SHW_GLOB) && strchr(a, '=') == NULL)
                continue;
            if (!c->pattern && (fl & WORD_DYN))
                hit(c, W_DYNAMIC, "", 0, false); /* may hold a '=' */
            else if (strchr(a, '=') != NULL)
                hit(c, W_MAKE_VAR, a, strcspn(a, ":+?!="), false);
        }
        break;
    case K_SSH:
        if (nops > 1 && !c->pattern)
            hit(c, W_SSH_CMD, "", 0, false); /* a wildcard rule never spells it */
        break;
    case K_SED:
    case K_AWK: {
        size_t k = 0;
        if (!c->prog_given && nops > 0) {
            size_t at = ops[k++];
            if (c->pattern && (f[at] & AGTI_SHW_GLOB)) {
                c->prog_dyn = true;
            } else {
                if (f[at] & WORD_DYN)
                    c->prog_dyn = true;
                if (c->prog.len)
                    agti_buf_putc(&c->prog, '\n');
                agti_buf_puts(&c->prog, w[at]);
            }
        }
        if (c->sandbox)
            break;
        const char *why = sp->kind == K_SED ? W_SED_PROG : W_AWK_PROG;
        if (c->prog_dyn && !c->pattern) {
            hit(c, why, "", 0, false);
        } else if (c->prog.len > 0 || (!c->prog_dyn && (c->prog_given || nops > 0))) {
            const char *p = agti_buf_cstr(&c->prog);
            if (c->prog.oom ||
                (sp->kind == K_SED ? sed_unsafe(p, c->prog.len) : awk_unsafe(p, c->prog.len)))
                hit(c, why, "", 0, false);
        }
        break;
    }
    case K_PSQL:
    case K_MYSQL: {
        static const char *const psql_bad[] = {"\\",      "copy",  "program",      "lo_",
                                               "pg_read", "pg_ls", "pg_stat_file", NULL};
        static const char *const mysql_bad[] = {"\\",       "system",    "source",    "outfile",
                                                "dumpfile", "load_file", "load data", "pager",
                                                "tee",      NULL};
        if (c->pattern)
            break;
        if (c->prog_dyn || (!c->prog_given && !c->sandbox))
            hit(c, W_SQL, "", 0, false); /* reads its commands from its input */
        else if (c->prog.len > 0 && any_ci(agti_buf_cstr(&c->prog), c->prog.len,
                                           sp->kind == K_PSQL ? psql_bad : mysql_bad))
            hit(c, W_SQL, "", 0, false);
        break;
    }
    case K_LESS:
    case K_VIM:
        if (strcmp(c->name, "ex") == 0)
            hit(c, W_VIM_CMD, "", 0, false); /* reads editor commands from its input */
        for (size_t k = 0; k < nops; k++) {
            const char *a = w[ops[k]];
            if (a[0] == '+')
                hit(c, sp->kind == K_LESS ? W_LESS_CMD : W_VIM_CMD, "", 0, false);
        }
        break;
    default:
        break;
    }
}

static void read_prog(cctx *c, const cprog *sp, char *const *w, const unsigned *f, size_t from,
                      size_t n);

/* git config ARGS (w[from..n)): a write of the configuration unless it
 * reads: --get*, -l/--list, the get/list subcommands, one NAME alone. */
static void git_config_cmd(cctx *c, char *const *w, const unsigned *f, size_t from, size_t n)
{
    static const char *const reads[] = {
        "--get",       "--get-all",       "--get-regexp", "--get-urlmatch",
        "--get-color", "--get-colorbool", "-l",           "--list",
        NULL};
    static const char *const with_value[] = {"-f", "--file", "--blob", "--type", "--default", NULL};
    static const char *const writes[] = {
        "--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section",
        "-e",      "--edit",      "set",   "unset",         "rename-section",   "remove-section",
        "edit",    NULL};
    size_t ops = 0;
    bool read = false, first = true, write = false;
    for (size_t i = from; i < n; i++) {
        const char *a = w[i];
        if (c->pattern && (f[i] & AGTI_SHW_GLOB) && a[0] == '\0') {
            ops++;
            continue;
        }
        if (!c->pattern && (f[i] & WORD_DYN)) {
            hit(c, W_DYNAMIC, "", 0, false);
            return;
        }
        bool opt = a[0] == '-' && a[1] != '\0';
        for (size_t k = 0; (opt || first) && writes[k]; k++)
            write = write || strcmp(a, writes[k]) == 0;
        for (size_t k = 0; opt && reads[k]; k++)
            read = read || strcmp(a, reads[k]) == 0;
        for (size_t k = 0; opt && with_value[k]; k++)
            if (strcmp(a, with_value[k]) == 0 && i + 1 < n)
                i++;
        if (!opt) {
            if (first && (strcmp(a, "get") == 0 || strcmp(a, "list") == 0))
                read = true;
            first = false;
            ops++;
        }
    }
    if (write || (!read && ops != 1))
        hit(c, W_GIT_CONFIG, "", 0, false);
}

static void read_git(cctx *c, char *const *w, const unsigned *f, size_t n)
{
    static const copt glob_code[] = {{'c', "|config-env|", 1, R_GITCFG, W_GIT_CFG},
                                     {0, "|exec-path|", 2, R_CODE_IF_ARG, W_GIT_EXEC},
                                     {'C', "|git-dir|", 1, R_CODE, W_GIT_DIR},
                                     {0, NULL, 0, 0, NULL}};
    static const cprog glob = {"|git|",   "",     "", "|work-tree|namespace|super-prefix|",
                               glob_code, K_PLAIN};
    size_t i = 1;
    while (i < n) {
        const char *a = w[i];
        if (!c->pattern && dyn_maybe_option(a, f[i], false))
            hit(c, W_DYNAMIC, "", 0, false);
        if (a[0] != '-' || strcmp(a, "--") == 0)
            break;
        size_t end = i + 1;
        bool takes = strcmp(a, "-c") == 0 || strcmp(a, "-C") == 0 ||
                     (a[1] == '-' && strchr(a, '=') == NULL &&
                      (long_meets("|config-env|git-dir|work-tree|namespace|super-prefix|", a + 2,
                                  strlen(a + 2))));
        if (takes && end < n)
            end++;
        size_t ops[2], nops;
        read_opts(c, &glob, w, f, i, end, ops, &nops);
        i = end;
    }
    if (i >= n || (c->pattern && (f[i] & AGTI_SHW_GLOB)))
        return;
    if (!c->pattern && (f[i] & WORD_DYN)) {
        hit(c, W_DYNAMIC, "", 0, false);
        return;
    }
    const char *sub = w[i];
    for (size_t k = 0; k < sizeof git_subs / sizeof git_subs[0]; k++)
        if (in_names(git_subs[k].names, sub)) {
            if (git_subs[k].kind == K_GITCONFIG) {
                git_config_cmd(c, w, f, i + 1, n);
                return;
            }
            if (git_subs[k].kind == K_SSHCMD) {
                /* git submodule foreach CMD, git bisect run CMD; git
                 * instaweb runs the web server of the configuration */
                if (strcmp(sub, "instaweb") == 0)
                    hit(c, W_GIT_RUN, "", 0, false);
                for (size_t j = i + 1; j < n; j++)
                    if (strcmp(w[j], "foreach") == 0 || strcmp(w[j], "run") == 0) {
                        hit(c, W_GIT_RUN, "", 0, false);
                        break;
                    }
                return;
            }
            read_prog(c, &git_subs[k], w, f, i + 1, n);
            return;
        }
}

static void read_find(cctx *c, char *const *w, const unsigned *f, size_t n)
{
    static const char *const prims[] = {"-fprint", "-fprint0", "-fprintf", "-fls", "-delete", NULL};
    for (size_t i = 1; i < n; i++) {
        if (!c->pattern && dyn_maybe_option(w[i], f[i], false))
            hit(c, W_DYNAMIC, "", 0, false);
        for (size_t k = 0; prims[k]; k++)
            if (strcmp(w[i], prims[k]) == 0)
                hit(c, W_FIND_WRITE, "", 0, false);
    }
}

/* Case-insensitive: whether t[0..n) holds word. */
static bool has_ci(const char *t, size_t n, const char *word)
{
    size_t m = strlen(word);
    for (size_t i = 0; i + m <= n; i++)
        if (strncasecmp(t + i, word, m) == 0)
            return true;
    return false;
}

static bool any_ci(const char *t, size_t n, const char *const *words)
{
    for (size_t k = 0; words[k]; k++)
        if (has_ci(t, n, words[k]))
            return true;
    return false;
}

/* gdb, emacs: getopt_long_only, -name is --name; any prefix of a code
 * option counts (the values are not followed: a value that looks like an
 * option is read as one too). */
static void read_longonly(cctx *c, const cprog *sp, char *const *w, const unsigned *f, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (!c->pattern && dyn_maybe_option(a, f[i], false))
            hit(c, W_DYNAMIC, "", 0, false);
        if (strcmp(a, "--") == 0)
            break;
        if (a[0] != '-' || a[1] == '\0')
            continue;
        const char *name = a + (a[1] == '-' ? 2 : 1);
        size_t nl = strcspn(name, "=");
        for (size_t k = 0; sp->code[k].why != NULL; k++)
            if (long_meets(sp->code[k].l, name, nl))
                hit(c, sp->code[k].why, "", 0, false);
    }
}

/* go: -toolexec, -exec (Go's flags: one or two dashes, exact names), and
 * go env -w/-u, which write go's settings. */
static void read_go(cctx *c, char *const *w, const unsigned *f, size_t n)
{
    bool env = n > 1 && strcmp(w[1], "env") == 0;
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (!c->pattern && dyn_maybe_option(a, f[i], false))
            hit(c, W_DYNAMIC, "", 0, false);
        if (a[0] != '-' || a[1] == '\0')
            continue;
        const char *name = a + (a[1] == '-' ? 2 : 1);
        size_t nl = strcspn(name, "=");
        if ((nl == 8 && memcmp(name, "toolexec", 8) == 0) ||
            (nl == 4 && memcmp(name, "exec", 4) == 0) ||
            (env && nl == 1 && (name[0] == 'w' || name[0] == 'u')))
            hit(c, W_GO, "", 0, false);
    }
}

/* gcc, clang and friends: options that run or load a program or read more
 * options from a file. */
static void read_cc(cctx *c, char *const *w, const unsigned *f, size_t n)
{
    static const char *const exact[] = {"-wrapper", "-Xclang", "-Xlinker", "--ld-path", NULL};
    static const char *const prefix[] = {"-fplugin", "-fpass-plugin", "-B", "-specs",
                                         "--specs",  "--ld-path=",    NULL};
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (!c->pattern && dyn_maybe_option(a, f[i], false))
            hit(c, W_DYNAMIC, "", 0, false);
        bool code = a[0] == '@' || (strncmp(a, "-fuse-ld=", 9) == 0 && strchr(a, '/') != NULL) ||
                    (strncmp(a, "-Wl,", 4) == 0 && strstr(a, "plugin") != NULL);
        for (size_t k = 0; !code && exact[k]; k++)
            code = strcmp(a, exact[k]) == 0;
        for (size_t k = 0; !code && prefix[k]; k++)
            code = strncmp(a, prefix[k], strlen(prefix[k])) == 0;
        if (code)
            hit(c, W_CC, "", 0, false);
    }
}

static const char *const sqlite_words[] = {"attach",   "vacuum", "load_extension", "writefile",
                                           "readfile", "edit",   "fts3_tokenizer", NULL};

/* Whether an SQL text given to sqlite3 can run a command or open a file. */
static bool sqlite_unsafe(const char *t, size_t n, unsigned f, bool pattern)
{
    if (!pattern && (f & WORD_DYN))
        return true;
    size_t i = 0;
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n'))
        i++;
    return (i < n && t[i] == '.') || strchr(t, '\n') != NULL || any_ci(t, n, sqlite_words);
}

/* sqlite3 [OPTIONS] DB [SQL]...: -safe turns the shell's commands off. */
static void read_sqlite(cctx *c, char *const *w, const unsigned *f, size_t n)
{
    static const char *const with_value[] = {
        "separator", "nullvalue", "newline", "A",   "lookaside", "maxsize", "mmap",
        "pagecache", "vfs",       "heap",    "cmd", "init",      NULL};
    bool safe = false, sql = false, dashdash = false;
    size_t db = 0;
    for (size_t i = 1; i < n; i++)
        if (strcmp(w[i], "-safe") == 0 || strcmp(w[i], "--safe") == 0)
            safe = true;
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (!c->pattern && dyn_maybe_option(a, f[i], dashdash))
            hit(c, W_DYNAMIC, "", 0, false);
        if (c->pattern && (f[i] & AGTI_SHW_GLOB) && a[0] == '\0') {
            if (db++ > 0)
                sql = true;
            continue;
        }
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && a[0] == '-' && a[1] != '\0') {
            const char *name = a + (a[1] == '-' ? 2 : 1);
            if (strcmp(name, "init") == 0 && !safe)
                hit(c, W_SQL, "", 0, false);
            if (strcmp(name, "cmd") == 0 && i + 1 < n && !safe &&
                sqlite_unsafe(w[i + 1], strlen(w[i + 1]), f[i + 1], c->pattern))
                hit(c, W_SQL, "", 0, false);
            for (size_t k = 0; with_value[k]; k++)
                if (strcmp(name, with_value[k]) == 0 && i + 1 < n) {
                    i++;
                    break;
                }
            continue;
        }
        if (db++ == 0)
            continue; /* the database file */
        sql = true;
        if (!safe && sqlite_unsafe(a, strlen(a), f[i], c->pattern))
            hit(c, W_SQL, "", 0, false);
    }
    if (!sql && !safe && !c->pattern)
        hit(c, W_SQL, "", 0, false); /* reads its commands from its input */
}

/* socat: each address must be one that only talks to the network or the
 * standard streams. */
static void read_socat(cctx *c, char *const *w, const unsigned *f, size_t n)
{
    static const char *const safe[] = {"stdio",
                                       "stdin",
                                       "stdout",
                                       "stderr",
                                       "tcp",
                                       "tcp4",
                                       "tcp6",
                                       "tcp-connect",
                                       "tcp4-connect",
                                       "tcp6-connect",
                                       "tcp-listen",
                                       "tcp-l",
                                       "tcp4-listen",
                                       "tcp6-listen",
                                       "udp",
                                       "udp4",
                                       "udp6",
                                       "udp-connect",
                                       "udp-listen",
                                       "udp-l",
                                       "udp-sendto",
                                       "udp-recvfrom",
                                       "udp-recv",
                                       "sctp",
                                       "sctp-connect",
                                       "sctp-listen",
                                       "openssl",
                                       "ssl",
                                       "openssl-connect",
                                       "openssl-listen",
                                       "ssl-l",
                                       "socks4",
                                       "socks4a",
                                       "socks5",
                                       "proxy",
                                       "proxy-connect",
                                       NULL};
    bool dashdash = false;
    for (size_t i = 1; i < n; i++) {
        const char *a = w[i];
        if (!c->pattern && dyn_maybe_option(a, f[i], dashdash))
            hit(c, W_DYNAMIC, "", 0, false);
        if (c->pattern && (f[i] & AGTI_SHW_GLOB) && a[0] == '\0')
            continue;
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "-L") == 0 || strcmp(a, "-W") == 0 || strncmp(a, "-lf", 3) == 0)
                hit(c, W_SOCAT, "", 0, false);
            if ((strcmp(a, "-b") == 0 || strcmp(a, "-T") == 0) && i + 1 < n)
                i++;
            continue;
        }
        if (strcmp(a, "-") == 0)
            continue;
        size_t k = strcspn(a, ":,");
        bool ok = false;
        for (size_t s2 = 0; safe[s2] && !ok; s2++)
            ok = strlen(safe[s2]) == k && strncasecmp(a, safe[s2], k) == 0;
        const char *opts = strchr(a, ',');
        if (ok && opts != NULL) {
            static const char *const bad[] = {"exec", "system", "shell", NULL};
            ok = !any_ci(opts, strlen(opts), bad);
        }
        if (!ok)
            hit(c, W_SOCAT, "", 0, false);
    }
}

static void read_prog(cctx *c, const cprog *sp, char *const *w, const unsigned *f, size_t from,
                      size_t n)
{
    size_t stack_ops[64];
    size_t *ops = stack_ops;
    if (n - from > 64) {
        ops = malloc((n - from) * sizeof *ops);
        if (ops == NULL) {
            c->oom = true;
            return;
        }
    }
    size_t nops = 0;
    size_t start = from;
    if (sp->kind == K_TAR && start < n && !c->pattern && (f[start] & WORD_DYN))
        hit(c, W_DYNAMIC, "", 0, false); /* may be old-style options (tar "x$F") */
    if (sp->kind == K_TAR && start < n && w[start][0] != '-' && !(f[start] & WORD_DYN) &&
        !(c->pattern && (f[start] & AGTI_SHW_GLOB))) {
        /* tar's old style: "xzf a.tar" is -x -z -f a.tar; each letter that
         * takes a value takes the next word */
        size_t next = start + 1;
        for (const char *p = w[start]; *p; p++) {
            if (*p == 'I' || *p == 'F')
                hit(c, W_TAR_CMD, "", 0, false);
            if (strchr("bCfgHKLNTVXIF", *p) != NULL && next < n)
                next++;
        }
        start = next;
    }
    if (sp->kind == K_ZIP)
        for (size_t i = from; i < n; i++)
            if (w[i][0] == '-' && w[i][1] != '-' && strstr(w[i], "TT") != NULL)
                hit(c, W_ZIP_TT, "", 0, false);
    read_opts(c, sp, w, f, start, n, ops, &nops);
    read_operands(c, sp, w, f, ops, nops);
    if (ops != stack_ops)
        free(ops);
}

static const cprog *find_cc(void)
{
    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++)
        if (progs[k].kind == K_CC)
            return &progs[k];
    return NULL;
}

size_t agti_sh_code_options(char *const *argv, const unsigned *flags, size_t argc, bool pattern,
                            agti_sh_codeopt *out, size_t max, bool *oom)
{
    if (oom)
        *oom = false;
    if (argc == 0 || (flags[0] & WORD_DYN))
        return 0;
    const char *name = argv[0];
    const cprog *sp = NULL;
    for (size_t k = 0; k < sizeof progs / sizeof progs[0] && sp == NULL; k++)
        if (in_names(progs[k].names, name))
            sp = &progs[k];
    static const char *const cc_versioned[] = {"gcc-", "g++-", "clang-", "clang++-", NULL};
    for (size_t k = 0; sp == NULL && cc_versioned[k]; k++) {
        size_t m = strlen(cc_versioned[k]);
        if (strncmp(name, cc_versioned[k], m) == 0 && name[m] >= '0' && name[m] <= '9')
            sp = find_cc(); /* gcc-12, clang-17 */
    }
    if (sp == NULL)
        return 0;
    cctx c = {
        .out = out, .max = out ? max : 0, .pattern = pattern, .prog = AGTI_BUF_INIT, .name = name};
    if (sp->kind == K_GIT)
        read_git(&c, argv, flags, argc);
    else if (sp->kind == K_LONGONLY)
        read_longonly(&c, sp, argv, flags, argc);
    else if (sp->kind == K_GO)
        read_go(&c, argv, flags, argc);
    else if (sp->kind == K_CC)
        read_cc(&c, argv, flags, argc);
    else if (sp->kind == K_SQLITE)
        read_sqlite(&c, argv, flags, argc);
    else if (sp->kind == K_SOCAT)
        read_socat(&c, argv, flags, argc);
    else if (sp->kind == K_ALWAYS)
        hit(&c, W_SCRIPT, "", 0, false);
    else if (sp->kind == K_FIND)
        read_find(&c, argv, flags, argc);
    else
        read_prog(&c, sp, argv, flags, 1, argc);
    agti_buf_free(&c.prog);
    if (c.oom || c.prog.oom) {
        if (oom)
            *oom = true;
        if (c.n == 0)
            c.n = 1; /* out of memory: fail closed */
    }
    return c.n;
}
