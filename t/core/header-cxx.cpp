/* SPDX-License-Identifier: MIT */
// clmem.h on its own in C++11 (-std=c++11 -pedantic -Werror -Wall, see
// t/tests.am): it must compile as C++ and give its functions C linkage. A
// missing extern "C" shows up here as an undefined reference at link time.
#include <clmem.h>

#include <cstdio>

// CLMEM_CHECK_VERSION as a C++ constant expression: true for this version
// and earlier ones, false for later ones. A wrong answer stops the build.
static_assert(CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO),
              "true for the headers' own version");
static_assert(CLMEM_CHECK_VERSION(0, 3, 0) && CLMEM_CHECK_VERSION(0, 2, 99), "true for 0.3.0 and earlier");
static_assert(!CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO + 1) &&
                  !CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR + 1, 0) &&
                  !CLMEM_CHECK_VERSION(CLMEM_VERSION_MAJOR + 1, 0, 0),
              "false for a later version");

int main()
{
    clmem_handle *h = nullptr;
    clmem_status s = clmem_handle_wrap(nullptr, nullptr, 0, nullptr, &h);
    bool ok = s == CLMEM_ERR_NULL_POINTER && h == nullptr && clmem_handle_mem(h) == nullptr &&
              clmem_keepalive_ref(nullptr) == nullptr && clmem_handle_keepalive(h) == nullptr &&
              clmem_status_name(CLMEM_ERR_IN_USE) != nullptr && clmem_error_status() == CLMEM_ERR_NULL_POINTER;

    std::printf("1..1\n%s 1 - clmem.h builds alone as C++11 (clmem %s)\n", ok ? "ok" : "not ok",
                clmem_version());
    return ok ? 0 : 1;
}
