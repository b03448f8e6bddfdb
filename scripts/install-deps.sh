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
    libjansson-dev libcurl4-openssl-dev libgit2-dev libpcre2-dev libedit-dev libmd4c-dev libseccomp-dev libidn2-dev \
    python3 json-schema-test-suite abigail-tools binutils patch \
    python3-jsonschema python3-croniter python3-venv python3-pytest ripgrep luajit tzdata libxml2-dev >/dev/null
# node + npm for the MCP SDK client test (tests/bindings/mcp_sdk.py installs the SDK into the build tree; skipped without them)
command -v npm >/dev/null 2>&1 || $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null || echo "install-deps: nodejs/npm not installed; the MCP SDK test will be skipped"
