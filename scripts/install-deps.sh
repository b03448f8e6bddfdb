#!/bin/sh
# Installs what libagenttools needs to build, test and benchmark on Debian 12
# (run as root, or with sudo available). libclang-rt-dev: the libFuzzer and
# sanitizer runtimes of clang that scripts/fuzz.sh links (only recommended
# by clang, so --no-install-recommends would leave them out).
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential g++ clang libclang-rt-dev meson ninja-build pkg-config git ca-certificates \
    libjansson-dev libcurl4-openssl-dev libgit2-dev libpcre2-dev libedit-dev libmd4c-dev libseccomp-dev libidn2-dev libxxhash-dev \
    python3 json-schema-test-suite abigail-tools binutils patch \
    python3-jsonschema python3-croniter python3-venv python3-pytest python3-mypy ripgrep luajit tzdata libxml2-dev >/dev/null
# node + npm: the MCP SDK client test (tests/bindings/mcp_sdk.py) and the Node
# binding's tests (tests/bindings/node_run.py), which fetch their npm packages
# into the build tree. Installed only when npm is missing: NodeSource's nodejs
# carries npm itself (and conflicts with Debian's npm package); Debian's nodejs
# 18 comes with npm 9 from the npm package. Without them those tests skip.
command -v npm >/dev/null 2>&1 || $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null || true
command -v node >/dev/null 2>&1 || echo "install-deps: nodejs is not installed; the Node binding and MCP SDK tests will be skipped"
command -v npm >/dev/null 2>&1 || echo "install-deps: npm is not installed (apt-get install npm failed); the Node binding and MCP SDK tests will be skipped"
# neovim (0.7, with LuaJIT): the headless test of examples/nvim; node-typescript:
# tsc type-checks examples/vscode (its test skips without it)
$SUDO apt-get install -y -qq --no-install-recommends neovim node-typescript >/dev/null || \
    echo "install-deps: neovim/node-typescript not installed; the nvim plugin and vscode type-check tests will be skipped"
