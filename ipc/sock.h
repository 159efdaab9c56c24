/* SPDX-License-Identifier: MIT */
/* Internal: one message in or out of the socket, with its fds and the
 * sender's credentials, and the clock every wait is measured on. The
 * checks that need the kernel's word (truncation, control data, how many
 * fds came) are made here; what the bytes mean is wire.c's and proto.c's. */
#ifndef CLMEM_IPC_SOCK_H
#define CLMEM_IPC_SOCK_H
#include "wire.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* At most this many fds are taken from one message's control data; a
 * message with more is refused (MSG_CTRUNC: the kernel drops the rest). */
#define IPC_RECV_MAX_FDS 4

/* How long a send may wait for room in the socket before the peer is
 * deemed not to read its messages: 1 s. */
#define IPC_SEND_WAIT_NS UINT64_C(1000000000)

/* Is fd a connected AF_UNIX SOCK_SEQPACKET socket? CLMEM_ERR_INVALID_VALUE
 * naming what it is otherwise. Also turns on SO_PASSCRED, so that the
 * peer's pid arrives with its messages (SCM_CREDENTIALS). */
clmem_status clmem__ipc_socket_check(int fd);

/* The checks of a versioned info struct both sides make: its size field
 * (`size`) against what this library knows (`known` bytes of the struct
 * named `type`), with every byte past those zero; and its flags, of which
 * none are defined. CLMEM_OK or the failure, recorded. */
clmem_status clmem__ipc_check_info_size(const void *info, size_t size, size_t known, const char *type);
clmem_status clmem__ipc_no_flags(uint32_t flags);

/* The refusals of a start made twice, and of a call that needs the
 * connection open before its start (`who`: "producer", "consumer"). */
clmem_status clmem__ipc_started_twice(clmem_ipc_state state);
clmem_status clmem__ipc_not_started(const char *who, clmem_ipc_state state);

enum recv_result {
    RECV_MESSAGE, /* *m is a well-formed message; *fd_out its fd or -1 */
    RECV_EOF,     /* the peer closed its end (or reset it) */
    RECV_TIMEOUT, /* nothing by the deadline */
    RECV_BAD      /* the error is recorded (a malformed message, a socket error); any fd that came is closed */
};

/* Wait until the deadline for one message and parse it (wire.c): `who` is
 * the peer's name for sentences ("producer"). *pid_out gets the sender's
 * pid when credentials came with it (0 otherwise). */
enum recv_result clmem__ipc_recv(int sock, uint64_t deadline_ns, const char *who, struct ipc_msg *m, int *fd_out,
                                 pid_t *pid_out);

/* What the peer said during the handshake, or before it closed its end:
 * each side maps these to its own ending. */
enum peer_result {
    PEER_MESSAGE, /* *m is a message other than ERROR and BYE */
    PEER_ERROR,   /* *m is the peer's ERROR */
    PEER_BYE,     /* the peer said BYE */
    PEER_GONE,    /* the peer closed its end without either */
    PEER_BAD,     /* the error is recorded: as RECV_BAD, or the handshake's time ran out */
    PEER_WAITING  /* nothing yet and the deadline not reached: receive again */
};

/* What one receive of a handshake message (r, and *m where r is
 * RECV_MESSAGE) means for the handshake, which must be over by `deadline`,
 * timeout_ns after it began. Past the deadline, PEER_BAD with
 * CLMEM_ERR_TIMEOUT recorded: "The <who> did not complete the handshake
 * within 2 s." */
enum peer_result clmem__ipc_handshake_result(enum recv_result r, const struct ipc_msg *m, const char *who,
                                             uint64_t timeout_ns, uint64_t deadline);

/* A send found the peer's end closed. What the peer sent before closing is
 * still in the socket, and may say why (ERROR) or that it ended (BYE):
 * read it all before concluding that the peer is gone. Any other message
 * is passed over and its fd closed. PEER_ERROR, PEER_BYE, PEER_GONE or
 * PEER_BAD. */
enum peer_result clmem__ipc_recv_after_close(int sock, const char *who, struct ipc_msg *m);

enum send_result {
    SEND_OK,
    SEND_GONE, /* the peer closed its end: EPIPE, ECONNRESET */
    SEND_BAD   /* the error is recorded: no room until the deadline, or another socket error */
};

/* Send m, with fd (or -1) by SCM_RIGHTS, waiting for room until the
 * deadline. Never raises SIGPIPE. The fd stays the caller's. */
enum send_result clmem__ipc_send(int sock, const struct ipc_msg *m, int fd, uint64_t deadline_ns);

/* Best effort, for a side that drops the connection: send ERROR with the
 * status and this thread's error sentence (not waiting for room), then
 * shut the socket down both ways so that the peer sees the end at once. */
void clmem__ipc_send_error_and_shutdown(int sock, clmem_status status);
#endif
