"""Fake GitHub and GitLab REST APIs on 127.0.0.1 for the agt-review --post tests.

They check requests the way the real APIs do, from the repository itself
(git diff base...head, parsed here independently of agt-review):
  GitHub: Authorization: Bearer TOKEN (401 otherwise), a User-Agent (403
    otherwise, as api.github.com does); a review's commit_id must be the PR
    head; each comment's line must be a line of the PR diff on its side
    (RIGHT: context or added, LEFT: context or removed), a range's start_line
    must be on the same side, before line and in the same hunk (422
    otherwise); list endpoints are paginated at 2 items a page whatever
    per_page says, with a Link header.
  GitLab: PRIVATE-TOKEN (401 otherwise); a discussion's position must carry
    the MR's diff_refs, position_type text, paths of the diff, and new_line
    only for an added line, old_line only for a removed one, both (matching)
    for an unchanged one (400 otherwise); lists paginated at 2 with Link and
    X-Next-Page.
Every request is recorded (method, path, headers, JSON body) in .requests.
"""
import http.server
import json
import re
import socketserver
import subprocess
import threading
import urllib.parse

PAGE = 2


def pr_diff(repo, base, head):
    """{path: {"old_path", "hunks": [[(type, old, new), ...], ...]}} of git diff base...head."""
    out = subprocess.run(["git", "-C", repo, "diff", "-M", "--no-color", "-U3",
                          base + "..." + head], check=True, capture_output=True,
                         text=True).stdout
    files = {}
    cur = None
    old_path = None
    o = n = 0
    for line in out.split("\n"):
        if line.startswith("diff --git "):
            cur = None
            old_path = None
        elif line.startswith("--- "):
            old_path = None if line == "--- /dev/null" else line[6:]
        elif line.startswith("+++ "):
            path = line[6:] if line != "+++ /dev/null" else old_path
            cur = files.setdefault(path, {"old_path": old_path or path, "hunks": []})
        elif line.startswith("@@ ") and cur is not None:
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
            o, n = int(m.group(1)), int(m.group(3))
            cur["hunks"].append([])
        elif cur is not None and cur["hunks"] and line[:1] in ("+", "-", " "):
            t = line[0]
            cur["hunks"][-1].append((t, o if t != "+" else 0, n if t != "-" else 0))
            if t != "+":
                o += 1
            if t != "-":
                n += 1
    return files


def hunk_of(files, path, side_old, line):
    """The index of the hunk holding line on that side, or None; and the line's entry."""
    f = files.get(path)
    if f is None:
        return None, None
    for i, h in enumerate(f["hunks"]):
        for e in h:
            if (e[1] if side_old else e[2]) == line:
                return i, e
    return None, None


class Forge:
    """State shared by both fakes."""

    def __init__(self, repo, token):
        self.repo = repo
        self.token = token
        self.lock = threading.Lock()
        self.requests = []
        self.next_id = 1000
        # GitHub
        self.pr = {}  # number, head, base
        self.review_comments = []
        self.reviews = []
        self.issue_comments = []
        # GitLab
        self.mr = {}  # iid, base (merge base), start, head
        self.discussions = []

    def new_id(self):
        self.next_id += 1
        return self.next_id


class Handler(http.server.BaseHTTPRequestHandler):
    forge = None
    kind = None

    def log_message(self, *a):
        pass

    def reply(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def page(self, items, url):
        u = urllib.parse.urlparse(url)
        q = dict(urllib.parse.parse_qsl(u.query))
        p = int(q.get("page", "1"))
        chunk = items[(p - 1) * PAGE:p * PAGE]
        headers = {}
        if p * PAGE < len(items):
            q["page"] = str(p + 1)
            nxt = "http://%s:%d%s?%s" % (self.server.server_address[0],
                                          self.server.server_address[1], u.path,
                                          urllib.parse.urlencode(q))
            headers["Link"] = '<%s>; rel="next", <%s>; rel="last"' % (nxt, nxt)
            if self.kind == "gitlab":
                headers["X-Next-Page"] = str(p + 1)
        self.reply(200, chunk, headers)

    def handle_any(self, method):
        f = self.forge
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        body = json.loads(raw) if raw else None
        path = urllib.parse.urlparse(self.path).path
        with f.lock:
            f.requests.append({"kind": self.kind, "method": method, "path": self.path,
                               "headers": dict(self.headers), "body": body})
            if self.kind == "github":
                self.github(method, path, body)
            else:
                self.gitlab(method, path, body)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_PUT(self):
        self.handle_any("PUT")

    # ---- GitHub ----
    def github(self, method, path, body):
        f = self.forge
        if not self.headers.get("User-Agent"):
            return self.reply(403, {"message": "Request forbidden by administrative rules. "
                                               "Please make sure your request has a User-Agent "
                                               "header"})
        if self.headers.get("Authorization") != "Bearer " + f.token:
            return self.reply(401, {"message": "Bad credentials"})
        pr = f.pr
        base = "/repos/%s/pulls/%d" % (pr["repo"], pr["number"])
        if method == "GET" and path == base:
            return self.reply(200, {"number": pr["number"], "head": {"sha": pr["head"]},
                                    "base": {"sha": pr["base"]}})
        if method == "GET" and path == base + "/comments":
            return self.page(f.review_comments, self.path)
        if method == "GET" and path == base + "/reviews":
            return self.page(f.reviews, self.path)
        issue = "/repos/%s/issues/%d/comments" % (pr["repo"], pr["number"])
        if method == "GET" and path == issue:
            return self.page(f.issue_comments, self.path)
        if method == "POST" and path == issue:
            c = {"id": f.new_id(), "body": body["body"]}
            f.issue_comments.append(c)
            return self.reply(201, c)
        m = re.fullmatch(r"/repos/%s/issues/comments/(\d+)" % re.escape(pr["repo"]), path)
        if method == "PATCH" and m:
            for c in f.issue_comments:
                if c["id"] == int(m.group(1)):
                    c["body"] = body["body"]
                    return self.reply(200, c)
            return self.reply(404, {"message": "Not Found"})
        if method == "POST" and path == base + "/reviews":
            return self.github_review(body)
        return self.reply(404, {"message": "Not Found"})

    def github_review(self, body):
        f = self.forge
        pr = f.pr
        if body.get("commit_id") != pr["head"]:
            return self.reply(422, {"message": "Unprocessable Entity",
                                    "errors": ["commit_id is not the head of the pull request"]})
        if body.get("event") not in ("COMMENT", "APPROVE", "REQUEST_CHANGES"):
            return self.reply(422, {"message": "Unprocessable Entity", "errors": ["event"]})
        if not body.get("body"):
            return self.reply(422, {"message": "Unprocessable Entity",
                                    "errors": ["body is required for COMMENT"]})
        files = pr_diff(f.repo, pr["base"], pr["head"])
        stored = []
        for c in body.get("comments", []):
            side = c.get("side", "RIGHT")
            if side not in ("RIGHT", "LEFT") or not isinstance(c.get("line"), int):
                return self.reply(422, {"message": "Unprocessable Entity",
                                        "errors": ["side/line of %s" % c.get("path")]})
            hi, _ = hunk_of(files, c["path"], side == "LEFT", c["line"])
            if hi is None:
                return self.reply(422, {"message": "Unprocessable Entity", "errors": [
                    "Pull request review thread line must be part of the diff (%s:%d %s)"
                    % (c["path"], c["line"], side)]})
            if "start_line" in c:
                if c.get("start_side", side) != side or c["start_line"] >= c["line"]:
                    return self.reply(422, {"message": "Unprocessable Entity",
                                            "errors": ["start_line must precede line"]})
                hs, _ = hunk_of(files, c["path"], side == "LEFT", c["start_line"])
                if hs != hi:
                    return self.reply(422, {"message": "Unprocessable Entity", "errors": [
                        "start_line must be part of the same hunk as the line"]})
            stored.append(dict(c, id=f.new_id(), commit_id=body["commit_id"]))
        review = {"id": f.new_id(), "body": body["body"], "commit_id": body["commit_id"],
                  "state": "COMMENTED"}
        f.reviews.append(review)
        f.review_comments.extend(stored)
        return self.reply(200, review)

    # ---- GitLab ----
    def gitlab(self, method, path, body):
        f = self.forge
        if self.headers.get("PRIVATE-TOKEN") != f.token:
            return self.reply(401, {"message": "401 Unauthorized"})
        mr = f.mr
        base = "/api/v4/projects/%s/merge_requests/%d" % (mr["project"], mr["iid"])
        if method == "GET" and path == base:
            return self.reply(200, {"iid": mr["iid"], "diff_refs": {
                "base_sha": mr["base"], "start_sha": mr["start"], "head_sha": mr["head"]}})
        if method == "GET" and path == base + "/discussions":
            return self.page(f.discussions, self.path)
        if method == "POST" and path == base + "/discussions":
            return self.gitlab_discussion(body)
        if method == "POST" and path == base + "/notes":
            note = {"id": f.new_id(), "body": body["body"], "system": False}
            f.discussions.append({"id": "d%d" % note["id"], "individual_note": True,
                                  "notes": [note]})
            return self.reply(201, note)
        m = re.fullmatch(re.escape(base) + r"/notes/(\d+)", path)
        if method == "PUT" and m:
            for d in f.discussions:
                for note in d["notes"]:
                    if note["id"] == int(m.group(1)):
                        note["body"] = body["body"]
                        return self.reply(200, note)
            return self.reply(404, {"message": "404 Not found"})
        return self.reply(404, {"message": "404 Not found"})

    def gitlab_discussion(self, body):
        f = self.forge
        mr = f.mr
        pos = body.get("position")
        if pos is not None:
            bad = None
            if pos.get("position_type") != "text":
                bad = "position_type"
            elif (pos.get("base_sha"), pos.get("start_sha"), pos.get("head_sha")) != \
                    (mr["base"], mr["start"], mr["head"]):
                bad = "diff_refs"
            files = pr_diff(f.repo, mr["base"], mr["head"])
            fl = files.get(pos.get("new_path"))
            if bad is None and (fl is None or fl["old_path"] != pos.get("old_path")):
                bad = "new_path/old_path"
            nl, ol = pos.get("new_line"), pos.get("old_line")
            if bad is None:
                e = None
                if nl is not None:
                    _, e = hunk_of(files, pos["new_path"], False, nl)
                elif ol is not None:
                    _, e = hunk_of(files, pos["new_path"], True, ol)
                if e is None:
                    bad = "line not in the diff"
                elif e[0] == "+" and (nl != e[2] or ol is not None):
                    bad = "an added line takes new_line only"
                elif e[0] == "-" and (ol != e[1] or nl is not None):
                    bad = "a removed line takes old_line only"
                elif e[0] == " " and (nl != e[2] or ol != e[1]):
                    bad = "an unchanged line takes both old_line and new_line"
            if bad is not None:
                return self.reply(400, {"message": "400 Bad request - Note {:line_code=>"
                                                   "[\"can't be blank\"]} (%s)" % bad})
        note = {"id": f.new_id(), "body": body["body"], "position": pos, "system": False}
        d = {"id": "d%d" % note["id"], "individual_note": pos is None, "notes": [note]}
        f.discussions.append(d)
        return self.reply(201, d)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def start(kind, forge):
    """Starts a fake on 127.0.0.1; returns (server, base URL)."""
    handler = type("H_" + kind, (Handler,), {"forge": forge, "kind": kind})
    srv = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % srv.server_address[1]
    return srv, url + ("/api/v4" if kind == "gitlab" else "")
