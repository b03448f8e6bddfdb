#!/usr/bin/env python3
"""Runs mcp_client.mjs (the official @modelcontextprotocol/sdk client) against
agt-mcp. Installs the SDK with npm into NODE_DIR (in the build tree) once;
skips with a reason when node or npm is missing or the install fails.

usage: mcp_sdk.py AGT_MCP NODE_DIR
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def skip(reason):
    print("1..0 # SKIP " + reason)
    return 0


def main():
    exe, node_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return skip("node and npm are needed for the MCP SDK client test")
    sdk = os.path.join(node_dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
    if not os.path.exists(sdk):
        os.makedirs(node_dir, exist_ok=True)
        p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", node_dir,
                            "@modelcontextprotocol/sdk"], capture_output=True, text=True,
                           timeout=280)
        if p.returncode != 0 or not os.path.exists(sdk):
            return skip("npm install @modelcontextprotocol/sdk failed: "
                        + (p.stderr.strip().splitlines() or ["?"])[-1])
    script = os.path.join(node_dir, "mcp_client.mjs")
    shutil.copyfile(os.path.join(HERE, "mcp_client.mjs"), script)
    ws = tempfile.mkdtemp(prefix="agt-mcp-sdk-")
    try:
        os.makedirs(os.path.join(ws, "src"))
        with open(os.path.join(ws, "a.txt"), "w") as f:
            f.write("alpha\nbeta\n")
        with open(os.path.join(ws, "src", "m.c"), "w") as f:
            f.write("int alpha;\nint beta;\n")
        p = subprocess.run([node, script, exe, ws], timeout=120)
        return p.returncode
    finally:
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
