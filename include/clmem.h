/**
 * @file clmem.h
 * @brief clmem.h - pass OpenCL memory between libraries safely.
 *
 * A clmem_handle is one small immutable value: "this cl_mem, produced on
 * this cl_command_queue, with this row pitch, kept alive by this anchor".
 * Handles borrow the OpenCL objects: they never retain or release them.
 * Lifetimes are held by keepalive anchors (clmem_keepalive), thread-safe
 * reference-counted objects whose last release runs a callback exactly once.
 *
 * Every function that can fail returns a clmem_status and, on failure,
 * records the details (which native call failed, its raw code, a sentence)
 * in this thread's last-error record: see clmem_error_status() and the
 * other clmem_error_*() functions.
 *
 * Nothing here orders the caller's enqueues relative to a consumer's
 * enqueues on the same queue, beyond what OpenCL itself does for an
 * in-order queue. A producer that hands a handle over must make sure its
 * work is enqueued (or its events are shared) before the consumer starts.
 *
 * Threads: any function may be called from any thread. An anchor's release
 * callback runs on the thread that drops the anchor's last reference.
 *
 * Misuse of a reference-counted object (a handle, an anchor, and
 * libclmem-bridge's bridge, semaphore and ring) stops the program where it
 * happens: each object carries a mark of its type beside its count, and
 * an unref of an object whose count is already zero or whose mark is gone
 * (an unref too many, a use after the last unref, a pointer that never was
 * such an object, or an object of another kind) prints one line on stderr
 * naming the call and the object, and calls abort(), before anything is
 * written. The ref, the getters and the functions that take the object
 * check the mark too. That catches an unref too many as long as the freed
 * memory was not handed out again. With CLMEM_CHECK=1 in the environment
 * (read at the first free of each kind), a freed object is also poisoned
 * and held back behind the last 1024 of its kind before its memory is
 * freed, so a use after the last unref is caught even when other objects
 * were allocated meanwhile; it costs that memory and nothing on the hot
 * paths.
 * What no check can catch: a pointer into memory that is no longer mapped
 * (a segmentation fault), and a released OpenCL object handed to OpenCL.
 *
 * Every function here is part of libclmem's 0.2 ABI (symbol version
 * CLMEM_0.2, which replaced 0.1's), hence `@since 0.2`; the one later
 * addition is the macro CLMEM_CHECK_VERSION() (`@since 0.3`), for a
 * program to ask at compile time whether the header it builds with is
 * new enough. The overview is clmem(7).
 */
#ifndef CLMEM_H
#define CLMEM_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL version <CL/cl.h> is asked to target: 3.0, unless the
 *  application defined it before including this header.
 *  @since 0.2 */
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The major part of the package version this header belongs to.
 *  @since 0.2 */
#define CLMEM_VERSION_MAJOR 0
/** The minor part of the package version this header belongs to.
 *  @since 0.2 */
#define CLMEM_VERSION_MINOR 3
/** The micro part of the package version this header belongs to.
 *  @since 0.2 */
#define CLMEM_VERSION_MICRO 0

/**
 * True when the clmem headers a program is built with are version
 * major.minor.micro or later, as GLIB_CHECK_VERSION and XKB_CHECK_VERSION
 * are: an integer constant expression, usable in `#if`. A program that
 * needs a call added in a later version tests for that version:
 *
 * @code
 * #if CLMEM_CHECK_VERSION(0, 3, 0)
 *     clmem_bridge_best_memory(b, &path, &props, &export_types);
 * #else
 *     path = CLMEM_BRIDGE_PATH_BEST;
 * #endif
 * @endcode
 *
 * It tells the headers' version, at compile time; the library a program
 * runs with may be newer (clmem_version() says which). Each call's
 * `@since` says which version added it.
 * @since 0.3
 */
#define CLMEM_CHECK_VERSION(major, minor, micro)                           \
    (CLMEM_VERSION_MAJOR > (major) ||                                      \
     (CLMEM_VERSION_MAJOR == (major) && CLMEM_VERSION_MINOR > (minor)) ||  \
     (CLMEM_VERSION_MAJOR == (major) && CLMEM_VERSION_MINOR == (minor) &&  \
      CLMEM_VERSION_MICRO >= (micro)))

/**
 * The library's version at run time.
 *
 * @return "MAJOR.MINOR.MICRO", a static string owned by the library: never
 *         free it.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
const char *clmem_version(void);

/* ---------------------------------------------------------------- status */

/**
 * What a clmem function returns: CLMEM_OK or why it failed. The details of
 * a failure are in this thread's last-error record (clmem_error_message()).
 * @since 0.2
 */
typedef enum clmem_status {
    CLMEM_OK = 0,                   /**< Success. */
    CLMEM_ERR_NULL_POINTER = 1,     /**< A required pointer or handle argument is NULL. */
    CLMEM_ERR_ZERO_SIZE = 2,        /**< The size is zero. */
    CLMEM_ERR_INVALID_VALUE = 3,    /**< A value breaks its documented rule. */
    CLMEM_ERR_CONTEXT_MISMATCH = 4, /**< The queue's context does not own mem. */
    CLMEM_ERR_NOT_A_BUFFER = 5,     /**< row_pitch != 0 on a non-buffer object. */
    CLMEM_ERR_OPENCL = 6,           /**< An OpenCL call failed. */
    CLMEM_ERR_VULKAN = 7,           /**< A Vulkan call failed. */
    CLMEM_ERR_UNSUPPORTED = 8,      /**< A needed extension or handle type is missing. */
    CLMEM_ERR_DEVICE_MISMATCH = 9,  /**< The two APIs are not on the same device. */
    CLMEM_ERR_NO_MEMORY = 10,       /**< An allocation failed. */
    CLMEM_ERR_IN_USE = 11,          /**< Handles or semaphores of the object are still alive. */
    CLMEM_ERR_TIMEOUT = 12          /**< Device work was still pending when the timeout ran out. */
} clmem_status;

/**
 * A sentence saying what a status means.
 *
 * @param s Any value, a clmem_status or not.
 * @return A distinct, non-NULL English sentence for every value, unknown
 *         values included ("Unknown clmem status value."). Static storage:
 *         never free it.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
const char *clmem_status_str(clmem_status s);

/**
 * The enumerator's name of a status.
 *
 * @param s Any value, a clmem_status or not.
 * @return The name, e.g. "CLMEM_ERR_ZERO_SIZE"; "CLMEM_STATUS_UNKNOWN" for
 *         a value that is not one. Static storage: never free it.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
const char *clmem_status_name(clmem_status s);

/* ------------------------------------------------------------ last error */

/**
 * Which API a native error code belongs to (clmem_error_api()).
 * @since 0.2
 */
typedef enum clmem_api {
    CLMEM_API_NONE = 0,   /**< The library's own check failed; no native call. */
    CLMEM_API_OPENCL = 1, /**< clmem_error_native_code() is a cl_int. */
    CLMEM_API_VULKAN = 2, /**< clmem_error_native_code() is a VkResult. */
    CLMEM_API_SYSTEM = 3  /**< clmem_error_native_code() is an errno value. */
} clmem_api;

/**
 * The status the failing call returned.
 *
 * Every failing call records why in a per-thread record, like errno: read
 * it on the same thread right after a function returned something other
 * than CLMEM_OK; after a success its contents mean nothing (a call that
 * succeeds may have recorded and recovered from an inner failure). The
 * strings of the record are owned by the library and stay valid until the
 * next clmem call on this thread.
 *
 * @return The status of the last failure recorded on this thread;
 *         CLMEM_OK if none was, or after clmem_error_clear().
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_status clmem_error_status(void);

/**
 * Which API the native code of this thread's last error belongs to.
 *
 * @return CLMEM_API_NONE when the library's own check failed, else the API
 *         of clmem_error_native_code(). See clmem_error_status() for when
 *         the record means something.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_api clmem_error_api(void);

/**
 * The native call that failed.
 *
 * @return The call, e.g. "clGetMemObjectInfo(CL_MEM_CONTEXT)", or NULL when
 *         the library's own check failed. Owned by the library: valid until
 *         the next clmem call on this thread. See clmem_error_status() for
 *         when the record means something.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
const char *clmem_error_call(void);

/**
 * The raw code the failing native call returned.
 *
 * @return The code (a cl_int, VkResult or errno value: clmem_error_api()
 *         says which), reported as returned: NVIDIA returns 999 for a bad
 *         fd, and that is what you get here. The library records 0 when
 *         its own check failed.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
int32_t clmem_error_native_code(void);

/**
 * One sentence naming all of this thread's last error: the call, the raw
 * code by its name and number, and the explanation, as in
 * "vkMapMemory failed with VK_ERROR_MEMORY_MAP_FAILED (-5): ..." or
 * "clGetMemObjectInfo(CL_MEM_CONTEXT) failed with CL_INVALID_MEM_OBJECT
 * (-38): ...". A code its API's headers do not name keeps its number
 * ("OpenCL code 999"); an errno value reads "EMFILE (errno 24)".
 *
 * @return The sentence, at most 2367 bytes (the explanation's 2047, after
 *         at most 160 of call name and the words around the code); "No
 *         error." when the record holds CLMEM_OK. Owned by the library:
 *         valid until the next clmem call on this thread.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
const char *clmem_error_message(void);

/**
 * Forget this thread's last error: its status becomes CLMEM_OK.
 *
 * @par Blocks
 *      Never.
 * @since 0.2
 */
void clmem_error_clear(void);

/**
 * Record an error in this thread's record and return `status`, so a
 * function can `return clmem_error_set(...)`.
 *
 * For libraries layered on clmem (libclmem-bridge is one) so that users
 * read one error channel.
 *
 * @param status      The status to record, and to return.
 * @param api         Which API native_code belongs to (CLMEM_API_NONE for
 *                    the caller's own check).
 * @param call        The native call that failed: a string with static
 *                    storage (the record keeps the pointer), or NULL.
 * @param native_code The call's raw code, as it returned it.
 * @param fmt         A printf format for the explanation, which is copied
 *                    (and truncated to 2047 bytes: put the reason that
 *                    matters first); NULL for none: the
 *                    message then names only the call, or, without one, is
 *                    clmem_status_str(status).
 * @param ...         The format's arguments.
 * @return `status`, always.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_status clmem_error_set(clmem_status status, clmem_api api, const char *call,
                             int32_t native_code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---------------------------------------------------------------- anchors */

/**
 * A keepalive anchor: a thread-safe reference-counted object whose last
 * release runs a callback exactly once, then frees the anchor. Opaque.
 * @since 0.2
 */
typedef struct clmem_keepalive clmem_keepalive;

/**
 * A new anchor with one reference, owned by the caller.
 *
 * When its last reference is dropped, release(user) runs exactly once, on
 * the thread that dropped it, and the anchor is freed. The anchor owns
 * nothing itself; release says how to let go.
 *
 * @param release The callback, or NULL for none.
 * @param user    What release is called with.
 * @return The anchor; NULL (with CLMEM_ERR_NO_MEMORY recorded) when
 *         allocation fails, and release is then not called.
 * @par Threads
 *      release runs on whichever thread drops the last reference; for an
 *      anchor given to libclmem-bridge, that can be an OpenCL driver
 *      thread, inside an OpenCL callback: clmem-bridge.h says which
 *      calls release may then make.
 * @par Blocks
 *      Never (one allocation).
 * @since 0.2
 */
clmem_keepalive *clmem_keepalive_new(void (*release)(void *user), void *user);

/**
 * Take one more reference: one relaxed atomic increment, no allocation.
 *
 * @param ka The anchor, or NULL.
 * @return ka (NULL for NULL). The new reference is the caller's.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_keepalive *clmem_keepalive_ref(clmem_keepalive *ka);

/**
 * Drop one reference; the last one runs the release callback and frees
 * the anchor.
 *
 * @param ka The anchor, or NULL (which does nothing). An unref too many,
 *           or one from inside ka's own release callback, aborts with one
 *           line naming this call (see "Misuse" at the top).
 * @par Threads
 *      When this is the last reference, the callback runs here, on the
 *      calling thread.
 * @par Blocks
 *      Only as long as the callback does, when this is the last reference.
 * @since 0.2
 */
void clmem_keepalive_unref(clmem_keepalive *ka);

/**
 * A new anchor, with one reference owned by the caller, that holds one new
 * reference on `first` and one on `then`.
 *
 * When its last reference goes it drops `first` and then `then`: chain the
 * OpenCL side before the Vulkan side so OpenCL lets go before the memory
 * can be freed. The caller keeps its own references on both.
 *
 * @param first Dropped first; may be NULL.
 * @param then  Dropped second; may be NULL.
 * @return The anchor; NULL on allocation failure (CLMEM_ERR_NO_MEMORY
 *         recorded), and then no reference was taken.
 * @par Threads
 *      first's and then's callbacks, when these were their last
 *      references, run on the thread that drops this anchor's last
 *      reference.
 * @par Blocks
 *      Never (one allocation).
 * @since 0.2
 */
clmem_keepalive *clmem_keepalive_chain(clmem_keepalive *first, clmem_keepalive *then);

/**
 * A new anchor, with one reference owned by the caller, that retains `mem`
 * and `queue` (clRetainMemObject, clRetainCommandQueue).
 *
 * Its last release releases mem and then queue (clReleaseMemObject,
 * clReleaseCommandQueue), on the thread that drops it.
 *
 * @param mem   The memory object to retain.
 * @param queue The queue to retain.
 * @return The anchor, or NULL with the status recorded:
 *         CLMEM_ERR_NULL_POINTER for a NULL argument; CLMEM_ERR_OPENCL for a
 *         failed retain (with the OpenCL code; nothing is left retained);
 *         CLMEM_ERR_NO_MEMORY for an allocation failure.
 * @par Blocks
 *      On the two retains (driver calls that wait for no device work).
 * @since 0.2
 */
clmem_keepalive *clmem_keepalive_new_cl(cl_mem mem, cl_command_queue queue);

/* ---------------------------------------------------------------- handles */

/**
 * One immutable, reference-counted value: a cl_mem, the queue it was
 * produced on, its row pitch, and the anchor that keeps it alive. Opaque;
 * any thread may ref, unref and read it concurrently.
 *
 * What a consumer reads from a handle, to compute the arguments of a BLAS
 * or FFT call:
 *  - The data starts at byte 0 of clmem_handle_mem(): a handle has no
 *    offset, so a consumer passes offset 0 (in elements too). A producer
 *    that shares part of a buffer hands over a sub-buffer of that part;
 *    libclmem-bridge always does (a handle of an import of [offset, +size)
 *    carries a cl_mem of exactly those bytes).
 *  - The row pitch, when not 0, is a multiple of the element size for the
 *    element type the producer documents, so that row_pitch / element size
 *    is the leading dimension in elements. Every handle libclmem-bridge
 *    makes keeps this for the texel size of its format
 *    (clmem_bridge_image_plane_format()); clmem_handle_wrap() knows no
 *    element size and does not check it, so a producer that wraps keeps
 *    it itself.
 * @since 0.2
 */
typedef struct clmem_handle clmem_handle;

/**
 * Wrap mem and queue into a new handle with one reference, owned by the
 * caller through *out.
 *
 * Borrows: mem and queue are not retained, and dropping the handle never
 * releases them; keep them alive with an anchor (clmem_keepalive_new_cl())
 * or by other means. Takes its own reference on keepalive (which may be
 * NULL); the caller keeps its reference.
 *
 * row_pitch is the row stride in bytes of a BUFFER that holds image rows
 * that are not tightly packed; consumers index rows by it. It is 0 for image
 * objects and for tightly packed buffers. wrap does not ask OpenCL anything:
 * use clmem_handle_wrap_checked() to have these rules verified.
 *
 * @param mem       The memory object (borrowed).
 * @param queue     The queue mem was produced on (borrowed).
 * @param row_pitch The row stride in bytes of a buffer holding rows; 0 for
 *                  images and tightly packed buffers.
 * @param keepalive The anchor that keeps mem and queue alive, or NULL; the
 *                  handle takes its own reference.
 * @param[out] out  The new handle, one reference, the caller's.
 * @retval CLMEM_OK               *out is the handle.
 * @retval CLMEM_ERR_NULL_POINTER mem, queue or out is NULL.
 * @retval CLMEM_ERR_NO_MEMORY    The allocation failed.
 * @par On error
 *      *out is set to NULL (when out is not NULL), nothing is allocated
 *      and no reference is taken.
 * @par Blocks
 *      Never. Cost: one allocation of 64 bytes (a cache line), so that
 *      two handles' reference counts never share a line.
 * @since 0.2
 */
clmem_status clmem_handle_wrap(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                               clmem_keepalive *keepalive, clmem_handle **out);

/**
 * clmem_handle_wrap(), after asking OpenCL (a few clGet*Info calls) whether
 * the arguments make sense together.
 *
 * It asks OpenCL: does mem answer as a memory object (its context, and a
 * CL_MEM_TYPE that is a memory object's) and queue as a command queue (its
 * context, and a CL_QUEUE_DEVICE that is one of that context's devices)?
 * is the queue's context mem's context? is a non-zero row_pitch on a
 * buffer? does row_pitch fit inside the buffer? Same ownership and error
 * rules as clmem_handle_wrap().
 *
 * What it cannot tell: whether mem and queue are still alive. Asking
 * OpenCL about an object that was released is undefined behaviour; the
 * ICD loader reads the freed object to find its driver, and crashes
 * there, before the library can say anything. Keep the objects alive (an
 * anchor: clmem_keepalive_new_cl()). A driver that answers queries on
 * objects of another kind (PoCL answers CL_SUCCESS when a queue is asked
 * as a memory object) is caught by the type and device cross-checks above,
 * with CLMEM_ERR_INVALID_VALUE.
 *
 * @param mem       The memory object (borrowed).
 * @param queue     The queue mem was produced on (borrowed).
 * @param row_pitch As for clmem_handle_wrap().
 * @param keepalive As for clmem_handle_wrap().
 * @param[out] out  The new handle, one reference, the caller's.
 * @retval CLMEM_OK                   *out is the handle.
 * @retval CLMEM_ERR_NULL_POINTER     mem, queue or out is NULL.
 * @retval CLMEM_ERR_OPENCL           The driver refused a query: mem or
 *                                    queue is not an object of its kind
 *                                    (the usual answer to the wrong kind of
 *                                    object), or a query failed; with the
 *                                    OpenCL code in
 *                                    clmem_error_native_code().
 * @retval CLMEM_ERR_CONTEXT_MISMATCH The queue's context is not mem's.
 * @retval CLMEM_ERR_NOT_A_BUFFER     row_pitch is not 0 and mem is not a
 *                                    buffer.
 * @retval CLMEM_ERR_INVALID_VALUE    row_pitch is larger than the buffer;
 *                                    or the driver answered the queries but
 *                                    the answers show mem is no memory
 *                                    object, or queue no command queue.
 * @retval CLMEM_ERR_NO_MEMORY        The allocation failed.
 * @par On error
 *      *out is set to NULL (when out is not NULL), nothing is allocated
 *      and no reference is taken.
 * @par Blocks
 *      On the clGetMemObjectInfo and clGetCommandQueueInfo driver queries.
 * @since 0.2
 */
clmem_status clmem_handle_wrap_checked(cl_mem mem, cl_command_queue queue, uint32_t row_pitch,
                                       clmem_keepalive *keepalive, clmem_handle **out);

/**
 * One more reference to h: one relaxed atomic increment, no allocation.
 * Any thread may ref, unref and read concurrently.
 *
 * @param h The handle, or NULL.
 * @return h (NULL for NULL). The new reference is the caller's.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_handle *clmem_handle_ref(clmem_handle *h);

/**
 * Drop one reference. The last one frees the handle and then drops its
 * keepalive reference (which may run the anchor's release).
 *
 * @param h The handle, or NULL (which does nothing). An unref too many
 *          aborts with one line naming this call, where glibc would
 *          otherwise report a corrupt heap much later (see "Misuse" at the
 *          top).
 * @par Threads
 *      An anchor's release run by this call runs on the calling thread.
 *      (For a handle from libclmem-bridge the import's anchor outlives the
 *      handle: see clmem_bridge_import_vk() for when and where its
 *      keepalive is dropped.)
 * @par Blocks
 *      Only as long as an anchor release it runs does.
 * @since 0.2
 */
void clmem_handle_unref(clmem_handle *h);

/**
 * The handle's memory object.
 *
 * @param h The handle, or NULL.
 * @return The cl_mem, borrowed (the handle holds no reference on it), whose
 *         byte 0 is the data's first byte (see clmem_handle); NULL for a
 *         NULL handle.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
cl_mem clmem_handle_mem(const clmem_handle *h);

/**
 * The queue the handle's memory was produced on.
 *
 * @param h The handle, or NULL.
 * @return The cl_command_queue, borrowed; NULL for a NULL handle.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
cl_command_queue clmem_handle_queue(const clmem_handle *h);

/**
 * The handle's row pitch.
 *
 * @param h The handle, or NULL.
 * @return The row stride in bytes given at wrap (a multiple of the
 *         element size, and 0 for packed data and images: see
 *         clmem_handle); 0 for a NULL handle.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
uint32_t clmem_handle_row_pitch(const clmem_handle *h);

/**
 * The handle's anchor.
 *
 * @param h The handle, or NULL.
 * @return The anchor, borrowed: take a reference with clmem_keepalive_ref()
 *         to keep what it holds alive beyond the handle. NULL if the handle
 *         has none, or for a NULL handle.
 * @par Blocks
 *      Never.
 * @since 0.2
 */
clmem_keepalive *clmem_handle_keepalive(const clmem_handle *h);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_H */
