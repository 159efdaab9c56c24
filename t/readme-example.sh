#!/bin/sh
# The README's usage example is examples/handle-example.c, byte for byte,
# so the code people copy is the code the tests build and run.
s=${top_srcdir:-.}
echo 1..1
tmp=$(mktemp)
awk '/^```c$/ {inside=1; next} /^```$/ && inside {exit} inside {print}' "$s/README.md" > "$tmp"
if cmp -s "$tmp" "$s/examples/handle-example.c"; then
    echo "ok 1 - README.md's first C block is examples/handle-example.c"
else
    echo "not ok 1 - README.md's first C block differs from examples/handle-example.c:"
    diff "$tmp" "$s/examples/handle-example.c" | sed 's/^/# /'
fi
rm -f "$tmp"
