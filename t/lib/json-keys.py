#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A tool's JSON output against the JSON OUTPUT section of its manual page.

Usage: json-keys.py PAGE JSON RC TOOL FIRST

Prints five TAP points, numbered from FIRST, without a plan (the calling
test prints it): the page names keys; TOOL exited 0 (RC) and JSON holds
one object; every documented key is in the output, wherever the output
has an object for it; each has the documented type; and the output has
no key the page does not name, so that a key added to a tool without its
documentation fails. Exits 1 when a point failed.

The page lists each key on a line of its own:
  .It Li PATH Pq TYPE[, if KEY]
PATH is a[].b for key b of every object in array a, a.b for key b of
object a; TYPE is words among string, integer, number, boolean, array,
object, null ("array of strings or null"); ", if KEY" means the key is
there only when the same object's KEY is true. A key below a null object
or an empty array cannot be checked on this machine: a comment says how
many were not.
"""
import json
import re
import sys

page_path, json_path, rc, tool, first = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
n = first - 1
failed = False


def point(ok, text, notes=()):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, text))
    for line in notes:
        print("#   " + line)
    if not ok:
        failed = True


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
point(rc == 0 and parsed, "%s --json exits 0 (got %d) and prints one JSON object%s"
      % (tool, rc, ": " + why if why else ""))
if not parsed:
    for k in range(n + 1, first + 5):
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
        return "integer" in words or "number" in words
    if isinstance(value, float):
        return "number" in words
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
