#!/bin/sh
# The README's examples are the example programs, byte for byte, so the
# code people copy is the code the tests build and run: its first C block
# is examples/handle-example.c, and the C block after each line
# "<!-- file: examples/NAME.c -->" is examples/NAME.c (ring-example.c,
# clblast-example.c).
s=${top_srcdir:-.}
echo 1..3
tmp=$(mktemp)
awk '/^```c$/ {inside=1; next} /^```$/ && inside {exit} inside {print}' "$s/README.md" > "$tmp"
if cmp -s "$tmp" "$s/examples/handle-example.c"; then
    echo "ok 1 - README.md's first C block is examples/handle-example.c"
else
    echo "not ok 1 - README.md's first C block differs from examples/handle-example.c:"
    diff "$tmp" "$s/examples/handle-example.c" | sed 's/^/# /'
fi
awk '/^<!-- file: examples\/ring-example.c -->$/ {marked=1; next}
     marked && /^```c$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' "$s/README.md" > "$tmp"
if [ -s "$tmp" ] && cmp -s "$tmp" "$s/examples/ring-example.c"; then
    echo "ok 2 - README.md's ring example is examples/ring-example.c"
else
    echo "not ok 2 - README.md's ring example differs from examples/ring-example.c (or is missing):"
    diff "$tmp" "$s/examples/ring-example.c" | sed 's/^/# /'
fi
awk '/^<!-- file: examples\/clblast-example.c -->$/ {marked=1; next}
     marked && /^```c$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' "$s/README.md" > "$tmp"
if [ -s "$tmp" ] && cmp -s "$tmp" "$s/examples/clblast-example.c"; then
    echo "ok 3 - README.md's CLBlast example is examples/clblast-example.c"
else
    echo "not ok 3 - README.md's CLBlast example differs from examples/clblast-example.c (or is missing):"
    diff "$tmp" "$s/examples/clblast-example.c" | sed 's/^/# /'
fi
rm -f "$tmp"
