#!/usr/bin/env bash
# Rewrites the OTF2 test traces (ring/, collectives/, anysource/) with make_traces.c;
# needs the OTF2 library (libotf2-trace-dev). The traces are committed: tests do not run this.
# `make_traces.sh DIR ROUNDS` writes DIR/longring instead, a 4-rank ring of ROUNDS rounds
# (for measuring long replays; docs/traces.md).
set -euo pipefail
out=$(realpath -m "${1:-.}")
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c99 -Wall -Wextra -o "$tmp/make_traces" make_traces.c $(otf2-config --cflags --ldflags --libs)
if [ $# -eq 2 ]; then
    rm -rf "$out/longring"
    "$tmp/make_traces" "$out" "$2"
    exit 0
fi
rm -rf ring collectives anysource
"$tmp/make_traces" .
