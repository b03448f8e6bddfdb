#!/bin/sh
# ABI gate: compares the built library with the baseline in abi/ using
# libabigail. Added functions and types pass; removed or changed ones fail.
# Prints TAP. usage: check_abidiff.sh SOURCE_DIR SHARED_LIBRARY
src=$1
lib=$2
base="$src/abi/libagenttools.abi"
if ! command -v abidiff >/dev/null 2>&1 || ! command -v abidw >/dev/null 2>&1; then
    echo "ok 1 # SKIP abigail-tools (abidw, abidiff) not installed"
    echo "1..1"
    exit 0
fi
if [ ! -f "$base" ]; then
    echo "not ok 1 - baseline $base is missing (make it with abi/update-baseline.sh)"
    echo "1..1"
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abidw --headers-dir "$src/include/agenttools" --drop-private-types --no-show-locs \
    --out-file "$tmp/new.abi" "$lib" || { echo "not ok 1 - abidw failed"; echo "1..1"; exit 1; }
abidiff --no-show-locs "$base" "$tmp/new.abi" >"$tmp/report" 2>&1
status=$?
fail=0
# Exit bits: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
if [ $((status & 3)) -ne 0 ] || [ $((status & 8)) -ne 0 ]; then
    fail=1
fi
# A compatible change (bit 4) is fine only when it is nothing but additions.
if grep -Eq '[1-9][0-9]* Removed|[1-9][0-9]* Changed' "$tmp/report"; then
    fail=1
fi
if [ $fail -eq 0 ]; then
    echo "ok 1 - no removed or changed symbols against the baseline (abidiff status $status)"
else
    echo "not ok 1 - the ABI differs from the baseline in abi/ (abidiff status $status)"
    sed 's/^/# /' "$tmp/report" | head -60
fi
echo "1..1"
exit $fail
