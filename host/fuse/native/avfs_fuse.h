/*
 * avfs's FUSE binding: libfuse 2 (high-level, path API) driven from Node through N-API.
 *
 * Threads. A few loop threads of our own (loop.c) take requests off the FUSE device and run them
 * through libfuse. Each file system call libfuse makes (ops.c) becomes a `request_t` on that
 * thread's stack, handed to the JS main thread through a thread-safe function (bridge.c); the
 * loop thread then waits on its slot's condition variable until JS answers (or the process is
 * shutting down). JS answers by calling `reply(seq, ...)` on the mount handle, synchronously or
 * later; only a request still waiting with that sequence number accepts an answer, so a late or
 * repeated answer never writes into a request that is gone. JS runs one handler at a time; the
 * other loop threads meanwhile take the next requests off the device (readahead, parallel
 * callers such as git's threaded lstat), as libfuse's own multi-threaded loop does.
 *
 * Data. Values cross as JS values (marshal.c): strings for paths, numbers for sizes and modes,
 * BigInt nanoseconds for times (both ways, so nanoseconds, times before 1970 and after 2038
 * are carried whole), "now"/"omit" for UTIME_NOW/UTIME_OMIT. Bytes are copied through one
 * Buffer per loop thread, owned by JS: a write's bytes are copied into it before the call, a read's
 * are copied out of it into the kernel's buffer on reply. So nothing JS holds ever points at
 * libfuse's memory, and no Buffer is allocated per call (a 100 MiB write would otherwise
 * allocate 100 MiB of Buffers for the garbage collector). Its bytes are the handler's until it
 * answers; what must outlive the call is copied out.
 */
#ifndef AVFS_FUSE_H
#define AVFS_FUSE_H

#define _GNU_SOURCE
#define FUSE_USE_VERSION 26
#define NAPI_VERSION 8

#include <fuse.h>
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/* The operations JS may implement; their names (op_names) are what JS uses. */
typedef enum {
  OP_INIT,
  OP_GETATTR,
  OP_FGETATTR,
  OP_ACCESS,
  OP_READDIR,
  OP_READLINK,
  OP_OPEN,
  OP_CREATE,
  OP_READ,
  OP_WRITE,
  OP_FLUSH,
  OP_FSYNC,
  OP_FSYNCDIR,
  OP_RELEASE,
  OP_TRUNCATE,
  OP_FTRUNCATE,
  OP_UTIMENS,
  OP_CHMOD,
  OP_CHOWN,
  OP_MKNOD,
  OP_MKDIR,
  OP_RMDIR,
  OP_UNLINK,
  OP_RENAME,
  OP_LINK,
  OP_SYMLINK,
  OP_STATFS,
  OP_COUNT
} op_t;

extern const char *const op_names[OP_COUNT];

/*
 * How many loop threads take requests off the device. One JS thread answers them, so more would
 * only queue more; a few let readahead and parallel callers keep the main thread busy.
 */
#define LOOP_THREADS 4

/* One file system call from libfuse, waiting for its answer from JS. */
typedef struct {
  op_t op;
  int slot;              /* the loop thread's slot (mount_t.slots) */
  uint64_t seq;
  /* The calling process (fuse_get_context). */
  uid_t uid;
  gid_t gid;
  pid_t pid;
  /* Arguments; which are set depends on op. */
  const char *path;
  const char *path2;
  mode_t mode;
  dev_t dev;
  uid_t new_uid;
  gid_t new_gid;
  off_t offset;
  size_t size;
  int flags;
  int datasync;
  const struct timespec *times;
  const char *write_data;
  struct fuse_file_info *fi;
  /* Where the answer goes. */
  struct stat *st;
  struct statvfs *sv;
  char *out;             /* read: the kernel's buffer; readlink: the link buffer */
  void *dir_buf;
  fuse_fill_dir_t filler;
  int result;            /* 0, a byte count, or -errno */
  int done;
} request_t;

typedef enum { MOUNT_RUNNING, MOUNT_ENDED } mount_state_t;

/* What one loop thread has with the main thread. */
typedef struct {
  struct mount *mount;
  int index;
  request_t *request;    /* the request this thread waits on, or NULL */
  pthread_cond_t answered;
  napi_ref io;           /* the Buffer its read and write bytes go through (main thread only) */
  char *io_data;
  size_t io_size;
} slot_t;

/* One mount. Freed when its JS handle is collected, which the handle cannot be while mounted. */
typedef struct mount {
  napi_threadsafe_function tsfn;
  napi_ref handle;       /* strong while the loop runs: the handle must outlive the thread */
  mount_state_t state;
  int hooked;            /* the environment cleanup hook is registered */
  char *mountpoint;
  struct fuse_chan *ch;
  struct fuse *fuse;
  struct fuse_operations ops;
  pthread_t thread;      /* loop thread 0, which also starts, joins and outlives the others */
  pthread_t workers[LOOP_THREADS];
  int wake[2];           /* a pipe: a byte written here stops every loop thread */
  int exit_error;        /* why the loop ended, or 0 for a normal end */

  pthread_mutex_t lock;  /* guards the slots' requests, seq and closing */
  slot_t slots[LOOP_THREADS];
  uint64_t seq;
  int closing;           /* the Node environment is going away: nobody will answer */
} mount_t;

/* bridge.c: the loop thread's side (send and wait) and the main thread's side (dispatch, reply). */
int bridge_send(mount_t *m, request_t *r);
void bridge_call_js(napi_env env, napi_value dispatch, void *context, void *data);
napi_value bridge_reply(napi_env env, napi_callback_info info);
/* Main thread: fails every request still waiting (unmount must not wait for an answer that may never come). */
void bridge_abort(mount_t *m);
/* Main thread, Node shutting down: nobody will answer; release the loop thread and refuse new requests. */
void bridge_close(mount_t *m);

/* marshal.c: arguments to JS, answers from JS (main thread). */
size_t marshal_args(napi_env env, mount_t *m, request_t *r, napi_value *argv);
/* NULL, or why the answer was refused (the request then fails with EIO). */
const char *marshal_answer(napi_env env, mount_t *m, request_t *r, size_t argc, napi_value *argv);

/* ops.c: the libfuse operation table for the operations JS implements. */
void ops_fill(struct fuse_operations *ops, const int implemented[OP_COUNT]);
void ops_serve(mount_t *m, int slot); /* the mount (and slot) this thread's operations send to */

/* addon.c: the loop thread has ended (main thread): join it, tell JS, let the handle go. */
void mount_ended(napi_env env, mount_t *m, napi_value dispatch);

/* loop.c: the loop thread. */
int loop_start(mount_t *m);
void loop_stop(mount_t *m);

/* process.c: a run's guard (spawnGuard), and which descriptors a call opened (around fuse_mount). */
#define OPEN_FDS_MAX 4096
typedef struct {
  unsigned char bits[OPEN_FDS_MAX / 8];
} open_fds_t;
void fds_open(open_fds_t *set);
/* Marks close-on-exec every descriptor open now that was not in `before`. */
void fds_close_on_exec_since(const open_fds_t *before);
napi_value js_spawn_guard(napi_env env, napi_callback_info info);
napi_value js_close_on_exec_from_3(napi_env env, napi_callback_info info);

/* peer.c: the credentials of a Unix socket's peer; marking the process that starts a run's commands. */
#define RUNNER_NAME "avfs-runner"
napi_value js_peer_credentials(napi_env env, napi_callback_info info);
napi_value js_become_runner(napi_env env, napi_callback_info info);
napi_value js_reap_child(napi_env env, napi_callback_info info);

/* tree.c: a working copy's walk and reads, one call each (host/proxy/workingCopy.ts). */
napi_value js_scan_tree(napi_env env, napi_callback_info info);
napi_value js_read_files(napi_env env, napi_callback_info info);

/* Items queued to the main thread are request sequence numbers (from 1); this one means the loop has ended. */
#define ENDED 0

#endif
