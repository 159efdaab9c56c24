# SPDX-License-Identifier: MIT
# Sourced by scripts/check-*.sh: source_dir BUILDDIR sets $src to the source
# tree a separate build directory configures from. configure refuses a
# build directory when the sources are configured in place ("source
# directory already configured"); then the checkout's files (tracked and
# untracked, not ignored) are copied to BUILDDIR/src, refreshed on every run
# (tar keeps the files' times, so the build stays incremental). Needs $top.
source_dir() {
    if test -f "$top/config.status"; then
        mkdir -p "$1/src"
        (cd "$top" && git ls-files -z --cached --others --exclude-standard |
            tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$1/src" -xf -
        src=$1/src
    else
        src=$top
    fi
    test -x "$src/configure" || (cd "$src" && autoreconf -fi >/dev/null)
}
