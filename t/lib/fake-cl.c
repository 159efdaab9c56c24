/* SPDX-License-Identifier: MIT */
#include "fake-cl.h"

struct _cl_icd_dispatch fake_dispatch;
struct fake_cl_object fake_mem_obj = {&fake_dispatch};
struct fake_cl_object fake_queue_obj = {&fake_dispatch};
