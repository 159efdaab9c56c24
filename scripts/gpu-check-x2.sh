#!/bin/sh
# SPDX-License-Identifier: MIT
# The two-device run on a machine with two identical GPUs (the device tool's
# nvidia-h200-x2), in one call: build; clmem-info's devices, UUIDs and
# pairs; clmem-bench's header with CLMEM_VK_DEVICE set to the second
# device's index and to its UUID (the header prints both, as the names are
# the same); t/bridge/bridge-two-devices; then make check with CLMEM_VK_DEVICE set
# to the second device. Logs in one tarball under $OUT.
#
# Usage there:  . .device/setup.sh && sh scripts/gpu-check-x2.sh [DEV]
# DEV is the second device's index (1). On a one-GPU machine, DEV=0 and
# CLMEM_TEST_ONE_DEVICE_TWICE=1 run the same steps on the one device.
set -u
out=${OUT:-/tmp/out}
dev=${1:-1}
jobs=$(nproc)
mkdir -p "$out"
pack() { tar -czf "$out/x2-logs.tgz" t/*/*.log test-suite.log configure.out make.out check.out info.out 2>/dev/null; }
trap pack EXIT
autoreconf -fi >/dev/null 2>&1 && ./configure --enable-werror >configure.out 2>&1 || { tail -30 configure.out; exit 1; }
# The test is a check program: built here so that it can run before make
# check. In a second make: automake's `all` recurses into another make,
# which raced this one's other target over the same objects.
{ make -j"$jobs" && make -j"$jobs" t/bridge/bridge-two-devices; } >make.out 2>&1 ||
    { grep -E "error:|warning:|\*\*\*|cannot" make.out | head -40; exit 1; }
./tools/clmem-info >info.out 2>&1
echo "== clmem-info: devices, UUIDs, pairs, paths"
grep -E "^(Vulkan|OpenCL):|^device [0-9]|^  device [0-9.]+:|device UUID|paired OpenCL device|^Vulkan [0-9]+ \(|^  (opaque-fd|dma-buf|host-mapped) " info.out
uuid=$(awk -v d="device $dev:" 'index($0, d) == 1 { f = 1 } f && /device UUID/ { print $3; exit }' info.out)
for sel in "$dev" "$uuid"; do
    echo "== CLMEM_VK_DEVICE=$sel clmem-bench (header)"
    CLMEM_VK_DEVICE=$sel timeout 120 ./tools/clmem-bench --quick --scaling-only 2>&1 |
        grep -E "^# (Vulkan|  device|OpenCL|  chosen|path)" | cut -c1-200
done
echo "== t/bridge/bridge-two-devices"
./t/bridge/bridge-two-devices >two-devices.out 2>&1
echo "exit $?"
grep -vE "^ok" two-devices.out | head -40
grep -cE "^ok" two-devices.out
echo "== make check with CLMEM_VK_DEVICE=$dev"
CLMEM_VK_DEVICE=$dev timeout "${CHECK_SECONDS:-480}" make -j"$jobs" check >check.out 2>&1
echo "make check exit $?"
grep -E "^# (TOTAL|PASS|SKIP|FAIL|ERROR):|^(FAIL|ERROR):" check.out
