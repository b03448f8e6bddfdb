/* One sensitive-file policy for every tool that shows file content: each
 * name of the table goes through Read, Grep, Glob (chat set) and file_read,
 * file_read_diff, code_search (review set, the file staged in a git
 * repository), next to a plain file that every tool must show. The
 * documented exceptions go through the same tools and are shown. Then the
 * host's patterns: added, removed, exceptions, errors. Which names are
 * sensitive is worked out from docs/sensitive-files.md, not from the code. */
#include <stdbool.h>

#include "wsfix.h"

static agt_registry *rreg;

static const char *const sensitive[] = {
    ".env", ".env.prod", ".env.local", ".ENV.Production", ".env.bak", ".env~", ".env.swp", "#.env#",
    ".#.env", ".envrc",
    /* keys and key stores */
    "id_rsa", "id_ed25519_work", ".ssh/id_ecdsa", "etc/ssh/ssh_host_rsa_key",
    "ssh_host_ed25519_key", "server.pem", "tls.key", "deploy.ppk", "cert.p12", "bundle.pfx",
    "keystore.jks", "release.keystore", "vault.kdbx", "http.keytab", "secring.gpg",
    "home/.gnupg/private-keys-v1.d/ABC.key",
    /* cloud and CLI credentials */
    ".aws/credentials", ".aws/credentials.bak", ".gcp/credentials.json",
    "application_default_credentials.json", ".config/gcloud/legacy_credentials/me/adc.json",
    ".config/gcloud/access_tokens.db", ".azure/msal_token_cache.json",
    ".azure/service_principal_entries.json", ".docker/config.json", ".dockercfg", ".kube/config",
    ".config/gh/hosts.yml", ".config/hub", ".vault-token", ".s3cfg", ".boto", ".npmrc",
    ".npmrc.orig", ".pypirc", ".gem/credentials", ".cargo/credentials.toml",
    /* Terraform */
    ".terraformrc", "terraform.rc", ".terraform.d/credentials.tfrc.json", "prod.tfstate",
    "terraform.tfstate.backup", "prod.tfvars", "vars.tfvars.json",
    /* password files */
    ".git-credentials", ".netrc", "_netrc", ".pgpass", ".my.cnf", ".htpasswd", "conf/htpasswd"};

static const char *const shown[] = {".env.example",
                                    ".env.sample",
                                    ".env.template",
                                    "id_rsa.pub",
                                    "ssh_host_rsa_key.pub",
                                    ".ssh/known_hosts",
                                    ".ssh/authorized_keys",
                                    ".aws/config",
                                    ".azure/config",
                                    "credentials.json",
                                    "src/environment.c",
                                    "main.tf",
                                    "env",
                                    "notes.key.txt"};

#define NS (sizeof sensitive / sizeof *sensitive)
#define NX (sizeof shown / sizeof *shown)

/* Each case lives in its own folder cNN/ with a plain ok.txt beside it;
 * the file holds MARK-NN-s, ok.txt MARK-NN-ok. */
static void plant(const char *kind, size_t i, const char *name, char *rel, size_t cap)
{
    char text[128], ok[600];
    snprintf(rel, cap, "%s%02zu/%s", kind, i, name);
    snprintf(text, sizeof text, "TOKEN=MARK-%s%02zu-s\n", kind, i);
    put_file(rel, text);
    snprintf(ok, sizeof ok, "%s%02zu/ok.txt", kind, i);
    snprintf(text, sizeof text, "MARK-%s%02zu-ok\n", kind, i);
    put_file(ok, text);
}

/* Runs every tool on case i: hidden says whether the file must stay unseen. */
static void through_tools(agt_session *chat, agt_session *rev, const char *kind, size_t i,
                          const char *rel, bool hidden)
{
    char args[2048], mark_s[64], mark_ok[64], dir[16];
    int st;
    snprintf(dir, sizeof dir, "%s%02zu", kind, i);
    snprintf(mark_s, sizeof mark_s, "MARK-%s-s", dir);
    snprintf(mark_ok, sizeof mark_ok, "MARK-%s-ok", dir);

    snprintf(args, sizeof args, "{\"path\":\"%s\"}", rel);
    const char *t = ws_run(chat, "Read", args, &st);
    if (hidden) {
        T_EQ_INT(st, AGT_EDENIED, "Read %s: refused", rel);
        T_CHECK(strstr(t, "is a sensitive file") != NULL && strstr(t, mark_s) == NULL,
                "Read %s: says why, shows nothing: %s", rel, flat(t));
    } else {
        T_CHECK(st == AGT_OK && strstr(t, mark_s) != NULL, "Read %s: shown: %s", rel, flat(t));
    }

    snprintf(args, sizeof args,
             "{\"pattern\":\"MARK-%s-\",\"path\":\"%s\",\"output_mode\":\"content\"}", dir, dir);
    t = ws_run(chat, "Grep", args, &st);
    T_CHECK(strstr(t, mark_ok) != NULL && (strstr(t, mark_s) == NULL) == hidden,
            "Grep in %s: %s: %s", dir, hidden ? "left out" : "shown", flat(t));

    snprintf(args, sizeof args, "{\"pattern\":\"*\",\"path\":\"%s\"}", dir);
    t = ws_run(chat, "Glob", args, &st);
    T_CHECK(strstr(t, "ok.txt") != NULL && (strstr(t, rel) == NULL) == hidden,
            "Glob in %s: %s %s: %s", dir, rel, hidden ? "left out" : "listed", flat(t));

    snprintf(args, sizeof args, "{\"file_path\":\"%s\"}", rel);
    t = ws_run(rev, "file_read", args, &st);
    if (hidden)
        T_CHECK(st == AGT_EDENIED && strstr(t, mark_s) == NULL, "file_read %s: refused: %s", rel,
                flat(t));
    else
        T_CHECK(st == AGT_OK && strstr(t, mark_s) != NULL, "file_read %s: shown: %s", rel, flat(t));

    snprintf(args, sizeof args, "{\"path_array\":[\"%s\",\"%s/ok.txt\"]}", rel, dir);
    t = ws_run(rev, "file_read_diff", args, &st);
    T_CHECK(strstr(t, mark_ok) != NULL && (strstr(t, mark_s) == NULL) == hidden,
            "file_read_diff %s: %s: %s", rel, hidden ? "diff not shown" : "diff shown", flat(t));
    if (hidden)
        T_CHECK(strstr(t, "[diff not shown: ") != NULL, "file_read_diff %s: says so", rel);

    snprintf(args, sizeof args, "{\"search_text\":\"MARK-%s-\"}", dir);
    t = ws_run(rev, "code_search", args, &st);
    T_CHECK(strstr(t, mark_ok) != NULL && (strstr(t, mark_s) == NULL) == hidden,
            "code_search %s: %s: %s", dir, hidden ? "left out" : "shown", flat(t));
}

static agt_session *review_session(void)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, rreg, ws) != AGT_OK ||
        agt_session_open_review(s, NULL, AGT_CHANGES_WORKSPACE, NULL, NULL) != AGT_OK) {
        printf("Bail out! review session: %s\n", agt_error_message());
        exit(1);
    }
    return s;
}

static const char *key_text(void)
{
    /* an OpenSSH key as ssh-keygen writes it (not a real one); the armour
     * is split here so this source file is not itself a key */
    return "-----BEGIN "
           "OPENSSH PRIVATE "
           "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n"
           "-----END OPENSSH PRIVATE KEY-----\n";
}

int main(void)
{
    make_ws("sensitive");
    if (agt_registry_new(&rreg) != AGT_OK || agt_registry_load_builtin(rreg, "review") != AGT_OK) {
        printf("Bail out! review registry: %s\n", agt_error_message());
        return 1;
    }
    char rels[NS + NX + 8][256];
    for (size_t i = 0; i < NS; i++)
        plant("s", i, sensitive[i], rels[i], sizeof rels[i]);
    for (size_t i = 0; i < NX; i++)
        plant("x", i, shown[i], rels[NS + i], sizeof rels[NS + i]);
    /* content: a key under a name no pattern knows; a key fixture the host
     * excepts below */
    put_file("k00/deploy_identity", key_text());
    put_file("k00/ok.txt", "MARK-k00-ok\n");
    put_file("k01/fixtures/test.key", key_text());
    put_file("k01/fixtures/ok.txt", "MARK-k01-ok\n");
    put_file("h00/app.secret", "MARK-h00-s\n");
    put_file("h00/ok.txt", "MARK-h00-ok\n");
    if (ws_sh("git init -q . && git -c user.name=T -c user.email=t@example.com commit -q "
              "--allow-empty -m base && git add -A") != 0) {
        printf("Bail out! git\n");
        return 1;
    }
    agt_session *chat = new_session(), *rev = review_session();
    for (size_t i = 0; i < NS; i++)
        through_tools(chat, rev, "s", i, rels[i], true);
    for (size_t i = 0; i < NX; i++)
        through_tools(chat, rev, "x", i, rels[NS + i], false);

    /* a private key found by its content */
    int st;
    const char *t = ws_run(chat, "Read", "{\"path\":\"k00/deploy_identity\"}", &st);
    T_EQ_INT(st, AGT_EDENIED, "Read: key by content refused");
    T_CHECK(strstr(t, "private key") != NULL && strstr(t, "b3Bl") == NULL,
            "Read: key by content: %s", flat(t));
    t = ws_run(chat, "Grep",
               "{\"pattern\":\"b3Bl|MARK-k00\",\"path\":\"k00\",\"output_mode\":\"content\"}", &st);
    T_CHECK(strstr(t, "MARK-k00-ok") != NULL && strstr(t, "b3Bl") == NULL,
            "Grep: key by content left out: %s", flat(t));
    t = ws_run(rev, "file_read", "{\"file_path\":\"k00/deploy_identity\"}", &st);
    T_CHECK(st == AGT_EDENIED && strstr(t, "b3Bl") == NULL, "file_read: key by content: %s",
            flat(t));
    t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"k00/deploy_identity\"]}", &st);
    T_CHECK(strstr(t, "[diff not shown: ") != NULL && strstr(t, "b3Bl") == NULL,
            "file_read_diff: key by content: %s", flat(t));
    t = ws_run(rev, "code_search", "{\"search_text\":\"b3Bl\"}", &st);
    T_CHECK(strstr(t, "b3Bl") == NULL, "code_search: key by content: %s", flat(t));

    /* the host's patterns */
    agt_session *hs = new_session();
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, "*.secret"), AGT_OK, "add *.secret");
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, "*.SECRET"), AGT_OK, "add again: no-op");
    ws_run(hs, "Read", "{\"path\":\"h00/app.secret\"}", &st);
    T_EQ_INT(st, AGT_EDENIED, "added pattern: Read refused");
    t = ws_run(hs, "Glob", "{\"pattern\":\"*\",\"path\":\"h00\"}", &st);
    T_CHECK(strstr(t, "app.secret") == NULL && strstr(t, "ok.txt") != NULL,
            "added pattern: Glob leaves it out: %s", flat(t));
    ws_run(chat, "Read", "{\"path\":\"h00/app.secret\"}", &st);
    T_EQ_INT(st, AGT_OK, "another session is not affected");
    T_EQ_INT(agt_session_remove_sensitive_pattern(hs, "*.pem"), AGT_OK, "remove built-in *.pem");
    t = ws_run(hs, "Read", "{\"path\":\"s15/server.pem\"}", &st);
    T_CHECK(st == AGT_OK && strstr(t, "MARK-s15-s") != NULL, "removed *.pem: readable: %s",
            flat(t));
    T_EQ_INT(agt_session_remove_sensitive_pattern(hs, "!.env.example"), AGT_OK,
             "remove the .env.example exception");
    ws_run(hs, "Read", "{\"path\":\"x00/.env.example\"}", &st);
    T_EQ_INT(st, AGT_EDENIED, "no exception: .env.example refused");
    ws_run(hs, "Read", "{\"path\":\"k01/fixtures/test.key\"}", &st);
    T_EQ_INT(st, AGT_EDENIED, "key fixture refused before the exception");
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, "!fixtures/*.key"), AGT_OK, "add an exception");
    t = ws_run(hs, "Read", "{\"path\":\"k01/fixtures/test.key\"}", &st);
    T_CHECK(st == AGT_OK && strstr(t, "b3Bl") != NULL,
            "host exception: name and content admitted: %s", flat(t));
    T_EQ_INT(agt_session_remove_sensitive_pattern(hs, "*.nothing"), AGT_ENOTFOUND,
             "remove unknown: AGT_ENOTFOUND");
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, ""), AGT_EINVAL, "empty pattern");
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, "/abs"), AGT_EINVAL, "leading slash");
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, "dir/"), AGT_EINVAL, "trailing slash");
    T_EQ_INT(agt_session_add_sensitive_pattern(hs, "[a"), AGT_EINVAL, "malformed bracket");
    T_EQ_INT(agt_session_add_sensitive_pattern(NULL, "x"), AGT_EINVAL, "NULL session");
    char *js = NULL;
    T_EQ_INT(agt_session_sensitive_patterns(hs, &js), AGT_OK, "list patterns");
    T_CHECK(js != NULL && strstr(js, "\"*.secret\"") != NULL && strstr(js, "\"*.pem\"") == NULL &&
                strstr(js, "\"!fixtures/*.key\"") != NULL &&
                strstr(js, "\"!.env.example\"") == NULL,
            "list: added in, removed out");
    agt_free(js);
    js = NULL;
    T_EQ_INT(agt_session_sensitive_patterns(NULL, &js), AGT_OK, "built-in list");
    T_CHECK(js != NULL && strncmp(js, "[\".env\",\".env.*\",", 17) == 0,
            "built-in list starts: %.40s", js ? js : "");
    agt_free(js);

    /* the host's own check */
    const char *why = NULL;
    T_EQ_INT(agt_session_check_sensitive(NULL, "a/.env.prod", NULL, 0, &why), 1, "check .env.prod");
    T_EQ_STR(why, "environment file (.env)", "check: reason");
    T_EQ_INT(agt_session_check_sensitive(NULL, "README.md", NULL, 0, &why), 0, "check README.md");
    T_CHECK(why == NULL, "check: no reason when not sensitive");
    T_EQ_INT(agt_session_check_sensitive(NULL, "notes", key_text(), strlen(key_text()), &why), 1,
             "check: key in content");
    T_EQ_INT(
        agt_session_check_sensitive(hs, "fixtures/test.key", key_text(), strlen(key_text()), NULL),
        0, "check: host exception admits content");
    T_EQ_INT(agt_session_check_sensitive(NULL, NULL, NULL, 0, NULL), AGT_EINVAL,
             "check: NULL path");
    T_EQ_INT(agt_session_check_sensitive(NULL, "x", NULL, 3, NULL), AGT_EINVAL,
             "check: NULL content with len");
    const char *mention = "Keys start with -----BEGIN RSA PRIVATE KEY----- and a base64 body.";
    T_EQ_INT(agt_session_check_sensitive(NULL, "doc.md", mention, strlen(mention), NULL), 0,
             "check: a key armour mentioned inside a sentence is not a key");
    const char *json = "{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQ\\n\"}";
    T_EQ_INT(agt_session_check_sensitive(NULL, "sa.json", json, strlen(json), NULL), 1,
             "check: a service-account key inside a JSON string");

    agt_session_free(hs);
    agt_session_free(chat);
    agt_session_free(rev);
    agt_registry_free(rreg);
    rm_ws();
    return t_done();
}
