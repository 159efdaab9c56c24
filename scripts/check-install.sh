#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs into a temporary prefix, as a user of a release would: the
# tarball from `make dist`, the README's quick start in it (./configure,
# make: built for the default prefix), then ./configure --prefix=DIR and
# make install in the same tree, which must relink the libraries for DIR
# rather than fail. Then builds and runs the bridge example (or, without
# the bridge, the handle example), and the FFmpeg example where
# libclmem-av was built, and the CLBlast example where CLBlast is found,
# with nothing but pkg-config. Run from a
# configured tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/clmem-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cd "$top"
make dist >/dev/null
tar -xJf "clmem-$(sed -n 's/^PACKAGE_VERSION = //p' Makefile).tar.xz" -C "$work"
cd "$work"/clmem-*/
src=$(pwd)
./configure --enable-werror >/dev/null
make -j"$(nproc)" >/dev/null
./configure --prefix="$prefix" --enable-werror >/dev/null
make -j"$(nproc)" install >install.out 2>&1 || { cat install.out >&2; exit 1; }
cd "$work"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib"
if pkg-config --exists clmem-bridge; then
    cc -std=gnu11 -Wall -Werror -o example "$src/examples/bridge-example.c" $(pkg-config --cflags --libs clmem-bridge)
    ./example
    echo "check-install: bridge example built with pkg-config clmem-bridge $(pkg-config --modversion clmem-bridge) and ran"
else
    cc -std=gnu11 -Wall -Werror -o example "$src/examples/handle-example.c" $(pkg-config --cflags --libs clmem)
    ./example
    echo "check-install: handle example built with pkg-config clmem $(pkg-config --modversion clmem) and ran"
fi
# libclmem-av, where configure found libavutil: its example through
# pkg-config clmem-av alone (which brings clmem-bridge and libavutil).
if pkg-config --exists clmem-av; then
    cc -std=gnu11 -Wall -Werror -o ffmpeg-example "$src/examples/ffmpeg-example.c" $(pkg-config --cflags --libs clmem-av)
    ./ffmpeg-example
    echo "check-install: ffmpeg example built with pkg-config clmem-av $(pkg-config --modversion clmem-av) and ran"
fi
# The CLBlast example, where pkg-config finds CLBlast, with the link line
# docs/guide.md gives (-lm for fabs and fmax).
if pkg-config --exists clmem-bridge clblast; then
    cc -std=gnu11 -Wall -Werror -o clblast-example "$src/examples/clblast-example.c" \
        $(pkg-config --cflags --libs clmem-bridge clblast) -lm
    ./clblast-example
    echo "check-install: clblast example built with pkg-config clmem-bridge clblast and -lm, and ran"
fi
# libclmem-ipc, where configure built it: its two examples through
# pkg-config clmem-ipc alone, run as two processes.
if pkg-config --exists clmem-ipc; then
    for side in producer consumer; do
        cc -std=gnu11 -Wall -Werror -o xproc-$side "$src/examples/xproc-$side.c" $(pkg-config --cflags --libs clmem-ipc)
    done
    ./xproc-producer "$work/xproc.sock" --frames 16 &
    producer=$!
    ./xproc-consumer "$work/xproc.sock"
    wait "$producer"
    test -f "$prefix/share/man/man7/clmem-ipc.7"
    echo "check-install: the cross-process examples built with pkg-config clmem-ipc $(pkg-config --modversion clmem-ipc) and ran as two processes"
fi
test -f "$prefix/include/clmem.h" && test -f "$prefix/bin/clmem-info"
# The manual pages: clmem-bench(1) only where the tool is installed.
test -f "$prefix/share/man/man1/clmem-info.1" && test -f "$prefix/share/man/man7/clmem.7"
if test -f "$prefix/bin/clmem-bench"; then
    test -f "$prefix/share/man/man1/clmem-bench.1"
fi
"$prefix/bin/clmem-info" >/dev/null
echo "check-install: headers, libraries, clmem-info, manual pages and .pc files installed under a temporary prefix"
