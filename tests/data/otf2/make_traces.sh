#!/usr/bin/env bash
# Rewrites the OTF2 test traces (ring/, collectives/, anysource/) with make_traces.c;
# needs the OTF2 library (libotf2-trace-dev). The traces are committed: tests do not run this.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=c99 -Wall -Wextra -o "$tmp/make_traces" make_traces.c $(otf2-config --cflags --ldflags --libs)
rm -rf ring collectives anysource
"$tmp/make_traces" .
