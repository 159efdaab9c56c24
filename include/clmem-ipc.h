/* SPDX-License-Identifier: MIT */
/**
 * @file clmem-ipc.h
 * @brief clmem-ipc.h - hand Vulkan frames from one process to OpenCL in
 * another, without copying them, over a UNIX socket.
 *
 * libclmem-ipc's header (@ref libclmem_ipc). It includes <clmem-bridge.h>.
 */

/**
 * @defgroup libclmem_ipc libclmem-ipc
 * @brief Frames written with Vulkan in one process, handed to OpenCL in
 * another.
 *
 * libclmem-ipc carries frames between two processes: a producer, which
 * writes them with Vulkan, and a consumer, which gets each frame as
 * ordinary clmem_handle objects (one per plane, with its row pitch) on its
 * own bridge's OpenCL context, so that any OpenCL code uses them
 * unchanged. The memory is shared, never copied: each allocation's fd
 * crosses the socket once, and per frame only two small messages do.
 *
 * @section ipc_protocol The protocol
 *
 * One connection carries one stream from one producer to one consumer, on
 * a connected AF_UNIX SOCK_SEQPACKET socket (clmem_ipc_listen(),
 * clmem_ipc_accept(), clmem_ipc_connect(), or a socketpair()):
 *  1. Both sides send HELLO: the protocol version, the Vulkan deviceUUID
 *     and driverUUID, and (producer) how many allocations and frames
 *     follow. Each side compares the UUIDs itself: a consumer on another
 *     device is refused on both sides with CLMEM_ERR_DEVICE_MISMATCH,
 *     naming both UUIDs, before any memory fd is sent.
 *  2. The producer sends one ALLOC per allocation, with its opaque fd
 *     (SCM_RIGHTS: the only message that carries an fd), its size and
 *     memory type; then one FRAME per frame: which allocation, the format,
 *     extent, and each plane's offset, size and row pitch.
 *  3. The consumer imports every frame's planes (the paths below) and
 *     answers ACCEPT with the path it took, or ERROR with its reason, which
 *     the producer reports as its own failure.
 *  4. The producer sends READY once Vulkan's writes to a batch of frames
 *     (one frame, or several: clmem_ipc_producer_ready_many()) have
 *     completed; the consumer acquires the batch's planes on its queue and
 *     hands out the handles (a frame at a time, or the batch at once:
 *     clmem_ipc_consumer_next_many()); when the consumer's last handle of
 *     what it handed out at once goes, the planes are released after the
 *     work enqueued on them, and once that release completed the consumer
 *     sends FREE, naming every frame released together: the release
 *     point. The producer may write those frames again from then on.
 *  5. Either side ends with BYE, or by closing the socket.
 *
 * Both directions are ordered by the host: no queue of either process ever
 * waits on a signal the other process might never send. A semaphore wait
 * on a peer's signal wedges the waiting queue for good when the peer dies
 * first (a process killed before it submitted its signal never signals),
 * so READY is sent
 * only after the producer's writes completed, and FREE only after the
 * consumer's release completed.
 *
 * @section ipc_paths The consumer's paths
 *  - CLMEM_BRIDGE_PATH_OPAQUE_FD: the fd goes straight into OpenCL
 *    (clmem_bridge_import_fd()), where OpenCL imports opaque fds (NVIDIA).
 *  - CLMEM_BRIDGE_PATH_HOST_MAPPED: the consumer imports the fd into its
 *    own VkDevice (same deviceUUID and driverUUID as the producer's) and
 *    shares that memory with OpenCL through the bridge's host-mapped path
 *    (clmem_bridge_import_vk()): zero-copy on CPU OpenCL devices, where
 *    Vulkan's opaque fds are host memory (lavapipe's are memfds).
 *
 * @section ipc_death When the other process dies
 *  - The consumer dies: the producer sees the connection end. Frames it
 *    had lent come back once the consumer's process has exited, so that no
 *    GPU work of the dead process still runs on them (@ref ipc_reclaim).
 *    The producer's queues never wait on the consumer.
 *  - The producer dies: the consumer's frames stay valid until its own
 *    last handle goes (its imports hold the memory); clmem_ipc_consumer_next()
 *    then reports the end of the stream.
 *  - Either way no fd is left open and no Vulkan or OpenCL object is left
 *    behind once the objects are destroyed.
 *
 * @section ipc_reclaim When lent frames come back (the one tunable point)
 * A frame lent to a consumer (READY sent, no FREE) comes back to the
 * producer:
 *  - at once when the consumer said BYE (it sends BYE only once every
 *    release it made completed);
 *  - otherwise when the consumer's process has exited: a pidfd of the pid
 *    the kernel attached to its messages (SCM_CREDENTIALS) is readable only
 *    once every fd of the process, the GPU driver's included, is closed.
 *    Where none of its messages came with credentials (sent before
 *    clmem_ipc_producer_create() asked for them), the process is the one
 *    that connected the socket (SO_PEERCRED). The end of the connection
 *    alone is not enough: a killed process's socket can close before its
 *    GPU work has stopped writing;
 *  - where the consumer's process cannot be watched (neither names a
 *    process, a consumer in this very process, another pid namespace, or
 *    a kernel without pidfd_open), clmem_ipc_producer_info::reclaim_delay_ns
 *    after the connection ended (default CLMEM_IPC_RECLAIM_DELAY_DEFAULT_NS).
 * A consumer that ends the connection but keeps running keeps the frames
 * it was lent until it exits: it still holds their memory, and its queues
 * may still be writing them (docs/driver-notes.md has how long a killed
 * process's GPU work went on, and when its process had exited).
 *
 * @section ipc_peer What a peer can and cannot do to you
 * Every message is checked before it changes anything: its length, the
 * magic, the version, the type, the fields (counts, indices, sizes, plane
 * ranges inside their allocation, pitches against the format), the order
 * (a READY only for frames the producer holds, a FREE only for frames the
 * consumer holds, a batch of 1 to CLMEM_IPC_MAX_FRAMES frames naming each
 * once, sequences in order), and the fds: exactly one with each
 * ALLOC and none elsewhere, a truncated message or truncated control data
 * is refused, and every fd that arrived with a refused message is closed.
 * A message that breaks a rule gets CLMEM_ERR_INVALID_VALUE (or
 * CLMEM_ERR_UNSUPPORTED for another version) with a sentence naming the
 * rule and the values, and the connection is dropped: nothing is leaked.
 * The library never blocks more than 1 s on sending to a peer (a peer that
 * stops reading its messages is dropped), and its own queues never wait on
 * the peer.
 *
 * What a peer can do: a consumer holds imports of every allocation the
 * producer offered until the connection is over, so it can read and write
 * them at any time, lent or not; a producer can write a frame the consumer
 * holds, and a producer whose allocation is host memory (a memfd) can
 * shrink it, making the consumer's accesses fault (SIGBUS), as with any
 * shared memory. The peer you connect to is one you trust with the frames'
 * contents; the socket's permissions are the caller's (the path's
 * directory and umask, or the fd you pass), and this library keeps nothing
 * else open to anyone.
 *
 * @section ipc_cost What it costs
 * Setting up: one fd per allocation; one driver import per frame that has
 * its allocation to itself, its planes sub-buffers of that import, and one
 * per plane for frames that share an allocation (the import's cost is
 * clmem_bridge_import_fd()'s or clmem_bridge_import_vk()'s). Each import
 * is one more object that every acquire and release hands over. Per batch
 * (one frame with clmem_ipc_producer_ready() and clmem_ipc_consumer_next(),
 * several with their _many forms): one READY and one FREE message (each
 * one sendmsg and one recvmsg: 32 and 24 bytes, and 4 and 16 more a
 * frame), one acquire and one release (clmem_bridge_acquire_many(),
 * clmem_bridge_release_many()), one host wait on the producer's fence
 * before READY and one on the consumer's release before FREE, and the
 * GPU's switch between the two processes' contexts. clmem-bench measures
 * it (measure (x)) against one process and against a copy through
 * /dev/shm, with one frame and with batches.
 *
 * Errors are reported as in clmem.h: a clmem_status, with a sentence in
 * clmem_error_message() (@ref errors). Every symbol here is part of
 * libclmem-ipc's first ABI, 0.3's (symbol version CLMEM_IPC_0.3), but the
 * batches' calls, 0.4's (CLMEM_IPC_0.4: @ref versioning). Linux only (SCM_RIGHTS, SCM_CREDENTIALS, pidfd). The
 * overview is clmem-ipc(7).
 */

/**
 * @defgroup ipc_limits The protocol's version and limits
 * @ingroup libclmem_ipc
 * @brief What one connection carries at most, and the defaults.
 */
#ifndef CLMEM_IPC_H
#define CLMEM_IPC_H

#include <clmem-bridge.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The protocol version this header's library speaks: 2, which hands
 *  frames over in batches (READY and FREE name 1 to CLMEM_IPC_MAX_FRAMES
 *  frames), since 0.4. Version 1 (0.3's, one frame a message) is refused
 *  on both sides with CLMEM_ERR_UNSUPPORTED and a sentence naming both.
 *  @ingroup ipc_limits
 *  @since 0.3 */
#define CLMEM_IPC_PROTOCOL_VERSION 2
/** At most this many frames a producer offers on one connection.
 *  @ingroup ipc_limits
 *  @since 0.3 */
#define CLMEM_IPC_MAX_FRAMES 64
/** At most this many allocations (memory fds) a producer offers on one
 *  connection.
 *  @ingroup ipc_limits
 *  @since 0.3 */
#define CLMEM_IPC_MAX_ALLOCATIONS 64
/** The default of clmem_ipc_producer_info::reclaim_delay_ns: 250 ms
 *  (@ref ipc_reclaim).
 *  @ingroup ipc_limits
 *  @since 0.3 */
#define CLMEM_IPC_RECLAIM_DELAY_DEFAULT_NS UINT64_C(250000000)
/** clmem_ipc_producer_add_buffer()'s and _add_image()'s memory_type_index
 *  asking the library to find the type: the lowest index whose property
 *  flags equal clmem_bridge_vk_memory::property_flags, which is the type
 *  clmem_bridge_vk_buffer_create() and clmem_bridge_vk_image_create()
 *  allocate from unless the resource could not use it. Only a consumer on
 *  the host-mapped path uses the index (its Vulkan import must name the
 *  exporter's type); pass the real index where you know it.
 *  @ingroup ipc_limits
 *  @since 0.3 */
#define CLMEM_IPC_MEMORY_TYPE_BY_FLAGS UINT32_MAX

/**
 * @defgroup ipc_connection Connections
 * @ingroup libclmem_ipc
 * @brief The socket between the two processes, and where a connection is.
 */

/**
 * A listening socket at `path`, for clmem_ipc_accept().
 *
 * AF_UNIX, SOCK_SEQPACKET, close-on-exec. The socket file is made with the
 * process's umask: who may connect is decided by the permissions of the
 * directory it is in and by that umask, which are the caller's.
 *
 * A socket file at `path` that nobody listens on is removed and bound
 * again: a process that ended without unlinking its socket (killed, say)
 * does not keep the path from being used. Whether anybody listens is read
 * from Linux's list of UNIX sockets (/proc/net/unix), which changes
 * nothing for a listener; a socket that list does not show as listened on
 * at this path (bound under another spelling of it, say) is then asked by
 * connecting to it, and ECONNREFUSED means nobody does. A process that
 * listens there keeps the path (CLMEM_ERR_INVALID_VALUE, "a process listens
 * on ... already"); only where the list could not tell does it see a
 * connection that closes at once. Any other file at `path` is never
 * removed (the sentence says to remove it).
 *
 * @param path          The socket's path (at most 107 bytes).
 * @param[out] fd_out   The listening fd, the caller's to close (and the
 *                      file the caller's to unlink).
 * @retval CLMEM_OK                *fd_out listens.
 * @retval CLMEM_ERR_NULL_POINTER  path or fd_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE path is empty or too long, or bind()
 *                                 refused it (a process listens there, a
 *                                 file that is not a socket is there, no
 *                                 such directory, no permission: the errno
 *                                 is the native code, CLMEM_API_SYSTEM).
 * @retval CLMEM_ERR_NO_MEMORY     Out of fds or memory (the errno).
 * @retval CLMEM_ERR_UNSUPPORTED   socket() or listen() failed otherwise
 *                                 (the errno).
 * @par On error
 *      *fd_out is -1 and nothing is left open.
 * @par Blocks
 *      Never.
 * @ingroup ipc_connection
 * @since 0.3
 */
clmem_status clmem_ipc_listen(const char *path, int *fd_out);

/**
 * Accept one connection on a socket from clmem_ipc_listen().
 *
 * @param listen_fd   The listening socket.
 * @param timeout_ns  How long to wait at most, in nanoseconds: 0 does not
 *                    wait; UINT64_MAX has no limit.
 * @param[out] fd_out The connected socket (close-on-exec), the caller's:
 *                    pass it to clmem_ipc_producer_create() or
 *                    clmem_ipc_consumer_create().
 * @retval CLMEM_OK                *fd_out is connected.
 * @retval CLMEM_ERR_NULL_POINTER  fd_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE listen_fd is negative.
 * @retval CLMEM_ERR_TIMEOUT       Nobody connected within timeout_ns.
 * @retval CLMEM_ERR_NO_MEMORY     Out of fds or memory (the errno).
 * @retval CLMEM_ERR_UNSUPPORTED   accept() or poll() failed otherwise (the
 *                                 errno: ENOTSOCK, EINVAL for a socket that
 *                                 does not listen).
 * @par On error
 *      *fd_out is -1.
 * @par Blocks
 *      Up to timeout_ns, until a peer connects.
 * @ingroup ipc_connection
 * @since 0.3
 */
clmem_status clmem_ipc_accept(int listen_fd, uint64_t timeout_ns, int *fd_out);

/**
 * Connect to a socket a peer made with clmem_ipc_listen(), retrying while
 * it is not there yet (ENOENT, ECONNREFUSED), until timeout_ns.
 *
 * @param path        The socket's path.
 * @param timeout_ns  How long to keep trying: 0 tries once; UINT64_MAX has
 *                    no limit.
 * @param[out] fd_out The connected socket (close-on-exec), the caller's.
 * @retval CLMEM_OK                *fd_out is connected.
 * @retval CLMEM_ERR_NULL_POINTER  path or fd_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE path is empty or too long; or connect()
 *                                 refused the path other than for nobody
 *                                 listening (the errno: EACCES for a path
 *                                 the caller may not use, ENOTSOCK,
 *                                 EPROTOTYPE).
 * @retval CLMEM_ERR_TIMEOUT       Nobody listened there within timeout_ns:
 *                                 the sentence says "timed out after" the
 *                                 timeout (in s or ms), and the native code
 *                                 is connect()'s last errno (ENOENT: no
 *                                 file there; ECONNREFUSED: nobody listens
 *                                 on it), CLMEM_API_SYSTEM.
 * @retval CLMEM_ERR_NO_MEMORY     Out of fds or memory (the errno).
 * @par On error
 *      *fd_out is -1 and nothing is left open.
 * @par Blocks
 *      Up to timeout_ns (polling every millisecond while nobody listens).
 * @ingroup ipc_connection
 * @since 0.3
 */
clmem_status clmem_ipc_connect(const char *path, uint64_t timeout_ns, int *fd_out);

/**
 * Where a connection is.
 * @ingroup ipc_connection
 * @since 0.3
 */
typedef enum clmem_ipc_state {
    CLMEM_IPC_STATE_NEW = 0,       /**< Made; the handshake (start) has not completed. */
    CLMEM_IPC_STATE_OPEN = 1,      /**< Frames flow. */
    CLMEM_IPC_STATE_ENDED = 2,     /**< The peer said BYE: the stream ended cleanly. */
    CLMEM_IPC_STATE_PEER_GONE = 3, /**< The peer closed the connection without BYE: it exited or died. */
    CLMEM_IPC_STATE_DROPPED = 4,   /**< This side dropped the connection: the peer broke the protocol,
                                        refused the handshake, or a local call failed (the error said which). */
    CLMEM_IPC_STATE_CLOSED = 5     /**< This side ended the connection (the consumer's destroy sent BYE). */
} clmem_ipc_state;

/**
 * A state's short name.
 *
 * @param state Any value.
 * @return "new", "open", "ended", "peer-gone", "dropped", "closed", or
 *         "unknown-state"; static storage.
 * @par Blocks
 *      Never.
 * @ingroup ipc_connection
 * @since 0.3
 */
const char *clmem_ipc_state_name(clmem_ipc_state state);

/**
 * @defgroup ipc_producer The producer
 * @ingroup libclmem_ipc
 * @brief The process that writes frames with Vulkan and offers them.
 */

/**
 * The producer's end of a connection: the frames it offers, which of them
 * the consumer holds, and the socket. Opaque. Its calls must not run
 * concurrently (one thread at a time); it makes no thread.
 * @ingroup ipc_producer
 * @since 0.3
 */
typedef struct clmem_ipc_producer clmem_ipc_producer;

/**
 * What a producer is made from.
 *
 * Set `size` to sizeof(clmem_ipc_producer_info)
 * (@ref versioned_structs). The Vulkan objects
 * are borrowed: they must outlive the producer.
 * @ingroup ipc_producer
 * @since 0.3
 */
typedef struct clmem_ipc_producer_info {
    size_t size;                                      /**< sizeof(clmem_ipc_producer_info). */
    VkInstance instance;                              /**< The Vulkan instance (borrowed). */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /**< NULL: the Vulkan loader's. */
    VkPhysicalDevice physical_device;                 /**< The Vulkan physical device (borrowed). */
    VkDevice device; /**< Made from physical_device with VK_KHR_external_memory_fd enabled (borrowed). */
    int socket_fd;   /**< A connected AF_UNIX SOCK_SEQPACKET socket; the producer's on success. */
    uint64_t reclaim_delay_ns; /**< How long after the connection ended a consumer whose process cannot be
                                    watched gets its frames taken back (@ref ipc_reclaim); 0:
                                    CLMEM_IPC_RECLAIM_DELAY_DEFAULT_NS. */
    uint32_t flags;            /**< 0 (no flags are defined yet). */
} clmem_ipc_producer_info;

/**
 * Make a producer on a connected socket. No message is sent yet.
 *
 * @param info     What the producer is made from; read during the call.
 * @param[out] out The producer, the caller's (clmem_ipc_producer_destroy()).
 * @retval CLMEM_OK                *out is the producer; the socket is its.
 * @retval CLMEM_ERR_NULL_POINTER  info, out or a Vulkan handle is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE info->size is too small or above 4096,
 *                                 flags has unknown bits, or socket_fd is
 *                                 not a connected AF_UNIX SOCK_SEQPACKET
 *                                 socket (the sentence says what it is).
 * @retval CLMEM_ERR_UNSUPPORTED   The device lacks vkGetMemoryFdKHR
 *                                 (VK_KHR_external_memory_fd not enabled),
 *                                 Vulkan 1.1's entry points are missing, or
 *                                 a byte past this library's struct is set.
 * @retval CLMEM_ERR_NO_MEMORY     An allocation failed.
 * @par On error
 *      *out is NULL and the socket is still the caller's, open.
 * @par Blocks
 *      Never.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_create(const clmem_ipc_producer_info *info, clmem_ipc_producer **out);

/**
 * Offer bytes [offset, offset + size) of Vulkan memory as a frame: a
 * buffer, whose handle on the consumer's side has row pitch `row_pitch`.
 *
 * Before clmem_ipc_producer_start() only. Frames in one VkDeviceMemory
 * share its fd: an allocation crosses the socket once. The memory must be
 * exportable as VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT; it is
 * borrowed and must outlive the producer. The offset must suit the
 * consumer's device (CL_DEVICE_MEM_BASE_ADDR_ALIGN, as for any bridge
 * import): a consumer that cannot import a frame refuses the handshake,
 * naming it.
 *
 * @param p                 The producer.
 * @param memory            The memory (read during the call).
 * @param memory_type_index The memoryTypeIndex it was allocated with
 *                          (a consumer that imports it into Vulkan must
 *                          use the same), or CLMEM_IPC_MEMORY_TYPE_BY_FLAGS.
 * @param offset            The frame's first byte in the memory.
 * @param size              The frame's bytes.
 * @param row_pitch         The frame's row pitch, or 0 (at most size).
 * @param[out] index_out    The frame's index (0, 1, 2 ... in the order
 *                          offered), or NULL.
 * @retval CLMEM_OK                The frame is offered.
 * @retval CLMEM_ERR_NULL_POINTER  p, memory or memory->memory is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE     size or memory->allocation_size is 0.
 * @retval CLMEM_ERR_INVALID_VALUE The range is beyond the allocation, the
 *                                 row pitch above size, memory of another
 *                                 VkDevice, a memory type index out of
 *                                 range (or, by flags, no type with exactly
 *                                 those flags), more than
 *                                 CLMEM_IPC_MAX_FRAMES frames or
 *                                 CLMEM_IPC_MAX_ALLOCATIONS allocations, or
 *                                 the producer already started.
 * @retval CLMEM_ERR_UNSUPPORTED   The memory is not exportable as an opaque
 *                                 fd.
 * @retval CLMEM_ERR_NO_MEMORY     An allocation failed.
 * @par Blocks
 *      Never.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_add_buffer(clmem_ipc_producer *p, const clmem_bridge_vk_memory *memory,
                                           uint32_t memory_type_index, VkDeviceSize offset, VkDeviceSize size,
                                           uint32_t row_pitch, uint32_t *index_out);

/**
 * Offer a linear image as a frame: its planes (one, or two for NV12 and
 * P010) become the consumer's plane handles, each with its row pitch.
 *
 * clmem_bridge_vk_image describes it (clmem_bridge_vk_image_create() fills
 * one; `image` may be VK_NULL_HANDLE for memory laid out as an image by
 * other means). Its format must be one of clmem_bridge_image_formats(), its
 * tiling VK_IMAGE_TILING_LINEAR (an optimal image's bytes are in the
 * driver's own layout), and each plane's width, height, row pitch and size
 * must fit the format. Everything else is clmem_ipc_producer_add_buffer()'s.
 *
 * @param p                 The producer.
 * @param image             The image's description (read during the call).
 * @param memory_type_index As for clmem_ipc_producer_add_buffer().
 * @param[out] index_out    The frame's index, or NULL.
 * @retval CLMEM_OK                The frame is offered.
 * @retval CLMEM_ERR_NULL_POINTER  p, image or image->memory.memory is NULL.
 * @retval CLMEM_ERR_ZERO_SIZE     The allocation size is 0.
 * @retval CLMEM_ERR_INVALID_VALUE A plane that does not fit the format or
 *                                 the allocation, an extent that is empty
 *                                 (or odd for 4:2:0), and
 *                                 clmem_ipc_producer_add_buffer()'s reasons.
 * @retval CLMEM_ERR_UNSUPPORTED   A format the bridge does not share,
 *                                 optimal tiling, or memory not exportable
 *                                 as an opaque fd.
 * @retval CLMEM_ERR_NO_MEMORY     An allocation failed.
 * @par Blocks
 *      Never.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_add_image(clmem_ipc_producer *p, const clmem_bridge_vk_image *image,
                                          uint32_t memory_type_index, uint32_t *index_out);

/**
 * The handshake: HELLO both ways (version and deviceUUID checked here
 * too), each allocation's fd and each frame's description to the consumer,
 * and its answer.
 *
 * After CLMEM_OK every frame is the producer's (clmem_ipc_producer_next()).
 *
 * @param p          The producer, with at least one frame offered.
 * @param timeout_ns How long to wait at most for the consumer, in
 *                   nanoseconds; UINT64_MAX has no limit.
 * @retval CLMEM_OK                  The consumer imported every frame
 *                                   (clmem_ipc_producer_peer_path() says
 *                                   how); the state is OPEN.
 * @retval CLMEM_ERR_NULL_POINTER    p is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   No frame was offered, start was called
 *                                   before, the consumer broke the protocol
 *                                   (the sentence names the rule), or it
 *                                   closed the connection.
 * @retval CLMEM_ERR_UNSUPPORTED     The consumer speaks another protocol
 *                                   version.
 * @retval CLMEM_ERR_DEVICE_MISMATCH The consumer's deviceUUID is not the
 *                                   producer's (both named); nothing was
 *                                   sent but HELLO.
 * @retval CLMEM_ERR_VULKAN          vkGetMemoryFdKHR failed.
 * @retval CLMEM_ERR_TIMEOUT         The consumer did not answer within
 *                                   timeout_ns.
 * @retval (any)                     The consumer refused (its status, and
 *                                   its sentence after "the consumer
 *                                   refused: "), e.g. an offset its device
 *                                   cannot import.
 * @par On error
 *      The connection is over and the state says how: PEER_GONE where the
 *      consumer closed it without a word (it exited, or was killed right
 *      after connecting), ENDED where it said BYE, DROPPED otherwise (it
 *      refused or broke the protocol, it did not answer in time, or
 *      vkGetMemoryFdKHR failed). No fd is left open, and the producer can
 *      only be destroyed.
 * @par Blocks
 *      Up to timeout_ns, on the consumer's messages; the consumer's answer
 *      comes after its driver imports.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_start(clmem_ipc_producer *p, uint64_t timeout_ns);

/**
 * The next frame Vulkan may write: one the consumer gave back (or never
 * had), oldest first.
 *
 * Reads the consumer's messages (FREE, BYE, the end of the connection) on
 * the way. Keeps working after the connection ended: frames lent to a
 * consumer that is gone come back (@ref ipc_reclaim), so a producer
 * can wait for all of them (clmem_ipc_producer_lent() is 0 then).
 *
 * @param p              The producer, started.
 * @param timeout_ns     How long to wait at most, in nanoseconds: 0 does
 *                       not wait; UINT64_MAX has no limit.
 * @param[out] index_out The frame's index.
 * @retval CLMEM_OK                *index_out is the producer's to write.
 * @retval CLMEM_ERR_NULL_POINTER  p or index_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE The producer was not started; or the
 *                                 consumer broke the protocol just now (the
 *                                 sentence names the rule; the connection is
 *                                 dropped and its frames are reclaimed).
 * @retval CLMEM_ERR_TIMEOUT       No frame came back within timeout_ns.
 * @par Blocks
 *      Up to timeout_ns, until the consumer frees a frame or a reclaim
 *      falls due.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_next(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t *index_out);

/**
 * Wait until no frame is lent: every frame the consumer had is back (FREE,
 * BYE, or reclaimed from a consumer that is gone: @ref ipc_reclaim). The
 * frames stay in the list clmem_ipc_producer_next() hands them
 * out from.
 *
 * For the end of a stream (before freeing the frames' memory for reuse),
 * and for a producer that wants all its frames idle before going on.
 *
 * @param p          The producer, started.
 * @param timeout_ns How long to wait at most: 0 does not wait; UINT64_MAX
 *                   has no limit.
 * @retval CLMEM_OK                clmem_ipc_producer_lent() is 0.
 * @retval CLMEM_ERR_NULL_POINTER  p is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE The producer was not started; or the
 *                                 consumer broke the protocol (as for
 *                                 clmem_ipc_producer_next()).
 * @retval CLMEM_ERR_TIMEOUT       Frames were still lent after timeout_ns
 *                                 (the sentence gives the count).
 * @par Blocks
 *      Up to timeout_ns, on the consumer's messages and the reclaim.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_wait_all(clmem_ipc_producer *p, uint64_t timeout_ns);

/**
 * Hand frame `index` to the consumer: once `fence` signalled (Vulkan's
 * writes to the frame completed), send READY.
 *
 * The frame is the consumer's from then on, until it sends FREE.
 *
 * @param p          The producer.
 * @param index      A frame clmem_ipc_producer_next() gave and not yet
 *                   handed over.
 * @param fence      A fence of the producer's device that signals when the
 *                   writes completed, or VK_NULL_HANDLE when the caller knows
 *                   they have (it waited itself). Waited for, not reset.
 * @param timeout_ns How long to wait for the fence at most.
 * @retval CLMEM_OK                READY is sent.
 * @retval CLMEM_ERR_NULL_POINTER  p is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE index is not a frame the producer holds
 *                                 from clmem_ipc_producer_next(); or the
 *                                 connection is not OPEN
 *                                 (clmem_ipc_producer_state() says why): the
 *                                 frame stays the producer's.
 * @retval CLMEM_ERR_TIMEOUT       The fence did not signal in time: nothing
 *                                 is sent, the frame stays the producer's.
 * @retval CLMEM_ERR_VULKAN        vkWaitForFences failed.
 * @par Blocks
 *      On the fence, up to timeout_ns. Never on the consumer: a consumer
 *      that does not read its messages is dropped.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_status clmem_ipc_producer_ready(clmem_ipc_producer *p, uint32_t index, VkFence fence, uint64_t timeout_ns);

/**
 * The frames Vulkan may write now, as a batch: wait like
 * clmem_ipc_producer_next() for one, then take every frame the producer
 * holds, oldest first, up to `max`.
 *
 * @param p              The producer, started.
 * @param timeout_ns     How long to wait at most for the first frame: 0
 *                       does not wait; UINT64_MAX has no limit.
 * @param max            Room in indices_out (1 or more).
 * @param[out] indices_out The frames' indices: *count_out of them.
 * @param[out] count_out The count, 1 to max; 0 on error.
 * @retval CLMEM_OK                The frames are the producer's to write.
 * @retval CLMEM_ERR_NULL_POINTER  p, indices_out or count_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE max is 0, and clmem_ipc_producer_next()'s
 *                                 reasons.
 * @retval CLMEM_ERR_TIMEOUT       No frame came back within timeout_ns.
 * @par Blocks
 *      As clmem_ipc_producer_next().
 * @ingroup ipc_producer
 * @since 0.4
 */
clmem_status clmem_ipc_producer_next_many(clmem_ipc_producer *p, uint64_t timeout_ns, uint32_t max,
                                          uint32_t *indices_out, uint32_t *count_out);

/**
 * Hand `count` frames to the consumer as one batch: once `fence` signalled
 * (Vulkan's writes to all of them completed), send one READY naming them,
 * in this order.
 *
 * The consumer gets them in this order, by clmem_ipc_consumer_next() one
 * at a time or by clmem_ipc_consumer_next_many() at once, and frees them
 * as it releases them. clmem_ipc_producer_ready(p, i, fence, t) is
 * clmem_ipc_producer_ready_many(p, 1, &i, fence, t).
 *
 * @param p          The producer.
 * @param count      How many frames: 1 to the frames offered.
 * @param indices    Frames clmem_ipc_producer_next() or _next_many() gave
 *                   and not yet handed over, each once.
 * @param fence      A fence of the producer's device that signals once the
 *                   writes to every one of them completed (a fence of the
 *                   last of their submissions on one queue does), or
 *                   VK_NULL_HANDLE when the caller knows they have. Waited
 *                   for, not reset.
 * @param timeout_ns How long to wait for the fence at most.
 * @retval CLMEM_OK                READY is sent; the frames are the
 *                                 consumer's.
 * @retval CLMEM_ERR_NULL_POINTER  p or indices is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE count is 0 or above the frames offered; an
 *                                 index is not a frame the producer handed
 *                                 out, or comes twice (the sentence names
 *                                 it); or the connection is not OPEN. The
 *                                 frames stay the producer's.
 * @retval CLMEM_ERR_TIMEOUT       The fence did not signal in time: nothing
 *                                 is sent, the frames stay the producer's.
 * @retval CLMEM_ERR_VULKAN        vkWaitForFences failed.
 * @par Blocks
 *      On the fence, up to timeout_ns. Never on the consumer.
 * @ingroup ipc_producer
 * @since 0.4
 */
clmem_status clmem_ipc_producer_ready_many(clmem_ipc_producer *p, uint32_t count, const uint32_t *indices,
                                           VkFence fence, uint64_t timeout_ns);

/**
 * The connection's state.
 *
 * @param p The producer, or NULL.
 * @return The state; CLMEM_IPC_STATE_NEW for NULL.
 * @par Blocks
 *      Never (reads no message: clmem_ipc_producer_next() does).
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_ipc_state clmem_ipc_producer_state(const clmem_ipc_producer *p);

/**
 * How many frames are not the producer's now: lent to the consumer, or
 * waiting to be reclaimed from one that is gone.
 *
 * @param p The producer, or NULL (0).
 * @return The count.
 * @par Blocks
 *      Never.
 * @ingroup ipc_producer
 * @since 0.3
 */
uint32_t clmem_ipc_producer_lent(const clmem_ipc_producer *p);

/**
 * The path the consumer imports through, from its ACCEPT.
 *
 * @param p The producer, or NULL.
 * @return CLMEM_BRIDGE_PATH_OPAQUE_FD or CLMEM_BRIDGE_PATH_HOST_MAPPED once
 *         started; CLMEM_BRIDGE_PATH_BEST before (or for NULL).
 * @par Blocks
 *      Never.
 * @ingroup ipc_producer
 * @since 0.3
 */
clmem_bridge_path clmem_ipc_producer_peer_path(const clmem_ipc_producer *p);

/**
 * End the producer: send BYE where the connection is open, close the
 * socket, free the producer.
 *
 * The frames' memory stays the caller's. A consumer that still holds
 * frames keeps them valid through its imports; the producer may free its
 * memory (Vulkan frees the allocation when the last import is gone too).
 *
 * @param p The producer, or NULL (which does nothing).
 * @par Blocks
 *      At most 1 s, sending BYE to a consumer that does not read its
 *      messages; otherwise never.
 * @ingroup ipc_producer
 * @since 0.3
 */
void clmem_ipc_producer_destroy(clmem_ipc_producer *p);

/**
 * @defgroup ipc_consumer The consumer
 * @ingroup libclmem_ipc
 * @brief The process that gets each frame as handles on its own bridge.
 */

/**
 * The consumer's end of a connection: the imports of the producer's
 * frames, on the consumer's bridge, and the socket. Opaque.
 *
 * clmem_ipc_consumer_next() and clmem_ipc_consumer_destroy() must not run
 * concurrently; handles of its frames may be dropped on any thread. It
 * makes one thread, which sends FREE once a release completed, and joins
 * it in clmem_ipc_consumer_destroy().
 * @ingroup ipc_consumer
 * @since 0.3
 */
typedef struct clmem_ipc_consumer clmem_ipc_consumer;

/**
 * What a consumer is made from.
 *
 * Set `size` to sizeof(clmem_ipc_consumer_info)
 * (@ref versioned_structs). instance, get_instance_proc_addr and
 * physical_device are those the bridge was made from (it does not hand them out): the
 * consumer reads the deviceUUID and driverUUID there, and imports fds into
 * the bridge's VkDevice on the host-mapped path.
 * @ingroup ipc_consumer
 * @since 0.3
 */
typedef struct clmem_ipc_consumer_info {
    size_t size;                                      /**< sizeof(clmem_ipc_consumer_info). */
    clmem_bridge *bridge;                             /**< The consumer's bridge (a reference is taken). */
    VkInstance instance;                              /**< The bridge's Vulkan instance (borrowed). */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr; /**< NULL: the Vulkan loader's. */
    VkPhysicalDevice physical_device;                 /**< The bridge's physical device (borrowed). */
    cl_command_queue queue; /**< An in-order queue of the bridge's context: frames are acquired and released
                                 on it, and their handles are paired with it (retained). */
    cl_mem_flags mem_flags; /**< The imports' cl_mem_flags; 0: CL_MEM_READ_WRITE. */
    clmem_bridge_path path; /**< BEST (opaque fd where the bridge has it, else host-mapped), OPAQUE_FD or
                                 HOST_MAPPED. */
    int socket_fd;          /**< A connected AF_UNIX SOCK_SEQPACKET socket; the consumer's on success. */
    uint32_t flags;         /**< 0 (no flags are defined yet). */
} clmem_ipc_consumer_info;

/**
 * Make a consumer on a connected socket. No message is sent yet.
 *
 * @param info     What the consumer is made from; read during the call.
 * @param[out] out The consumer, the caller's (clmem_ipc_consumer_destroy()).
 * @retval CLMEM_OK                   *out is the consumer; the socket is its.
 * @retval CLMEM_ERR_NULL_POINTER     info, out, bridge, queue or a Vulkan
 *                                    handle is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE    info->size is too small or above 4096,
 *                                    flags has unknown bits, the path is
 *                                    unknown (or DMA_BUF), an out-of-order
 *                                    queue, or socket_fd is not a connected
 *                                    AF_UNIX SOCK_SEQPACKET socket.
 * @retval CLMEM_ERR_CONTEXT_MISMATCH queue is not in the bridge's context.
 * @retval CLMEM_ERR_UNSUPPORTED      Vulkan 1.1's entry points are missing,
 *                                    or a byte past this library's struct is
 *                                    set.
 * @retval CLMEM_ERR_OPENCL           The queue's queries or retain failed.
 * @retval CLMEM_ERR_NO_MEMORY        An allocation failed, or the thread
 *                                    could not be made.
 * @par On error
 *      *out is NULL and the socket is still the caller's, open.
 * @par Blocks
 *      Never.
 * @ingroup ipc_consumer
 * @since 0.3
 */
clmem_status clmem_ipc_consumer_create(const clmem_ipc_consumer_info *info, clmem_ipc_consumer **out);

/**
 * The handshake: HELLO both ways, then the producer's allocations and
 * frames, each imported on the bridge, then ACCEPT (or, on any failure,
 * ERROR with the reason, so that the producer fails with it too).
 *
 * @param c          The consumer.
 * @param timeout_ns How long to wait at most for the producer's messages.
 * @retval CLMEM_OK                  Every frame is imported; the state is
 *                                   OPEN; clmem_ipc_consumer_path() says
 *                                   how.
 * @retval CLMEM_ERR_NULL_POINTER    c is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE   start was called before; the producer
 *                                   broke the protocol (the sentence names
 *                                   the rule and the values) or closed the
 *                                   connection; a frame the bridge refuses
 *                                   (an offset not a multiple of
 *                                   CL_DEVICE_MEM_BASE_ADDR_ALIGN).
 * @retval CLMEM_ERR_UNSUPPORTED     Another protocol version; no path that
 *                                   works here (each named: the bridge's
 *                                   opaque-fd answer, and for host-mapped a
 *                                   driverUUID that differs, a memory type
 *                                   that is not host-visible, or no opaque-fd
 *                                   import in Vulkan).
 * @retval CLMEM_ERR_DEVICE_MISMATCH The producer's deviceUUID is not the
 *                                   consumer's (both named).
 * @retval CLMEM_ERR_TIMEOUT         The producer did not send everything
 *                                   within timeout_ns.
 * @retval CLMEM_ERR_VULKAN, CLMEM_ERR_OPENCL, CLMEM_ERR_NO_MEMORY
 *                                   An import failed (the raw code).
 * @par On error
 *      The connection is over and the state says how: PEER_GONE where the
 *      producer closed it without a word (it exited or died), ENDED where
 *      it said BYE, DROPPED otherwise (it refused, broke the protocol, did
 *      not send everything in time, or an import failed). Every fd received
 *      is closed and every import made so far dropped; the consumer can
 *      only be destroyed.
 * @par Blocks
 *      Up to timeout_ns on the producer's messages, and on the imports.
 * @ingroup ipc_consumer
 * @since 0.3
 */
clmem_status clmem_ipc_consumer_start(clmem_ipc_consumer *c, uint64_t timeout_ns);

/**
 * One plane of a frame the consumer received.
 *
 * This struct is frozen.
 * @ingroup ipc_consumer
 * @since 0.3
 */
typedef struct clmem_ipc_plane {
    clmem_handle *handle; /**< One reference, the caller's: a handle of the bridge's context, paired with the
                               consumer's queue, whose cl_mem covers exactly the plane (byte 0 is its first).
                               That cl_mem may be a sub-buffer (of the import of the frame's allocation), so
                               make no sub-buffer of it. */
    uint64_t size;        /**< The plane's bytes. */
    uint32_t row_pitch;   /**< clmem_handle_row_pitch(handle): bytes from one row to the next, or 0. */
    uint32_t width;       /**< The plane's width in texels (0 for a buffer frame). */
    uint32_t height;      /**< The plane's height in texels (0 for a buffer frame). */
    uint32_t texel_bytes; /**< The bytes of one texel (0 for a buffer frame). */
} clmem_ipc_plane;

/**
 * A frame the consumer received, by clmem_ipc_consumer_next().
 *
 * This struct is frozen.
 * @ingroup ipc_consumer
 * @since 0.3
 */
typedef struct clmem_ipc_frame {
    uint32_t index;       /**< Which of the producer's frames (the order it offered them). */
    uint32_t plane_count; /**< 1, 2 for NV12 and P010; 0 when the stream ended (no frame). */
    uint64_t sequence;    /**< 0, 1, 2, ...: frames the producer handed over on this connection. */
    VkFormat format;      /**< The image's format; VK_FORMAT_UNDEFINED for a buffer frame. */
    uint32_t width;       /**< The image's width (0 for a buffer frame). */
    uint32_t height;      /**< The image's height (0 for a buffer frame). */
    clmem_ipc_plane planes[CLMEM_BRIDGE_IMAGE_MAX_PLANES]; /**< planes[0 .. plane_count). */
} clmem_ipc_frame;

/**
 * The next frame the producer handed over, with its planes acquired for
 * OpenCL on the consumer's queue.
 *
 * Enqueue the work on the frame on that queue (after this call), or wait
 * for event_out. Then drop each plane's handle (clmem_handle_unref()): when
 * the last one of the frame goes, its planes are released on the queue
 * after everything enqueued there before, and once that release completed
 * the producer is told the frame is free. Work on a queue the handles do
 * not name is the caller's to finish before dropping them.
 *
 * @param c              The consumer, started.
 * @param timeout_ns     How long to wait at most: 0 does not wait;
 *                       UINT64_MAX has no limit.
 * @param[out] frame_out The frame: its plane handles are the caller's. At
 *                       the end of the stream (the producer said BYE, or
 *                       is gone, or the connection was dropped): CLMEM_OK
 *                       with plane_count 0, and clmem_ipc_consumer_state()
 *                       says which. Zeroed on error.
 * @param[out] event_out If not NULL, the acquire's event, the caller's to
 *                       release; NULL at the end of the stream and on error.
 * @retval CLMEM_OK                A frame, or the end of the stream.
 * @retval CLMEM_ERR_NULL_POINTER  c or frame_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE Not started; or the producer broke the
 *                                 protocol just now (the sentence names the
 *                                 rule and the values; the connection is
 *                                 dropped, frames already handed out stay
 *                                 valid).
 * @retval CLMEM_ERR_TIMEOUT       No frame within timeout_ns.
 * @retval CLMEM_ERR_OPENCL        The acquire was refused (the connection is
 *                                 dropped).
 * @retval CLMEM_ERR_NO_MEMORY     An allocation failed (the connection is
 *                                 dropped).
 * @par Blocks
 *      Up to timeout_ns, on the producer's next READY. The acquire's
 *      enqueue itself may block (@ref threads_blocks): NVIDIA's waits
 *      while an earlier command on the queue waits on a user event that is
 *      not complete.
 * @ingroup ipc_consumer
 * @since 0.3
 */
clmem_status clmem_ipc_consumer_next(clmem_ipc_consumer *c, uint64_t timeout_ns, clmem_ipc_frame *frame_out,
                                     cl_event *event_out);

/**
 * The frames the producer handed over, as one batch: wait like
 * clmem_ipc_consumer_next() for the first, then take every frame already
 * received (the rest of the producer's READY, and of earlier ones), up to
 * `max`, with all their planes acquired by one call on the consumer's
 * queue.
 *
 * The batch is released as one: the release point is when the last handle
 * of any of its frames goes (clmem_handle_unref()). Then every plane of
 * the batch is released on the queue after everything enqueued there
 * before, and once that release completed the producer is told, in one
 * FREE, that the frames are free. Keep a frame's handles as long as the
 * others' if you need it longer: none is given back before the last.
 *
 * @param c               The consumer, started.
 * @param timeout_ns      How long to wait at most for the first frame: 0
 *                        does not wait; UINT64_MAX has no limit.
 * @param max             Room in frames_out (1 or more); at most
 *                        CLMEM_IPC_MAX_FRAMES are taken.
 * @param[out] frames_out The frames, *count_out of them, in the order the
 *                        producer handed them over; their plane handles
 *                        are the caller's. The first min(max,
 *                        CLMEM_IPC_MAX_FRAMES) are zeroed first.
 * @param[out] count_out  The count; 0 at the end of the stream (as for
 *                        clmem_ipc_consumer_next(): CLMEM_OK,
 *                        clmem_ipc_consumer_state() says which end) and on
 *                        error.
 * @param[out] event_out  If not NULL, the one acquire's event, the caller's
 *                        to release; NULL at the end of the stream and on
 *                        error.
 * @retval CLMEM_OK                Frames, or the end of the stream.
 * @retval CLMEM_ERR_NULL_POINTER  c, frames_out or count_out is NULL.
 * @retval CLMEM_ERR_INVALID_VALUE max is 0, and clmem_ipc_consumer_next()'s
 *                                 reasons.
 * @retval CLMEM_ERR_TIMEOUT       No frame within timeout_ns.
 * @retval CLMEM_ERR_OPENCL        The acquire was refused (the connection is
 *                                 dropped).
 * @retval CLMEM_ERR_NO_MEMORY     An allocation failed (the connection is
 *                                 dropped).
 * @par Blocks
 *      Up to timeout_ns, on the producer's next READY. The acquire's
 *      enqueue itself may block (@ref threads_blocks): NVIDIA's waits
 *      while an earlier command on the queue waits on a user event that is
 *      not complete.
 * @ingroup ipc_consumer
 * @since 0.4
 */
clmem_status clmem_ipc_consumer_next_many(clmem_ipc_consumer *c, uint64_t timeout_ns, uint32_t max,
                                          clmem_ipc_frame *frames_out, uint32_t *count_out, cl_event *event_out);

/**
 * The connection's state.
 *
 * @param c The consumer, or NULL.
 * @return The state; CLMEM_IPC_STATE_NEW for NULL.
 * @par Blocks
 *      Never.
 * @ingroup ipc_consumer
 * @since 0.3
 */
clmem_ipc_state clmem_ipc_consumer_state(const clmem_ipc_consumer *c);

/**
 * The path the frames were imported through.
 *
 * @param c The consumer, or NULL.
 * @return CLMEM_BRIDGE_PATH_OPAQUE_FD or CLMEM_BRIDGE_PATH_HOST_MAPPED once
 *         started; CLMEM_BRIDGE_PATH_BEST before (or for NULL).
 * @par Blocks
 *      Never.
 * @ingroup ipc_consumer
 * @since 0.3
 */
clmem_bridge_path clmem_ipc_consumer_path(const clmem_ipc_consumer *c);

/**
 * End the consumer: once every frame's release completed and its FREE was
 * sent, send BYE, stop the consumer's thread, drop every import, close the
 * socket and free the consumer.
 *
 * After CLMEM_OK the imports are dropped like any handle's last unref
 * (their teardown is the bridge's): call clmem_bridge_device_finish()
 * before destroying the bridge's VkDevice (@ref lifetime_device_end).
 *
 * @param c          The consumer, or NULL (CLMEM_OK, nothing done).
 * @param timeout_ns How long to wait at most for releases still running.
 * @retval CLMEM_OK          The consumer is gone.
 * @retval CLMEM_ERR_IN_USE  Handles of frames it handed out are still alive
 *                           (the sentence gives the count): drop them first.
 *                           Nothing changed.
 * @retval CLMEM_ERR_TIMEOUT A release had not completed within timeout_ns.
 *                           Nothing is freed; call it again.
 * @par Blocks
 *      Up to timeout_ns, on releases of frames already dropped; then at
 *      most 1 s sending BYE to a producer that does not read its messages.
 * @ingroup ipc_consumer
 * @since 0.3
 */
clmem_status clmem_ipc_consumer_destroy(clmem_ipc_consumer *c, uint64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* CLMEM_IPC_H */
