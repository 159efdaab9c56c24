/* SPDX-License-Identifier: MIT */
/* clmem_status_str, clmem_status_name and the last-error record. */
#include "config.h"
#include "clmem.h"
#include "t/lib/tap.h"

#include <stdio.h>
#include <string.h>

/* The highest status clmem.h defines. A new status must be added here, to
 * `names` below and to lib/status.c; the count of plan points grows with it. */
#define LAST_STATUS CLMEM_ERR_TIMEOUT
#define NSTATUS (LAST_STATUS + 1)

/* The enumerator names, written out rather than built with #x as
 * lib/status.c does, so that a typo or a swapped case there shows up. */
static const char *const names[NSTATUS] = {
    [CLMEM_OK] = "CLMEM_OK",
    [CLMEM_ERR_NULL_POINTER] = "CLMEM_ERR_NULL_POINTER",
    [CLMEM_ERR_ZERO_SIZE] = "CLMEM_ERR_ZERO_SIZE",
    [CLMEM_ERR_INVALID_VALUE] = "CLMEM_ERR_INVALID_VALUE",
    [CLMEM_ERR_CONTEXT_MISMATCH] = "CLMEM_ERR_CONTEXT_MISMATCH",
    [CLMEM_ERR_NOT_A_BUFFER] = "CLMEM_ERR_NOT_A_BUFFER",
    [CLMEM_ERR_OPENCL] = "CLMEM_ERR_OPENCL",
    [CLMEM_ERR_VULKAN] = "CLMEM_ERR_VULKAN",
    [CLMEM_ERR_UNSUPPORTED] = "CLMEM_ERR_UNSUPPORTED",
    [CLMEM_ERR_DEVICE_MISMATCH] = "CLMEM_ERR_DEVICE_MISMATCH",
    [CLMEM_ERR_NO_MEMORY] = "CLMEM_ERR_NO_MEMORY",
    [CLMEM_ERR_IN_USE] = "CLMEM_ERR_IN_USE",
    [CLMEM_ERR_TIMEOUT] = "CLMEM_ERR_TIMEOUT",
};

/* The numbers are ABI (callers store and compare them): 0.2 appended the
 * two new ones and renumbered nothing. */
static void test_values(void)
{
    tap_is_int(CLMEM_ERR_NO_MEMORY, 10, "CLMEM_ERR_NO_MEMORY is still 10");
    tap_is_int(CLMEM_ERR_IN_USE, 11, "CLMEM_ERR_IN_USE is 11");
    tap_is_int(CLMEM_ERR_TIMEOUT, 12, "CLMEM_ERR_TIMEOUT is 12");
}

static void test_names(void)
{
    for (int s = CLMEM_OK; s <= LAST_STATUS; s++) {
        const char *got = clmem_status_name((clmem_status)s);
        tap_ok(got && strcmp(got, names[s]) == 0, "clmem_status_name(%d) is %s", s, names[s]) ||
            (tap_diag("  got %s", got ? got : "NULL"), false);
    }
    /* 13 is the first value past the end: the one a missing case would
     * fall through to; -1 is below the start. */
    for (int u = -1; u <= NSTATUS; u += NSTATUS + 1) {
        const char *got = clmem_status_name((clmem_status)u);
        tap_ok(got && strcmp(got, "CLMEM_STATUS_UNKNOWN") == 0, "clmem_status_name(%d) is CLMEM_STATUS_UNKNOWN",
               u) ||
            (tap_diag("  got %s", got ? got : "NULL"), false);
    }
}

/* One point per status, so the failing one is named: its sentence is
 * non-empty and no other status has it. */
static void test_sentences(void)
{
    const char *seen[NSTATUS];
    /* Below the start, the first value past the end (where a missing case
     * would land), and far out. */
    static const int unknown[] = {-1, NSTATUS, 1000};

    for (int s = CLMEM_OK; s <= LAST_STATUS; s++)
        seen[s] = clmem_status_str((clmem_status)s);
    for (int s = CLMEM_OK; s <= LAST_STATUS; s++) {
        int same_as = -1;
        for (int t = 0; t <= LAST_STATUS && seen[s]; t++)
            if (t != s && seen[t] && strcmp(seen[s], seen[t]) == 0)
                same_as = t;
        tap_ok(seen[s] && seen[s][0] && same_as < 0, "%s has its own non-empty sentence: %s", names[s],
               seen[s] ? seen[s] : "NULL") ||
            (tap_diag("  the same sentence as %s", same_as >= 0 ? names[same_as] : "none"), false);
    }
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = clmem_status_str((clmem_status)unknown[i]);
        bool unknown_distinct = s != NULL && s[0];
        for (int t = 0; t <= LAST_STATUS && unknown_distinct; t++)
            if (seen[t] && strcmp(s, seen[t]) == 0)
                unknown_distinct = false;
        tap_ok(unknown_distinct, "unknown value %d gets a non-empty sentence no status has", unknown[i]);
    }
}

static void test_error_record(void)
{
    clmem_error_clear();
    tap_is_int(clmem_error_status(), CLMEM_OK, "a cleared record says CLMEM_OK");
    tap_ok(strcmp(clmem_error_message(), "No error.") == 0, "a cleared record's message says so");
    tap_is_int(clmem_error_set(CLMEM_ERR_OPENCL, CLMEM_API_OPENCL, "clFoo", 999, "because %s", "reasons"),
               CLMEM_ERR_OPENCL, "clmem_error_set returns its status");
    tap_is_int(clmem_error_native_code(), 999, "the native code is kept raw, positive values too");
    tap_is_int(clmem_error_api(), CLMEM_API_OPENCL, "the API is kept");
    tap_ok(clmem_error_call() && strcmp(clmem_error_call(), "clFoo") == 0, "the failing call is kept");
    tap_ok(strstr(clmem_error_message(), "clFoo") && strstr(clmem_error_message(), "999") &&
               strstr(clmem_error_message(), "because reasons"),
           "the message names call, code and reason: %s", clmem_error_message());
}

/* Against configure.ac's version (config.h) and the header's macros, so a
 * bump that forgets one of the three fails here. */
static void test_version(void)
{
    char from_header[32];

    snprintf(from_header, sizeof from_header, "%d.%d.%d", CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR,
             CLMEM_VERSION_MICRO);
    tap_ok(strcmp(clmem_version(), PACKAGE_VERSION) == 0, "clmem_version is the package version %s (got %s)",
           PACKAGE_VERSION, clmem_version());
    tap_ok(strcmp(clmem_version(), from_header) == 0, "clmem_version matches clmem.h's CLMEM_VERSION_* (%s)",
           from_header);
}

/* CLMEM_CHECK_VERSION against an ordering of (major, minor, micro) written
 * out here, for versions before, at and after the header's. */
static void test_check_version(void)
{
    static const struct {
        int major, minor, micro;
        int checked; /* what CLMEM_CHECK_VERSION said, at compile time */
    } cases[] = {
#define CASE(a, b, c) {a, b, c, CLMEM_CHECK_VERSION(a, b, c)}
        CASE(0, 0, 0),
        CASE(0, 2, 0),
        CASE(0, 2, 99),
        CASE(0, 3, 0),
        CASE(0, 3, 1),
        CASE(0, 4, 0),
        CASE(0, 99, 0),
        CASE(1, 0, 0),
        CASE(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO),
        CASE(CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO + 1),
#undef CASE
    };
    const int have[3] = {CLMEM_VERSION_MAJOR, CLMEM_VERSION_MINOR, CLMEM_VERSION_MICRO};

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int want_v[3] = {cases[i].major, cases[i].minor, cases[i].micro};
        int cmp = 0; /* have against want, first differing part */
        for (int k = 0; k < 3 && cmp == 0; k++)
            cmp = (have[k] > want_v[k]) - (have[k] < want_v[k]);
        tap_is_int(cases[i].checked, cmp >= 0, "CLMEM_CHECK_VERSION(%d, %d, %d) is %s with the %d.%d.%d headers",
                   cases[i].major, cases[i].minor, cases[i].micro, cmp >= 0 ? "true" : "false", have[0], have[1],
                   have[2]);
    }
}

int main(void)
{
    /* values, names, sentences, record, version, CLMEM_CHECK_VERSION */
    tap_plan(3 + NSTATUS + 2 + NSTATUS + 3 + 7 + 2 + 10);
    test_values();
    test_names();
    test_sentences();
    test_error_record();
    test_version();
    test_check_version();
    return tap_done();
}
