/* SPDX-License-Identifier: MIT */
/**
 * @file clmem.h
 * @brief clmem.h - pass OpenCL memory between libraries safely.
 *
 * libclmem's header (@ref libclmem): the handle, the anchors that hold
 * lifetimes, statuses and the last-error record, the version. It needs
 * OpenCL only. The reference starts at the @ref index "main page"; the
 * rules that hold across calls are its pages (@ref errors, @ref threads,
 * @ref misuse, @ref versioning here; @ref lifetime and @ref vulkan_sync in
 * clmem-bridge.h).
 */

/**
 * @mainpage clmem
 *
 * clmem passes GPU memory between libraries, between Vulkan and OpenCL,
 * and between processes, without copying it. It is four libraries, each
 * with its own header and pkg-config module:
 *
 * | library | header | pkg-config | what it does |
 * |---|---|---|---|
 * | @ref libclmem "libclmem" | clmem.h | `clmem` | The handle: "this cl_mem, produced on this queue, with this row pitch, kept alive by this anchor"; anchors, statuses and the last-error record. OpenCL only. |
 * | @ref libclmem_bridge "libclmem-bridge" | clmem-bridge.h | `clmem-bridge` | Imports Vulkan memory into OpenCL (opaque fd, dma-buf, or host-mapped where those are missing), hands it back and forth, imports semaphores, keeps frames in flight, and frees Vulkan memory only once OpenCL is done with it. |
 * | @ref libclmem_av "libclmem-av" | clmem-av.h | `clmem-av` | FFmpeg's Vulkan frames into OpenCL, one handle per plane. |
 * | @ref libclmem_ipc "libclmem-ipc" | clmem-ipc.h | `clmem-ipc` | Frames that one process writes with Vulkan, handed to OpenCL in another process. |
 *
 * The rules that hold across calls are written once each, on these pages,
 * and the calls they govern link to them:
 *  - @ref lifetime : handles borrow, anchors hold; an import's teardown;
 *    where a keepalive's callback runs; what to do before vkDestroyDevice
 *    and clReleaseContext.
 *  - @ref errors : statuses, the last-error record, NULL arguments, and
 *    which error wins when a call has two faults.
 *  - @ref threads : which calls may run concurrently, what "Blocks" means,
 *    the library's own thread.
 *  - @ref versioning : versions at compile time and at run time, symbol
 *    versions, and structs that carry their size.
 *  - @ref vulkan_sync : the barriers Vulkan records around a handoff, and
 *    what orders the two APIs' work.
 *  - @ref misuse : what is caught at the call, and CLMEM_CHECK=1.
 *
 * Each function's comment says what it returns for each error, who owns
 * what afterwards, whether it blocks and on what, and on which thread its
 * callbacks run. The manual pages clmem(7) and clmem-ipc(7) give the
 * overview, clmem-info(1) and clmem-bench(1) the tools. In the source
 * tree, README.md says how to build and install, docs/guide.md walks
 * through each library with complete programs, docs/performance.md gives
 * what was measured and docs/driver-notes.md what the drivers were found
 * to do.
 */

/**
 * @page errors Errors and the order of checks
 *
 * @section errors_status Statuses and the last-error record
 * Every function that can fail returns a ::clmem_status: CLMEM_OK, or the
 * reason class of the failure. clmem_status_name() gives its enumerator's
 * name, clmem_status_str() a sentence. The details of the failure are in
 * this thread's last-error record, read like errno, on the same thread,
 * right after the call returned something other than CLMEM_OK:
 *  - clmem_error_call(): the native call that failed, or NULL when the
 *    library's own check failed;
 *  - clmem_error_native_code(): its raw code as the driver returned it (a
 *    cl_int, a VkResult or an errno value: clmem_error_api() says which),
 *    including codes no header defines;
 *  - clmem_error_message(): one sentence naming all of it, the code by its
 *    name and number ("vkMapMemory failed with VK_ERROR_MEMORY_MAP_FAILED
 *    (-5): ..."), with the reason that applies to this machine first.
 *
 * The sentence begins with the clmem function that failed, once, so that
 * a chain of calls (`if (a() != CLMEM_OK || b() != CLMEM_OK)`) still says
 * which one it was:
 *  - "clmem_x: sentence" where the library's own check refused the call:
 *    "clmem_handle_wrap: mem is NULL.";
 *  - "clmem_x: nativeCall failed with CODE (n): sentence" where a native
 *    call failed: "clmem_bridge_import_vk: vkMapMemory failed with
 *    VK_ERROR_MEMORY_MAP_FAILED (-5): ...".
 * A clmem function that failed inside another keeps its own name after the
 * outer one's ("clmem_av_frame_import: clmem_keepalive_new: ..."). A
 * duration is given in the unit a caller writes it ("within 200 ms",
 * "after 10 s").
 *
 * After a success the record means nothing (a call may recover from an
 * inner failure). Libraries layered on clmem report through the same
 * record with clmem_error_set().
 *
 * @section errors_on_error What a failed call leaves behind
 * Nothing, unless its "On error" paragraph says otherwise: no allocation,
 * no reference, no open fd, no enqueued command, and an out-parameter set
 * to NULL (or zeroed). Bad input gets a status and a sentence; misuse of
 * a reference-counted object stops the program instead (@ref misuse).
 *
 * @section errors_null NULL arguments
 * A NULL where a function needs an object, an array or an out-pointer gets
 * CLMEM_ERR_NULL_POINTER, naming the argument, in every function that
 * returns a ::clmem_status. Functions that return a value rather than a
 * status give a NULL object their "none" value (NULL, 0, VK_NULL_HANDLE),
 * and the _unref and _destroy functions do nothing with NULL. A non-NULL
 * pointer that is not what it should be (a handle that did not come from
 * the bridge) is CLMEM_ERR_INVALID_VALUE.
 *
 * @section errors_order Which error wins
 * A call of libclmem-bridge checks its arguments in this order and
 * returns the first failure:
 *  1. NULL arguments (CLMEM_ERR_NULL_POINTER);
 *  2. each argument on its own, as the library knows it whatever the
 *     bridge: sizes (CLMEM_ERR_ZERO_SIZE), unknown enum values and flag
 *     bits, ranges and descriptions that contradict themselves
 *     (CLMEM_ERR_INVALID_VALUE), and a VkFormat that the bridge never
 *     shares, or never with that tiling (CLMEM_ERR_UNSUPPORTED: the
 *     format table, not the device, says so);
 *  3. whether the objects belong together: a queue of another context
 *     (CLMEM_ERR_CONTEXT_MISMATCH, or CLMEM_ERR_OPENCL when it is not a
 *     queue at all), memory of another VkDevice
 *     (CLMEM_ERR_DEVICE_MISMATCH), a handle of another bridge
 *     (CLMEM_ERR_INVALID_VALUE);
 *  4. what this bridge's pair can do: CLMEM_ERR_UNSUPPORTED,
 *     CLMEM_ERR_DEVICE_MISMATCH for an fd path on a pair whose device
 *     UUIDs differ, and CLMEM_ERR_INVALID_VALUE for the device's own
 *     rules (CL_DEVICE_MEM_BASE_ADDR_ALIGN);
 *  5. the driver calls themselves (CLMEM_ERR_OPENCL, CLMEM_ERR_VULKAN,
 *     CLMEM_ERR_NO_MEMORY), and the state of the objects (an import
 *     already acquired).
 *
 * Within one step the order is the function's own. The one exception is a
 * versioned struct's `size`, checked before its other fields since it says
 * which of them may be read (@ref versioned_structs). So another context's
 * queue is always CLMEM_ERR_CONTEXT_MISMATCH, whatever the device lacks.
 */

/**
 * @page threads Threads and blocking
 *
 * @section threads_any Any thread
 * Any function may be called from any thread, except where its "Threads"
 * paragraph limits it: a frame ring has one producer and one consumer
 * (clmem_bridge_ring), a clmem_ipc_producer and a clmem_ipc_consumer run
 * one call at a time, two handoffs of one import must not race, and calls
 * that submit to a VkQueue (host-ordered semaphores, a ring's producer
 * calls, clmem_bridge_image_live_check(), libclmem-av's device order) are
 * made where vkQueueSubmit on that queue could be, as Vulkan's external
 * synchronisation asks. Handles are immutable: any thread may ref, unref
 * and read one concurrently. The last-error record is per thread
 * (@ref errors).
 *
 * Nothing orders a producer's enqueues against a consumer's on the same
 * queue beyond what OpenCL does for an in-order queue: a producer that
 * hands a handle over must have enqueued its work, or shared its events,
 * first.
 *
 * @section threads_blocks What "Blocks" says
 * Each function's "Blocks" paragraph says on what it can wait. "Never"
 * means it waits for no device work and for no other call to finish (it
 * may take a lock that other calls hold only briefly); those are the
 * functions a keepalive's callback may call (@ref lifetime_callbacks).
 * A call that only enqueues (the handoffs: clmem_bridge_acquire() and the
 * others) waits for nothing of the library's, but the driver's enqueue
 * itself may block: some drivers do not return from an acquire or release
 * of external memory, or from a semaphore signal, while earlier commands
 * on the queue wait on a user event that is not complete (NVIDIA's 580
 * does so; a kernel that is merely running holds none of them:
 * docs/driver-notes.md). Do not make such a call while a user event on the
 * queue waits for this thread.
 *
 * @section threads_teardown The library's own thread
 * libclmem-bridge makes one thread per process, with the first bridge,
 * with every signal blocked, and joins it when the library is unloaded or
 * the process exits. The last clmem_handle_unref() of an import hands the
 * import to it, and it enqueues the teardown's markers (@ref
 * lifetime_teardown), so that the unref costs the same whatever the
 * number of queues. Where the thread cannot be made, the unref enqueues
 * them itself. After fork() the child makes its own thread when it needs
 * one. A clmem_ipc_consumer makes one thread of its own, joined by
 * clmem_ipc_consumer_destroy(). Nothing else makes threads.
 */

/**
 * @page misuse Misuse
 *
 * Misuse of a reference-counted object (a handle, an anchor, and
 * libclmem-bridge's bridge, semaphore and ring) stops the program where it
 * happens. Each object carries a mark of its type beside its count. An
 * unref of an object whose count is already zero or whose mark is gone (an
 * unref too many, a use after the last unref, a pointer that never was
 * such an object, or an object of another kind), or an unref of an anchor
 * from inside its own release callback, prints one line on stderr naming
 * the call and the object, and calls abort(), before anything is written.
 * The ref, the getters and the functions that take the object check the
 * mark too.
 *
 * That catches an unref too many as long as the freed memory was not
 * handed out again. With `CLMEM_CHECK=1` in the environment (any value but
 * empty or 0, read at the first free of each kind), a freed object is also
 * poisoned and held back behind the last 1024 of its kind before its
 * memory is freed, so that a use after the last unref is caught even when
 * other objects were allocated meanwhile. It costs that memory and nothing
 * on the paths that take or drop a reference.
 *
 * What no check can catch: a pointer into memory that is no longer mapped
 * (a segmentation fault), and a released OpenCL object handed to OpenCL
 * (the ICD loader reads the freed object, and crashes, before the library
 * can ask anything; clmem_handle_wrap_checked() cannot tell one either).
 *
 * Misuse that can be told from the arguments is an error, not an abort: a
 * handle of another bridge, a frame of a ring handed over outside it, a
 * second acquire: @ref errors.
 */

/**
 * @page versioning Versions and versioned structs
 *
 * @section versioning_compile Which version, at compile time and at run time
 * CLMEM_CHECK_VERSION() tells at compile time whether the headers a program
 * builds with are a given version or later; clmem_version() tells which
 * library the program runs with, which may be newer. Each declaration's
 * `@since` names the version that added it, which is also its symbol
 * version node:
 *  - libclmem: CLMEM_0.2 holds every function (0.2 replaced 0.1's ABI);
 *    CLMEM_CHECK_VERSION() is a macro of 0.3.
 *  - libclmem-bridge: CLMEM_BRIDGE_0.2 holds every function but four;
 *    CLMEM_BRIDGE_0.3 holds clmem_bridge_device_extensions(),
 *    clmem_bridge_best_memory(), clmem_bridge_import_vk_pitched() and
 *    clmem_bridge_device_finish().
 *  - libclmem-av: CLMEM_AV_0.2 holds the bridge, frames context and frame
 *    calls; CLMEM_AV_0.3 the sync object (clmem_av_sync_create() and the
 *    others) and clmem_av_order_name().
 *  - libclmem-ipc: CLMEM_IPC_0.3 holds every function.
 *
 * A program that needs a call of 0.3 tests `#if CLMEM_CHECK_VERSION(0, 3,
 * 0)`. The libraries' libtool version and sonames are given per release in
 * the source tree's NEWS.
 *
 * @section versioning_together The libraries of one release go together
 * libclmem-bridge, libclmem-av and libclmem-ipc share internals with
 * libclmem, so each works only with the libclmem of its own release, and
 * libclmem-av and libclmem-ipc only with that release's libclmem-bridge.
 * Their pkg-config modules require exactly that version (for 0.3.0,
 * `clmem = 0.3.0`). At run time libclmem exports these internals under a
 * symbol version named after its exact release (`CLMEM_PRIVATE_0.3.0`),
 * which the other libraries record that they need: a program whose
 * libclmem is of another release does not start, and the dynamic linker
 * says why: version CLMEM_PRIVATE_0.3.0 not found, required by
 * libclmem-bridge.so.2. Install and upgrade the four libraries together.
 *
 * @section versioned_structs Versioned structs
 * A struct with a `size` field (clmem_bridge_info, clmem_bridge_ring_info,
 * clmem_ipc_producer_info, clmem_ipc_consumer_info) may grow: set `size`
 * to sizeof the struct of the header you build with.
 *  - A smaller size (an older header) means the fields past it are absent
 *    and read as zero; below the struct's first version it is
 *    CLMEM_ERR_INVALID_VALUE.
 *  - A larger size (a newer header than the library) is accepted when every
 *    byte past this library's struct is zero: fields a newer header added
 *    and left zero ask for nothing. A non-zero byte there asks for
 *    something this library does not know, and gets CLMEM_ERR_UNSUPPORTED
 *    naming the byte, rather than being ignored.
 *  - A size above 4096 bytes is no struct's and gets
 *    CLMEM_ERR_INVALID_VALUE (an uninitialised field).
 *
 * Fields are added at the end only, never in the tail padding. The size is
 * checked before every other field (@ref errors_order). Structs without a
 * size field are frozen: a future field comes with a new struct and new
 * functions.
 */

/**
 * @defgroup libclmem libclmem
 * @brief The handle, the anchors, statuses and the last-error record.
 *
 * A ::clmem_handle is one small immutable value: "this cl_mem, produced on
 * this cl_command_queue, with this row pitch, kept alive by this anchor".
 * Handles borrow the OpenCL objects: they never retain or release them.
 * Lifetimes are held by anchors (::clmem_keepalive), thread-safe
 * reference-counted objects whose last release runs a callback exactly
 * once (@ref lifetime_borrow). Every function that can fail returns a
 * ::clmem_status and records why in this thread's last-error record
 * (@ref errors). clmem(7) is the overview.
 */
#ifndef CLMEM_H
#define CLMEM_H

/**
 * @defgroup core_version Versions
 * @ingroup libclmem
 * @brief Which clmem a program is built with and runs with (@ref versioning).
 */

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL version <CL/cl.h> is asked to target: 3.0, unless the
 *  application defined it before including this header.
 *  @ingroup core_version
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
 *  @ingroup core_version
 *  @since 0.2 */
#define CLMEM_VERSION_MAJOR 0
/** The minor part of the package version this header belongs to.
 *  @ingroup core_version
 *  @since 0.2 */
#define CLMEM_VERSION_MINOR 3
/** The micro part of the package version this header belongs to.
 *  @ingroup core_version
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
 * `@since` says which version added it (@ref versioning).
 * @ingroup core_version
 * @since 0.3
 */
#define CLMEM_CHECK_VERSION(major, minor, micro)                           \
    (CLMEM_VERSION_MAJOR > (major) ||                                      \
     (CLMEM_VERSION_MAJOR == (major) && CLMEM_VERSION_MINOR > (minor)) ||  \
     (CLMEM_VERSION_MAJOR == (major) && CLMEM_VERSION_MINOR == (minor) &&  \
      CLMEM_VERSION_MICRO >= (micro)))

/**
 * Marks a call as deprecated in favour of `f`: the compiler warns where a
 * program calls it (GCC, Clang: -Wdeprecated-declarations; MSVC: C4996),
 * naming `f`. A deprecated call stays in the library, and keeps working,
 * until the next major version.
 *
 * A program that still calls one on purpose (a test of it, say) defines
 * CLMEM_DISABLE_DEPRECATION_WARNINGS before it includes a clmem header;
 * the macro is then empty, as it is where the compiler has no such
 * attribute.
 * @ingroup core_version
 * @since 0.3
 */
#if defined(CLMEM_DISABLE_DEPRECATION_WARNINGS)
#define CLMEM_DEPRECATED_FOR(f)
#elif defined(__GNUC__) || defined(__clang__)
#define CLMEM_DEPRECATED_FOR(f) __attribute__((deprecated("use " #f "() instead")))
#elif defined(_MSC_VER)
#define CLMEM_DEPRECATED_FOR(f) __declspec(deprecated("use " #f "() instead"))
#else
#define CLMEM_DEPRECATED_FOR(f)
#endif

/**
 * The library's version at run time.
 *
 * @return "MAJOR.MINOR.MICRO", a static string owned by the library: never
 *         free it.
 * @par Blocks
 *      Never.
 * @ingroup core_version
 * @since 0.2
 */
const char *clmem_version(void);

/**
 * @defgroup core_status Statuses
 * @ingroup libclmem
 * @brief What every function that can fail returns (@ref errors).
 */

/**
 * What a clmem function returns: CLMEM_OK or why it failed. The details of
 * a failure are in this thread's last-error record (clmem_error_message(),
 * @ref errors).
 * @ingroup core_status
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
 * @ingroup core_status
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
 * @ingroup core_status
 * @since 0.2
 */
const char *clmem_status_name(clmem_status s);

/**
 * @defgroup core_error The last-error record
 * @ingroup libclmem
 * @brief Why the last call on this thread failed: the native call, its code,
 * a sentence (@ref errors).
 */

/**
 * Which API a native error code belongs to (clmem_error_api()).
 * @ingroup core_error
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
 * Every failing call records why in a per-thread record, like errno
 * (@ref errors_status): read it on the same thread right after a function
 * returned something other than CLMEM_OK. The strings of the record are
 * owned by the library and stay valid until the next clmem call on this
 * thread.
 *
 * @return The status of the last failure recorded on this thread;
 *         CLMEM_OK if none was, or after clmem_error_clear().
 * @par Blocks
 *      Never.
 * @ingroup core_error
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
 * @ingroup core_error
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
 * @ingroup core_error
 * @since 0.2
 */
const char *clmem_error_call(void);

/**
 * The raw code the failing native call returned.
 *
 * @return The code (a cl_int, VkResult or errno value: clmem_error_api()
 *         says which), reported as the driver returned it, codes that no
 *         header defines included. The library records 0 when its own
 *         check failed.
 * @par Blocks
 *      Never.
 * @ingroup core_error
 * @since 0.2
 */
int32_t clmem_error_native_code(void);

/**
 * One sentence naming all of this thread's last error: the clmem function
 * that failed, the native call, its raw code by its name and number, and
 * the explanation, as in "clmem_handle_wrap_checked: clGetMemObjectInfo(
 * CL_MEM_CONTEXT) failed with CL_INVALID_MEM_OBJECT (-38): ..."; or,
 * where the library's own check refused the call, the function and the
 * explanation: "clmem_handle_wrap: mem is NULL." (@ref errors). A code
 * its API's headers do not name keeps its number ("OpenCL code 999"); an
 * errno value reads "EMFILE (errno 24)". A record set by clmem_error_set()
 * outside a clmem function reads as it was set, with no function name.
 *
 * @return The sentence, at most 2367 bytes (the explanation's 2047, after
 *         at most 160 of call name and the words around the code); "No
 *         error." when the record holds CLMEM_OK. Owned by the library:
 *         valid until the next clmem call on this thread.
 * @par Blocks
 *      Never.
 * @ingroup core_error
 * @since 0.2
 */
const char *clmem_error_message(void);

/**
 * Forget this thread's last error: its status becomes CLMEM_OK.
 *
 * @par Blocks
 *      Never.
 * @ingroup core_error
 * @since 0.2
 */
void clmem_error_clear(void);

/**
 * Record an error in this thread's record and return `status`, so a
 * function can `return clmem_error_set(...)`.
 *
 * For libraries layered on clmem so that users read one error channel.
 * The message reads as clmem_error_message() describes it, without a
 * clmem function's name in front: write the explanation so that it says
 * which of your functions failed.
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
 * @ingroup core_error
 * @since 0.2
 */
clmem_status clmem_error_set(clmem_status status, clmem_api api, const char *call,
                             int32_t native_code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/**
 * @defgroup core_anchor Anchors
 * @ingroup libclmem
 * @brief Reference-counted objects whose last release runs a callback
 * exactly once: what keeps memory alive (@ref lifetime_borrow).
 */

/**
 * A keepalive anchor: a thread-safe reference-counted object whose last
 * release runs a callback exactly once, then frees the anchor. Opaque.
 * @ingroup core_anchor
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
 *      thread, inside an OpenCL callback, where release may make only
 *      some calls (@ref lifetime_callbacks).
 * @par Blocks
 *      Never (one allocation).
 * @ingroup core_anchor
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
 * @ingroup core_anchor
 * @since 0.2
 */
clmem_keepalive *clmem_keepalive_ref(clmem_keepalive *ka);

/**
 * Drop one reference; the last one runs the release callback and frees
 * the anchor.
 *
 * @param ka The anchor, or NULL (which does nothing). An unref too many,
 *           or one from inside ka's own release callback, aborts with one
 *           line naming this call (@ref misuse).
 * @par Threads
 *      When this is the last reference, the callback runs here, on the
 *      calling thread.
 * @par Blocks
 *      Only as long as the callback does, when this is the last reference.
 * @ingroup core_anchor
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
 * @ingroup core_anchor
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
 * @ingroup core_anchor
 * @since 0.2
 */
clmem_keepalive *clmem_keepalive_new_cl(cl_mem mem, cl_command_queue queue);

/**
 * @defgroup core_handle Handles
 * @ingroup libclmem
 * @brief A cl_mem, its queue, its row pitch and its anchor, in one
 * immutable value that borrows them (@ref lifetime_borrow).
 */

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
 * @ingroup core_handle
 * @since 0.2
 */
typedef struct clmem_handle clmem_handle;

/**
 * Wrap mem and queue into a new handle with one reference, owned by the
 * caller through *out.
 *
 * Borrows: mem and queue are not retained, and dropping the handle never
 * releases them; keep them alive with an anchor (clmem_keepalive_new_cl())
 * or by other means (@ref lifetime_borrow). Takes its own reference on
 * keepalive (which may be NULL); the caller keeps its reference.
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
 * @ingroup core_handle
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
 * objects of another kind (one CPU driver answers CL_SUCCESS when a queue
 * is asked as a memory object: docs/driver-notes.md) is caught by the type
 * and device cross-checks above, with CLMEM_ERR_INVALID_VALUE.
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
 * @ingroup core_handle
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
 * @ingroup core_handle
 * @since 0.2
 */
clmem_handle *clmem_handle_ref(clmem_handle *h);

/**
 * Drop one reference. The last one frees the handle and then drops its
 * keepalive reference (which may run the anchor's release).
 *
 * @param h The handle, or NULL (which does nothing). An unref too many
 *          aborts with one line naming this call, where glibc would
 *          otherwise report a corrupt heap much later (@ref misuse).
 * @par Threads
 *      An anchor's release run by this call runs on the calling thread.
 *      (For a handle from libclmem-bridge the import's anchor outlives the
 *      handle; when and where its keepalive is dropped:
 *      @ref lifetime_teardown.)
 * @par Blocks
 *      Only as long as an anchor release it runs does.
 * @ingroup core_handle
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
 * @ingroup core_handle
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
 * @ingroup core_handle
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
 * @ingroup core_handle
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
 * @ingroup core_handle
 * @since 0.2
 */
clmem_keepalive *clmem_handle_keepalive(const clmem_handle *h);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_H */
