#!/bin/sh
# Builds the libFuzzer targets (clang, AddressSanitizer + UBSan) and runs
# each of them for SECONDS, one after the other.
# usage: scripts/fuzz.sh SECONDS [TARGET...]
#   TARGET: a target name such as fuzz_schema (default: every fuzz_* target
#   the build defines). Environment: FUZZ_BUILD (build directory, default
#   build-fuzz in the source tree), FUZZ_RSS_MB (memory limit per target,
#   default 2048), FUZZ_TIMEOUT (seconds one input may take, default 10),
#   FUZZ_SEED (libFuzzer's random seed; unset = a new one each run).
# With FUZZ_SEED set, the work corpus is emptied first and a target tries
# the same inputs in the same order on every run (a shorter time budget
# tries a prefix of them): CI runs with a fixed seed so that what it checks can be
# run again anywhere; exploratory runs leave the seed unset.
# Per target it prints the executions and the findings; a crash, leak,
# sanitizer report, timeout (hang) or out-of-memory fails the target, and
# the crashing input's path and the stack are printed. Seeds come from
# tests/fuzz/corpus/TARGET/ (never written to: new inputs go to the work
# folder FUZZ_BUILD/fuzz-work/TARGET/), the dictionary from
# tests/fuzz/TARGET.dict. Writes FUZZ_BUILD/fuzz.tap (one TAP case per
# target, for .ci/summary.py) and ends with "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || ! [ "$1" -gt 0 ] 2>/dev/null; then
    echo "usage: scripts/fuzz.sh SECONDS [TARGET...]" >&2
    exit 2
fi
secs=$1
shift
build=${FUZZ_BUILD:-$top/build-fuzz}
rss=${FUZZ_RSS_MB:-2048}
tmo=${FUZZ_TIMEOUT:-10}
tap=$build/fuzz.tap

fail_setup() {
    echo "fuzz: $1" >&2
    mkdir -p "$build"
    printf '1..1\nnot ok 1 - fuzz build: %s\n' "$1" >"$tap"
    echo "0 passed, 1 failed"
    exit 1
}

if [ ! -f "$build/build.ninja" ]; then
    CC=${FUZZ_CC:-clang} meson setup "$build" "$top" -Dfuzz=true -Db_lundef=false \
        -Dbench=false >"$build.setup.log" 2>&1 ||
        { cat "$build.setup.log" >&2; fail_setup "meson setup failed (see above)"; }
    rm -f "$build.setup.log"
fi

# Every executable named fuzz_* that the build defines, as "name path".
list=$(meson introspect --targets "$build" | python3 -c '
import json, os, sys
build = sys.argv[1]
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["name"].startswith("fuzz_"):
        print(t["name"], os.path.relpath(t["filename"][0], build))
' "$build") || fail_setup "meson introspect failed"
if [ $# -gt 0 ]; then
    want=" $* "
    list=$(echo "$list" | while read -r name path; do
        case "$want" in *" $name "*) echo "$name $path" ;; esac
    done)
fi
[ -n "$list" ] || fail_setup "no fuzz targets found"

paths=$(echo "$list" | while read -r name path; do echo "$path"; done)
# shellcheck disable=SC2086
nice ninja -C "$build" $paths >"$build/fuzz-build.log" 2>&1 ||
    { tail -40 "$build/fuzz-build.log" >&2; fail_setup "building the fuzz targets failed"; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
n=$(echo "$list" | wc -l)
passed=0
failed=0
i=0
echo "1..$n" >"$tap.new"
# A here-document, not a pipe: the counters live in this shell.
while read -r name path; do
    i=$((i + 1))
    work=$build/fuzz-work/$name
    [ -n "${FUZZ_SEED:-}" ] && rm -rf "$work/corpus"
    mkdir -p "$work/corpus" "$work/artifacts"
    rm -f "$work/artifacts/"*
    seeds=$top/tests/fuzz/corpus/$name
    set -- "$work/corpus"
    [ -d "$seeds" ] && set -- "$@" "$seeds"
    [ -n "${FUZZ_SEED:-}" ] && set -- -seed="$FUZZ_SEED" "$@"
    dict=$top/tests/fuzz/$name.dict
    [ -f "$dict" ] && set -- -dict="$dict" "$@"
    log=$work/log.txt
    (cd "$work" && "$build/$path" -max_total_time="$secs" -timeout="$tmo" \
        -rss_limit_mb="$rss" -malloc_limit_mb="$rss" -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$@") >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*DONE.*/\1/p' "$log" | tail -1)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -1)
    [ -n "$execs" ] || execs=0
    artifact=$(ls "$work/artifacts/" 2>/dev/null | head -1)
    if [ $rc -eq 0 ] && [ -z "$artifact" ]; then
        passed=$((passed + 1))
        echo "$name: $execs executions, no findings"
        echo "ok $i - $name: $execs executions in ${secs} s, no findings" >>"$tap.new"
    else
        failed=$((failed + 1))
        kind=$(grep -m1 -o 'ERROR: [A-Za-z]*Sanitizer: [a-z-]*\|ERROR: libFuzzer: [a-z-]*\|runtime error: .*' "$log")
        [ -n "$kind" ] || kind="exit status $rc"
        echo "$name: FAILED after $execs executions: $kind"
        if [ -n "$artifact" ]; then
            echo "  input: $work/artifacts/$artifact"
            echo "  reproduce: $build/$path $work/artifacts/$artifact"
        fi
        echo "  log: $log"
        # The report: from the first sanitizer or libFuzzer error on.
        sed -n '/==[0-9]*==ERROR\|runtime error\|ERROR: libFuzzer\|^SUMMARY/,$p' "$log" |
            grep -v '^MS: \|^Base64: \|^0x\|^stat::\|in fuzzer::\|__libc_start\| in _start \|__sanitizer_print_stack_trace\|^NOTE: \|Combine libFuzzer' |
            head -50 | cut -c1-300 | sed 's/^/  | /'
        echo "not ok $i - $name: $kind after $execs executions (input: ${artifact:-none})" >>"$tap.new"
    fi
done <<EOF
$list
EOF
mv "$tap.new" "$tap"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
