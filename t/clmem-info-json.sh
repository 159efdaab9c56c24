#!/bin/sh
# clmem-info --json against its documented schema: the JSON OUTPUT section
# of man/clmem-info.1. Every key that section names is in the output, with
# a value of the type it gives, wherever the output has an object for it;
# and the output has no key the section does not name, so that a key added
# to the tool without its documentation fails here.
#
# The page lists each key on a line of its own:
#   .It Li PATH Pq TYPE[, if KEY]
# PATH is a[].b for key b of every object in array a, a.b for key b of
# object a; TYPE is words among string, integer, boolean, array, object,
# null ("array of strings or null"); ", if KEY" means the key is there only
# when the same object's KEY is true. A key below a null object or an empty
# array cannot be checked on this machine: the test says how many were not
# (the CPU machines of CI pair no devices, so paired_opencl_device is null).
#
# Run by make check from the build directory: Makefile.am exports
# top_builddir, top_srcdir and CLMEM_BRIDGE_BUILT ("yes", or why the bridge
# was not built).
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

page="$top_srcdir/man/clmem-info.1"
tool="$top_builddir/tools/clmem-info"

# configure's choice, not whether a file happens to be there.
built=${CLMEM_BRIDGE_BUILT-}
if test -z "$built"; then
    echo "1..1"
    echo "not ok 1 - CLMEM_BRIDGE_BUILT is unset (run this through make check)"
    exit 1
fi
if test "$built" != yes; then
    echo "1..0 # SKIP $built"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP python3 not found (it parses the JSON)"
    exit 0
fi
if test ! -x "$tool"; then
    echo "Bail out! $tool not found: build it first"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-info-json.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

unset CLMEM_VK_DEVICE
"$tool" --json >"$tmp/json" 2>"$tmp/err"
rc=$?

python3 - "$page" "$tmp/json" "$rc" <<'EOF'
import json, re, sys

page_path, json_path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
n = 0
failed = False

def point(ok, text, notes=()):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, text))
    for line in notes:
        print("#   " + line)
    if not ok:
        failed = True

print("1..5")

# The documented keys: ".It Li PATH Pq TYPE[, if KEY]" in JSON OUTPUT.
schema = {}
section = None
item = re.compile(r"^\.It Li (\S+) Pq (.+?)(?:, if ([A-Za-z_][A-Za-z0-9_]*))?$")
with open(page_path) as f:
    for line in f:
        line = line.rstrip("\n")
        if line.startswith(".Sh "):
            section = line[4:]
            continue
        if section == "JSON OUTPUT":
            m = item.match(line)
            if m:
                schema[m.group(1)] = (m.group(2), m.group(3))
point(len(schema) > 0, "%s names %d JSON keys under JSON OUTPUT" % (page_path, len(schema)))

try:
    with open(json_path) as f:
        doc = json.load(f)
    parsed = isinstance(doc, dict)
    why = "" if parsed else "the top level is not an object"
except ValueError as e:
    doc, parsed, why = None, False, str(e)
point(rc == 0 and parsed, "clmem-info --json exits 0 (got %d) and prints one JSON object%s"
      % (rc, ": " + why if why else ""))
if not parsed:
    for k in range(n + 1, 6):
        print("not ok %d - # the JSON did not parse" % k)
    sys.exit(1)

def type_ok(value, text):
    """Does value fit TYPE text such as 'array of strings or null'?"""
    of = re.search(r"array of (\w+)", text)
    words = set(re.findall(r"[a-z]+", re.sub(r"array of \w+", "array", text)))
    if value is None:
        return "null" in words
    if isinstance(value, bool):
        return "boolean" in words
    if isinstance(value, int):
        return "integer" in words
    if isinstance(value, str):
        return "string" in words
    if isinstance(value, list):
        if of and of.group(1) == "strings":
            return "array" in words and all(isinstance(x, str) for x in value)
        return "array" in words
    if isinstance(value, dict):
        return "object" in words
    return False

def parents(path):
    """The objects that should hold the last key of path, and that key."""
    parts = path.split(".")
    objs = [doc]
    for part in parts[:-1]:
        key, is_array = (part[:-2], True) if part.endswith("[]") else (part, False)
        nxt = []
        for o in objs:
            v = o.get(key) if isinstance(o, dict) else None
            if is_array:
                nxt.extend(x for x in (v or []) if isinstance(x, dict))
            elif isinstance(v, dict):
                nxt.append(v)
        objs = nxt
    last = parts[-1]
    return objs, last[:-2] if last.endswith("[]") else last

missing, wrong, unchecked = [], [], []
checked = 0
for path, (type_text, cond) in sorted(schema.items()):
    objs, key = parents(path)
    objs = [o for o in objs if cond is None or o.get(cond) is True]
    if not objs:
        unchecked.append(path)
        continue
    checked += 1
    for o in objs:
        if key not in o:
            missing.append(path)
            break
        if not type_ok(o[key], type_text):
            wrong.append("%s is %s, documented as %s" % (path, json.dumps(o[key])[:60], type_text))
            break

point(not missing, "every documented key is in the output (%d checked)" % checked,
      ["missing: " + p for p in missing])
point(not wrong, "every documented key has the documented type", wrong)

# The reverse: every key of the output, written the way the page writes it.
found = set()
def walk(value, prefix):
    if isinstance(value, dict):
        for k, v in value.items():
            path = prefix + k
            if isinstance(v, list) and any(isinstance(x, dict) for x in v):
                found.add(path)
                for x in v:
                    walk(x, path + "[].")
            else:
                found.add(path)
                walk(v, path + ".")
walk(doc, "")
extra = sorted(found - set(schema))
point(not extra, "every key of the output is documented in JSON OUTPUT", ["undocumented: " + p for p in extra])

if unchecked:
    print("# %d documented keys have no object to be checked on in this machine's output "
          "(a null object or an empty array above them): %s" % (len(unchecked), ", ".join(unchecked)))
sys.exit(1 if failed else 0)
EOF
status=$?
if test $status -ne 0; then
    sed 's/^/# stderr: /' "$tmp/err" | head -n 20
fi
exit $status
