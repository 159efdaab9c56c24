/*
 * clmem.h - pass OpenCL memory between libraries safely.
 *
 * A clmem_handle is one small immutable value: "this cl_mem, produced on
 * this cl_command_queue, with this row pitch, kept alive by this anchor".
 * Handles borrow the OpenCL objects: they never retain or release them.
 * Lifetimes are held by keepalive anchors (clmem_keepalive), thread-safe
 * reference-counted objects whose last release runs a callback exactly once.
 *
 * Every function that can fail returns a clmem_status and, on failure,
 * records the details (which native call failed, its raw code, a sentence)
 * in this thread's last-error record: see clmem_error_*() below.
 *
 * Nothing here orders the caller's enqueues relative to a consumer's
 * enqueues on the same queue, beyond what OpenCL itself does for an
 * in-order queue. A producer that hands a handle over must make sure its
 * work is enqueued (or its events are shared) before the consumer starts.
 */
#ifndef CLMEM_H
#define CLMEM_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The package version this header belongs to. */
#define CLMEM_VERSION_MAJOR 0
#define CLMEM_VERSION_MINOR 2
#define CLMEM_VERSION_MICRO 0

/* The library's version at run time, as "MAJOR.MINOR.MICRO". Static string. */
const char *clmem_version(void);

/* ---------------------------------------------------------------- status */

typedef enum clmem_status {
    CLMEM_OK = 0,
    CLMEM_ERR_NULL_POINTER = 1,     /* a required pointer or handle argument is NULL */
    CLMEM_ERR_ZERO_SIZE = 2,
    CLMEM_ERR_INVALID_VALUE = 3,    /* a value breaks its documented rule */
    CLMEM_ERR_CONTEXT_MISMATCH = 4, /* the queue's context does not own mem */
    CLMEM_ERR_NOT_A_BUFFER = 5,     /* row_pitch != 0 on a non-buffer object */
    CLMEM_ERR_OPENCL = 6,           /* an OpenCL call failed */
    CLMEM_ERR_VULKAN = 7,           /* a Vulkan call failed */
    CLMEM_ERR_UNSUPPORTED = 8,      /* a needed extension or handle type is missing */
    CLMEM_ERR_DEVICE_MISMATCH = 9,  /* the two APIs are not on the same device */
    CLMEM_ERR_NO_MEMORY = 10,
    CLMEM_ERR_IN_USE = 11,          /* handles or semaphores of the object are still alive */
    CLMEM_ERR_TIMEOUT = 12          /* device work was still pending when the timeout ran out */
} clmem_status;

/* A distinct, non-NULL English sentence for every value, unknown values
 * included. Static storage: never free it. */
const char *clmem_status_str(clmem_status s);

/* The enumerator's name, e.g. "CLMEM_ERR_ZERO_SIZE"; "CLMEM_STATUS_UNKNOWN"
 * for a value that is not one. Static storage. */
const char *clmem_status_name(clmem_status s);

/* ------------------------------------------------------------ last error */

/* Which API a native error code belongs to. */
typedef enum clmem_api {
    CLMEM_API_NONE = 0,   /* the library's own check failed; no native call */
    CLMEM_API_OPENCL = 1, /* clmem_error_native_code() is a cl_int */
    CLMEM_API_VULKAN = 2, /* clmem_error_native_code() is a VkResult */
    CLMEM_API_SYSTEM = 3  /* clmem_error_native_code() is an errno value */
} clmem_api;

/*
 * Every failing call records why in a per-thread record, like errno: read it
 * on the same thread right after a function returned something other than
 * CLMEM_OK; after a success its contents mean nothing (a call that succeeds
 * may have recorded and recovered from an inner failure). The strings are
 * owned by the library and stay valid until the next clmem call on this
 * thread.
 *
 *   clmem_error_status()      the status the failing call returned
 *   clmem_error_api()         which API the native code belongs to
 *   clmem_error_call()        the native call that failed, e.g.
 *                             "clGetMemObjectInfo(CL_MEM_CONTEXT)", or NULL
 *                             when the library's own check failed
 *   clmem_error_native_code() the raw code (cl_int, VkResult or errno),
 *                             reported as returned: NVIDIA returns 999 for a
 *                             bad fd, and that is what you get here
 *   clmem_error_message()     one sentence naming all of the above
 */
clmem_status clmem_error_status(void);
clmem_api    clmem_error_api(void);
const char  *clmem_error_call(void);
int32_t      clmem_error_native_code(void);
const char  *clmem_error_message(void);

/* Forget this thread's last error (status becomes CLMEM_OK). */
void clmem_error_clear(void);

/*
 * Record an error in this thread's record and return `status`, so a
 * function can `return clmem_error_set(...)`. For libraries layered on
 * clmem (libclmem-bridge is one) so that users read one error channel.
 * `call` must be a string with static storage (or NULL); `fmt` is a
 * printf format for the explanation, which is copied (and truncated to
 * 767 bytes).
 */
clmem_status clmem_error_set(clmem_status status, clmem_api api, const char *call,
                             int32_t native_code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---------------------------------------------------------------- anchors */

typedef struct clmem_keepalive clmem_keepalive;

/*
 * A new anchor with one reference, owned by the caller. When its last
 * reference is dropped, release(user) runs exactly once, on the thread that
 * dropped it, and the anchor is freed. release may be NULL. The anchor owns
 * nothing itself; release says how to let go. Returns NULL (and records
 * CLMEM_ERR_NO_MEMORY) when allocation fails; release is then not called.
 */
clmem_keepalive *clmem_keepalive_new(void (*release)(void *user), void *user);

/* Take one more reference: one relaxed atomic increment, no allocation.
 * Returns ka. NULL-safe (returns NULL). */
clmem_keepalive *clmem_keepalive_ref(clmem_keepalive *ka);

/* Drop one reference; the last one runs the release callback and frees the
 * anchor. NULL does nothing. */
void clmem_keepalive_unref(clmem_keepalive *ka);

/*
 * A new anchor with one reference, owned by the caller, that holds one new
 * reference on `first` and one on `then` (either may be NULL). When its last
 * reference goes it drops `first` and then `then`: chain the OpenCL side
 * before the Vulkan side so OpenCL lets go before the memory can be freed.
 * The caller keeps its own references on both. NULL on allocation failure,
 * and then no reference was taken.
 */
clmem_keepalive *clmem_keepalive_chain(clmem_keepalive *first, clmem_keepalive *then);

/*
 * A new anchor, with one reference owned by the caller, that retains `mem`
 * and `queue` (clRetainMemObject, clRetainCommandQueue). Its last release
 * releases mem and then queue. NULL on a NULL argument
 * (CLMEM_ERR_NULL_POINTER), a failed retain (CLMEM_ERR_OPENCL, nothing is
 * left retained) or allocation failure (CLMEM_ERR_NO_MEMORY).
 */
clmem_keepalive *clmem_keepalive_new_cl(cl_mem mem, cl_command_queue queue);

/* ---------------------------------------------------------------- handles */

typedef struct clmem_handle clmem_handle;

/*
 * Wrap mem and queue into a new handle with one reference, owned by the
 * caller through *out.
 *
 * Borrows: mem and queue are not retained, and dropping the handle never
 * releases them; keep them alive with an anchor (clmem_keepalive_new_cl) or
 * by other means. Takes its own reference on keepalive (which may be NULL);
 * the caller keeps its reference.
 *
 * row_pitch is the row stride in bytes of a BUFFER that holds image rows
 * that are not tightly packed; consumers index rows by it. It is 0 for image
 * objects and for tightly packed buffers. wrap does not ask OpenCL anything:
 * use clmem_handle_wrap_checked() to have these rules verified.
 *
 * Errors: CLMEM_ERR_NULL_POINTER for a NULL mem, queue or out;
 * CLMEM_ERR_NO_MEMORY. On any error *out is set to NULL (when out is not
 * NULL), nothing is allocated and no reference is taken.
 * Cost: one allocation.
 */
clmem_status clmem_handle_wrap(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                               clmem_keepalive *keepalive, clmem_handle **out);

/*
 * clmem_handle_wrap(), after asking OpenCL (a few clGet*Info calls):
 *  - are mem and queue valid objects?  if not: CLMEM_ERR_OPENCL, with the
 *    OpenCL code in clmem_error_native_code();
 *  - is the queue's context mem's context?  if not: CLMEM_ERR_CONTEXT_MISMATCH;
 *  - is a non-zero row_pitch on a buffer?  if not: CLMEM_ERR_NOT_A_BUFFER;
 *  - does row_pitch fit inside the buffer?  if not: CLMEM_ERR_INVALID_VALUE.
 * Same ownership and error rules as clmem_handle_wrap().
 */
clmem_status clmem_handle_wrap_checked(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                                       clmem_keepalive *keepalive, clmem_handle **out);

/* One more reference to h: one relaxed atomic increment, no allocation.
 * Returns h; NULL-safe. Any thread may ref, unref and read concurrently. */
clmem_handle *clmem_handle_ref(clmem_handle *h);

/* Drop one reference. The last one frees the handle and then drops its
 * keepalive reference (which may run the anchor's release). NULL-safe. */
void clmem_handle_unref(clmem_handle *h);

/* Accessors. All borrowed; NULL (or 0) for a NULL handle. */
cl_mem           clmem_handle_mem(const clmem_handle *h);
cl_command_queue clmem_handle_queue(const clmem_handle *h);
uint32_t         clmem_handle_row_pitch(const clmem_handle *h);
clmem_keepalive *clmem_handle_keepalive(const clmem_handle *h); /* borrowed; NULL if none */

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_H */
