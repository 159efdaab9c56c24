#!/bin/sh
# SPDX-License-Identifier: MIT
# The four libraries of one release go together, and a mix of releases is
# refused at start rather than silently used. libclmem exports its private
# calls in a version node named after the exact release,
# CLMEM_PRIVATE_<version> (lib/clmem-private.sym.in); a library that calls
# one records that it needs that node, and the dynamic linker will not
# start a program whose libclmem lacks it.
#
# The refusal is tested with a stand-in: libclmem's own objects, linked
# again with the same soname and the same public nodes but a private node
# of another name (CLMEM_PRIVATE_0.0.0), as another release's libclmem
# would have. A tiny library of this test's own calls clmem__error_in and
# links against the built libclmem; a program using it must start with the
# real libclmem and be refused with the stand-in. Then each dependent
# library of the tree (libclmem-bridge, -av, -ipc, when built) must record
# the need, and clmem-info, which links libclmem-bridge, must be refused
# with the stand-in too.
#
# Run by make check from the build directory: t/tests.am exports CC,
# top_builddir, top_srcdir and CLMEM_BRIDGE_BUILT, CLMEM_AV_BUILT and
# CLMEM_IPC_BUILT ("yes", or why that library was not built).
: "${CC:=cc}"
: "${top_builddir:=.}"
: "${top_srcdir:=.}"
LC_ALL=C
export LC_ALL

# The dependent libraries whose missing need is reported as TODO rather
# than a failure: they record it once their public calls go through
# clmem__error_in. Empty this list when all three do.
need_todo=

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $2 # SKIP $1"; }
todo() { n=$((n + 1)); echo "not ok $n - $2 # TODO $1"; }
points=8

echo "1..$points"
skip_all() {
    while [ "$n" -lt "$points" ]; do skip "$1" "a mix of releases is refused"; done
    exit 0
}

libs=$top_builddir/.libs
real=$libs/libclmem.so
command -v objdump >/dev/null 2>&1 || skip_all "objdump (binutils) is not installed"
[ -f "$real" ] || skip_all "no shared libclmem was built (configure --disable-shared)"

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/config.h")
[ -n "$version" ] || { echo "Bail out! no PACKAGE_VERSION in $top_builddir/config.h"; exit 99; }
node=CLMEM_PRIVATE_$version
# objdump -p: the version definitions and needs, and the soname.
objdump -p "$real" | grep -q " $node\$" ||
    skip_all "libclmem has no $node node: the linker took no version script (configure found none)"
soname=$(objdump -p "$real" | awk '$1 == "SONAME" { print $2 }')
[ -n "$soname" ] || { echo "Bail out! $real has no SONAME"; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clmem-version-pin.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT HUP INT TERM
mkdir "$tmp/other" || exit 99

# The stand-in: libclmem's PIC objects and the libraries its .la records.
dependency_libs=$(sed -n "s/^dependency_libs='\(.*\)'\$/\1/p" "$top_builddir/libclmem.la")
printf '%s\n' '/* SPDX-License-Identifier: MIT */' \
    'CLMEM_PRIVATE_0.0.0 { global: clmem__error_in; };' >"$tmp/other.sym"
# shellcheck disable=SC2086 # dependency_libs is a list of flags
if ! $CC -shared -o "$tmp/other/$soname" -Wl,-soname,"$soname" \
    "$top_builddir"/lib/.libs/libclmem_la-*.o \
    -Wl,--version-script="$top_srcdir/lib/clmem.sym" -Wl,--version-script="$tmp/other.sym" \
    $dependency_libs -pthread 2>"$tmp/cc.err"; then
    echo "Bail out! the stand-in libclmem did not link:"
    sed 's/^/# /' "$tmp/cc.err"
    exit 99
fi
if objdump -p "$tmp/other/$soname" | grep -q ' CLMEM_PRIVATE_0\.0\.0$' &&
    ! objdump -p "$tmp/other/$soname" | grep -q " $node\$" &&
    objdump -p "$tmp/other/$soname" | grep -q ' CLMEM_0\.2$'; then
    ok "the stand-in $soname has CLMEM_0.2 and CLMEM_PRIVATE_0.0.0 in place of $node"
else
    not_ok "the stand-in $soname does not have CLMEM_0.2 and CLMEM_PRIVATE_0.0.0 without $node"
    objdump -p "$tmp/other/$soname" | sed -n '/Version definitions/,/^$/p' | sed 's/^/# /'
fi

# The tiny library and a program that uses it.
cat >"$tmp/dep.c" <<'EOF'
/* SPDX-License-Identifier: MIT */
/* lib/error-private.h's declaration, with clmem_status as the int it is
 * passed as, so that no OpenCL header is needed here; 0 is CLMEM_OK. */
int clmem__error_in(const char *function, int status);
int dep_call(void);
int dep_call(void) { return clmem__error_in("dep_call", 0); }
EOF
cat >"$tmp/main.c" <<'EOF'
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
int dep_call(void);
int main(void)
{
    int rc = dep_call();
    puts("started");
    return rc;
}
EOF
if ! $CC -shared -fPIC -o "$tmp/libdep.so" -Wl,-soname,libdep.so "$tmp/dep.c" -L"$libs" -lclmem 2>"$tmp/cc.err" ||
    ! $CC -o "$tmp/main" "$tmp/main.c" -L"$tmp" -ldep -Wl,-rpath-link,"$libs" 2>>"$tmp/cc.err"; then
    echo "Bail out! the test's library or program did not build:"
    sed 's/^/# /' "$tmp/cc.err"
    exit 99
fi
if objdump -p "$tmp/libdep.so" | grep -q " $node\$"; then
    ok "a library that calls clmem__error_in records that it needs $node"
else
    not_ok "a library that calls clmem__error_in does not record that it needs $node"
fi

# run_with DIR PROGRAM: run PROGRAM with DIR first on the library path;
# its output in $tmp/out.
run_with() {
    LD_LIBRARY_PATH="$1:$tmp:$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$2" >"$tmp/out" 2>&1
}
refused() { grep -q "version \`$node' not found" "$tmp/out"; }

# Under AddressSanitizer the libraries are instrumented and the program
# built here with plain cc is not: the ASan runtime cannot come first, and
# such a program cannot start (the loader's refusal, below, comes before
# it would matter).
asan_why="a program built with plain cc cannot load AddressSanitizer-instrumented libraries"
if [ "${CLMEM_TEST_INSTRUMENTED:-}" = asan ]; then
    skip "$asan_why" "with this release's libclmem, the program starts"
elif run_with "$libs" "$tmp/main" && grep -q '^started$' "$tmp/out"; then
    ok "with this release's libclmem, the program starts"
else
    not_ok "with this release's libclmem, the program does not start:"
    sed 's/^/# /' "$tmp/out"
fi
if run_with "$tmp/other" "$tmp/main"; then
    not_ok "with another release's libclmem, the program started (it must be refused):"
    sed 's/^/# /' "$tmp/out"
elif refused && ! grep -q '^started$' "$tmp/out"; then
    ok "with another release's libclmem, the loader refuses it: $(head -n 1 "$tmp/out" | sed 's/^[^:]*: //')"
else
    not_ok "with another release's libclmem, the program failed without the loader's \"version \`$node' not found\":"
    sed 's/^/# /' "$tmp/out"
fi

# Each dependent library the tree built records the need.
# check_need NAME BUILT: BUILT is "yes" or why NAME was not built.
check_need() {
    if [ "x$2" != xyes ]; then
        skip "$2" "$1 needs $node"
    elif [ ! -f "$libs/$1.so" ]; then
        skip "no shared $1 was built (configure --disable-shared)" "$1 needs $node"
    elif objdump -p "$libs/$1.so" | grep -q " $node\$"; then
        ok "$1 needs $node"
    else
        case " $need_todo " in
        *" $1 "*) todo "$1 does not call clmem__error_in yet" "$1 needs $node" ;;
        *) not_ok "$1 does not record that it needs $node (objdump -p lists no such need)" ;;
        esac
    fi
}
check_need libclmem-bridge "${CLMEM_BRIDGE_BUILT:-yes}"
check_need libclmem-av "${CLMEM_AV_BUILT:-yes}"
check_need libclmem-ipc "${CLMEM_IPC_BUILT:-yes}"

# clmem-info links libclmem-bridge (when built): with the stand-in it must
# be refused before it prints anything.
info=$top_builddir/tools/.libs/clmem-info
[ -x "$info" ] || info=$top_builddir/tools/clmem-info
name="clmem-info with another release's libclmem is refused at start"
if [ "x${CLMEM_BRIDGE_BUILT:-yes}" != xyes ]; then
    skip "$CLMEM_BRIDGE_BUILT" "$name"
elif [ ! -f "$libs/libclmem-bridge.so" ]; then
    skip "no shared libclmem-bridge was built (configure --disable-shared)" "$name"
elif run_with "$tmp/other" "$info"; then
    if objdump -p "$libs/libclmem-bridge.so" | grep -q " $node\$"; then
        not_ok "$name: it ran"
    else
        case " $need_todo " in
        *" libclmem-bridge "*) todo "libclmem-bridge does not call clmem__error_in yet, so clmem-info ran" "$name" ;;
        *) not_ok "$name: it ran (libclmem-bridge does not need $node)" ;;
        esac
    fi
elif refused; then
    ok "$name"
else
    not_ok "$name: it failed without the loader's \"version \`$node' not found\":"
    sed 's/^/# /' "$tmp/out"
fi
