/*
 * Sub-agent profiles (Agent's and AgentSwarm's subagent_type) and the
 * agent loop's rule that AgentSwarm is the only call of its response,
 * with a host model that answers from a script and keeps every request.
 * Expected texts: include/agenttools/agent.h and docs/agent.md.
 */
#include "agent_fixture.h"

#define SUB_PROMPT_TEXT                                                                            \
    "You are a sub-agent: another agent gave you the task below. Work on it with your tools, "     \
    "then end with a final answer that reports what you found or did; that answer is all the "     \
    "other agent sees."

typedef struct script {
    const char **replies; /* NULL-terminated */
    size_t next;
    json_t *requests;
} script;

static int model_fn(agt_model_reply *reply, const char *request_json, void *payload)
{
    script *sc = payload;
    json_array_append_new(sc->requests, json_loads(request_json, 0, NULL));
    const char *r = sc->replies[sc->next] ? sc->replies[sc->next++] : "{\"content\":\"(end)\"}";
    return agt_model_reply_set(reply, r, strlen(r));
}

typedef struct fixture {
    char root[64];
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
    script sc;
} fixture;

static void setup(fixture *fx, const char **replies)
{
    memset(fx, 0, sizeof *fx);
    fx->sc.replies = replies;
    fx->sc.requests = json_array();
    if (fx_workspace_make(fx->root, sizeof fx->root, "/tmp/agt-profiles-XXXXXX") != 0 ||
        agt_registry_new(&fx->reg) != AGT_OK ||
        agt_registry_load_builtin(fx->reg, "chat") != AGT_OK ||
        agt_session_new(&fx->s, fx->reg, fx->root) != AGT_OK ||
        agt_model_new_host(&fx->m, model_fn, &fx->sc) != AGT_OK ||
        agt_agent_new(&fx->a, fx->s, fx->m) != AGT_OK || agt_agent_enable_subagents(fx->a) ||
        agt_agent_add_user_message(fx->a, "go") != AGT_OK) {
        printf("Bail out! setup: %s\n", agt_error_message());
        exit(1);
    }
    agt_session_set_mode(fx->s, AGT_MODE_YOLO);
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    json_decref(fx->sc.requests);
    fx_workspace_remove(fx->root);
}

/* The tool names offered in request i, comma-separated (static buffer). */
static const char *offered(const fixture *fx, size_t i)
{
    static char buf[1024];
    buf[0] = '\0';
    json_t *tools = json_object_get(json_array_get(fx->sc.requests, i), "tools");
    size_t k;
    json_t *t;
    json_array_foreach(tools, k, t)
    {
        const char *n = json_string_value(json_object_get(json_object_get(t, "function"), "name"));
        if (!n)
            n = json_string_value(json_object_get(t, "name"));
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", k ? "," : "", n ? n : "?");
    }
    return buf;
}

/* Field key of message j of request i. */
static const char *req_msg(const fixture *fx, size_t i, size_t j, const char *key)
{
    json_t *msgs = json_object_get(json_array_get(fx->sc.requests, i), "messages");
    return fx_jstr(json_array_get(msgs, j), key);
}

static const char *msg(json_t *msgs, size_t i, const char *key)
{
    return fx_jstr(json_array_get(msgs, i), key);
}

#define CALL(id, name, args)                                                                       \
    "{\"tool_calls\":[{\"id\":\"" id "\",\"name\":\"" name "\",\"arguments\":" args "}]}"

static void test_explore(void)
{
    fixture fx;
    const char *replies[] = {
        CALL("p1", "Agent",
             "{\"prompt\":\"look around\",\"description\":\"explore it\",\"subagent_type\":"
             "\"explore\"}"),
        CALL("s1", "Write", "{\"path\":\"x.txt\",\"content\":\"y\"}"), "{\"content\":\"found it\"}",
        "{\"content\":\"parent done\"}", NULL};
    setup(&fx, replies);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "explore: run ok");
    T_EQ_INT((int)json_array_size(fx.sc.requests), 4, "explore: 4 model requests");
    T_EQ_STR(offered(&fx, 1), "Read,Grep,Glob,ReadMediaFile,FetchURL",
             "explore: only the read-only tools are offered (WebSearch has no provider)");
    T_EQ_STR(req_msg(&fx, 1, 0, "content"),
             SUB_PROMPT_TEXT "\n\nYour profile is explore: you can read and search (Read, Grep, "
                             "Glob, ReadMediaFile, WebSearch, FetchURL) but not change files or "
                             "run commands. Report what you found with file paths and line "
                             "numbers.",
             "explore: the system prompt has the profile's addition");
    T_EQ_STR(req_msg(&fx, 2, 3, "content"),
             "Write is not available to this sub-agent: its profile 'explore' allows only Read, "
             "Grep, Glob, ReadMediaFile, WebSearch, FetchURL. Do the task with those, or say in "
             "your report what is left to do.",
             "explore: a Write call is refused by the loop");
    char p[128];
    snprintf(p, sizeof p, "%s/x.txt", fx.root);
    T_CHECK(access(p, F_OK) != 0, "explore: nothing written");
    T_CHECK(strstr(offered(&fx, 0), "Write") != NULL && strstr(offered(&fx, 0), "Agent") != NULL,
            "the root agent still gets every tool");
    teardown(&fx);

    /* coder (the default) gets every tool, and no addition */
    const char *replies2[] = {
        CALL("p1", "Agent", "{\"prompt\":\"code\",\"description\":\"coder\"}"),
        "{\"content\":\"coded\"}", "{\"content\":\"parent done\"}", NULL};
    setup(&fx, replies2);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "coder: run ok");
    T_EQ_STR(offered(&fx, 1), offered(&fx, 0), "coder: the same tools as the root");
    T_EQ_STR(req_msg(&fx, 1, 0, "content"), SUB_PROMPT_TEXT, "coder: the plain sub-agent prompt");
    teardown(&fx);

    /* plan: the explore tools and the todo list */
    const char *replies3[] = {
        CALL("p1", "Agent",
             "{\"prompt\":\"plan\",\"description\":\"planner\",\"subagent_type\":\"plan\"}"),
        "{\"content\":\"the plan\"}", "{\"content\":\"parent done\"}", NULL};
    setup(&fx, replies3);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "plan: run ok");
    T_EQ_STR(offered(&fx, 1), "Read,Grep,Glob,ReadMediaFile,FetchURL,TodoList",
             "plan: read-only tools and TodoList");
    teardown(&fx);
}

static void test_host_profiles_and_refusals(void)
{
    fixture fx;
    const char *replies[] = {
        CALL("p1", "Agent",
             "{\"prompt\":\"docs\",\"description\":\"doc writer\",\"subagent_type\":\"docs\"}"),
        "{\"content\":\"written\"}", "{\"content\":\"parent done\"}", NULL};
    setup(&fx, replies);
    T_EQ_INT(agt_agent_add_subagent_profile(fx.a, "docs", "writes the documentation",
                                            "[\"Read\",\"Write\"]", "Only write Markdown."),
             AGT_OK, "host profile added");
    T_EQ_INT(agt_agent_add_subagent_profile(fx.a, "Bad Name", "x", NULL, NULL), AGT_EINVAL,
             "bad profile name: EINVAL");
    T_EQ_STR(agt_error_message(),
             "agt_agent_add_subagent_profile: 'Bad Name': name may only hold a-z, 0-9, '_' and "
             "'-'",
             "bad profile name: message");
    T_EQ_INT(agt_agent_add_subagent_profile(fx.a, "x", "x", "{\"Read\":1}", NULL), AGT_EINVAL,
             "tools_json not an array: EINVAL");
    T_EQ_INT(agt_agent_add_subagent_profile(fx.a, "x", "x", "[\"Read\",\"\"]", NULL), AGT_EINVAL,
             "an empty tool name: EINVAL");
    T_EQ_INT(agt_agent_add_subagent_profile(fx.a, "x", "", NULL, NULL), AGT_EINVAL,
             "empty description: EINVAL");
    T_EQ_INT(agt_agent_add_subagent_profile(NULL, "x", "x", NULL, NULL), AGT_EINVAL,
             "NULL agent: EINVAL");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "host profile: run ok");
    T_EQ_STR(offered(&fx, 1), "Read,Write", "host profile: its tools");
    T_EQ_STR(req_msg(&fx, 1, 0, "content"), SUB_PROMPT_TEXT "\n\nOnly write Markdown.",
             "host profile: its prompt addition");

    int err = 0;
    char *t = fx_call_text(
        fx.s, "Agent", "{\"prompt\":\"p\",\"description\":\"d\",\"subagent_type\":\"nope\"}", &err);
    T_EQ_STR(t,
             "Agent: unknown subagent_type 'nope'. The available ones: coder (writes and changes "
             "code, runs commands: every tool), explore (reads and searches the workspace and "
             "the web, changes nothing), plan (reads and searches, keeps a todo list, and writes "
             "an implementation plan; changes nothing), docs (writes the documentation). Omit "
             "subagent_type for coder.",
             "unknown subagent_type lists the profiles");
    T_EQ_INT(err, 1, "unknown subagent_type: an error result");
    free(t);
    t = fx_call_text(fx.s, "Agent",
                     "{\"prompt\":\"p\",\"description\":\"d\",\"resume\":\"agent-1\","
                     "\"subagent_type\":\"coder\"}",
                     &err);
    T_EQ_STR(t,
             "Agent takes resume or subagent_type, not both: resume continues agent-1 with the "
             "profile it has; subagent_type starts a new sub-agent. Drop one of them.",
             "resume with subagent_type is refused");
    T_EQ_INT(err, 1, "resume with subagent_type: an error result");
    free(t);
    t = fx_call_text(fx.s, "AgentSwarm",
                     "{\"prompt_template\":\"do {{item}}\",\"items\":[\"a\",\"b\"],"
                     "\"subagent_type\":\"nope\"}",
                     &err);
    T_CHECK(strncmp(t, "AgentSwarm: unknown subagent_type 'nope'. The available ones: coder (",
                    69) == 0,
            "AgentSwarm: unknown subagent_type refused: %s", t);
    T_EQ_INT(err, 1, "AgentSwarm unknown subagent_type: an error result");
    free(t);
    char *pj = NULL;
    agt_session_pending(fx.s, &pj);
    T_EQ_STR(pj, "[]", "refusals started nothing");
    agt_free(pj);
    T_EQ_INT((int)json_array_size(fx.sc.requests), 3, "refusals made no model request");
    teardown(&fx);
}

/* A saved and restored explorer is still an explorer. */
static void test_save_restore(void)
{
    fixture fx;
    const char *replies[] = {
        CALL("p1", "Agent",
             "{\"prompt\":\"look\",\"description\":\"explore it\",\"subagent_type\":\"explore\"}"),
        "{\"content\":\"found\"}",
        "{\"content\":\"parent done\"}",
        CALL("p2", "Agent",
             "{\"prompt\":\"more\",\"description\":\"again\",\"resume\":\"agent-1\"}"),
        CALL("s2", "Bash", "{\"command\":\"touch y.txt\"}"),
        "{\"content\":\"could not\"}",
        "{\"content\":\"ok\"}",
        NULL};
    setup(&fx, replies);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "save/restore: first run");
    char *state = NULL;
    T_EQ_INT(agt_agent_save(fx.a, &state), AGT_OK, "saved");
    agt_agent *b = NULL;
    agt_agent_new(&b, fx.s, fx.m);
    agt_agent_enable_subagents(b);
    T_EQ_INT(agt_agent_restore(b, state, strlen(state)), AGT_OK, "restored");
    agt_free(state);
    agt_agent_free(fx.a);
    fx.a = b;
    agt_agent_add_user_message(fx.a, "again");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "save/restore: resumed run");
    T_EQ_STR(offered(&fx, 4), "Read,Grep,Glob,ReadMediaFile,FetchURL",
             "the restored explorer is offered its tools");
    T_EQ_STR(req_msg(&fx, 5, 5, "content"),
             "Bash is not available to this sub-agent: its profile 'explore' allows only Read, "
             "Grep, Glob, ReadMediaFile, WebSearch, FetchURL. Do the task with those, or say in "
             "your report what is left to do.",
             "the restored explorer cannot run Bash");
    char p[128];
    snprintf(p, sizeof p, "%s/y.txt", fx.root);
    T_CHECK(access(p, F_OK) != 0, "nothing was run");
    teardown(&fx);
}

/* AgentSwarm must be the only call of its response: with another call it is
 * answered with the reason, the other call runs. */
static void test_swarm_alone(void)
{
    fixture fx;
    const char *replies[] = {
        "{\"tool_calls\":[{\"id\":\"t1\",\"name\":\"TodoList\",\"arguments\":"
        "\"{\\\"todos\\\":[{\\\"title\\\":\\\"a\\\",\\\"status\\\":\\\"pending\\\"}]}\"},"
        "{\"id\":\"sw\",\"name\":\"AgentSwarm\",\"arguments\":"
        "\"{\\\"prompt_template\\\":\\\"do {{item}}\\\",\\\"items\\\":[\\\"x\\\",\\\"y\\\"]}\"}]}",
        "{\"content\":\"parent done\"}", NULL};
    setup(&fx, replies);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "swarm alone: run ok");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg(msgs, 3, "content"),
             "AgentSwarm was not run: it must be the only tool call in its response, and this "
             "response has 2 calls (the others ran). Call AgentSwarm again in a response of its "
             "own; to run several swarms, call one, wait for its result, then the next, or cover "
             "the work with a single prompt_template.",
             "swarm alone: the swarm call is refused with the reason");
    T_EQ_STR(msg(msgs, 3, "tool_call_id"), "sw", "swarm alone: the refusal answers sw");
    json_decref(msgs);
    char *todos = NULL;
    agt_session_todos(fx.s, &todos);
    T_EQ_STR(todos, "[{\"title\":\"a\",\"status\":\"pending\"}]", "swarm alone: TodoList ran");
    agt_free(todos);
    T_EQ_INT((int)json_array_size(fx.sc.requests), 2, "swarm alone: no sub-agent was started");
    teardown(&fx);
}

int main(void)
{
    test_explore();
    test_host_profiles_and_refusals();
    test_save_restore();
    test_swarm_alone();
    return t_done();
}
