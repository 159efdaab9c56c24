// clmem.h on its own in C++11 (-std=c++11 -pedantic -Werror -Wall, see
// t/tests.am): it must compile as C++ and give its functions C linkage. A
// missing extern "C" shows up here as an undefined reference at link time.
#include <clmem.h>

#include <cstdio>

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
