/*
 * The module JS loads: `mount(mountpoint, options, implemented, dispatch)` mounts and starts the
 * loop thread, and returns the mount's handle, `{ reply(seq, result, ...values), unmount() }`;
 * `pipe()` makes a pipe for a proxied command's output (host/proxy/pipes.ts); `spawnGuard(argv, fd)`
 * starts a run's guard (process.c, host/proxy/guard.ts); `peerCredentials(fd)` and `becomeRunner()`
 * tell a run's processes from a person's (peer.c, host/proxy/peer.ts).
 * `ops` lists the operation names in the order of the op codes dispatch receives; the code
 * `ops.length` means "the loop has ended" (its first argument is the errno it ended with, or 0).
 *
 * Lifetime. While the loop runs, the handle is held by a strong reference and the thread-safe
 * function keeps the event loop alive, as a listening server does. When the loop ends, the
 * thread is joined, JS is told, and both are let go, so a process that has unmounted can exit
 * on its own. If Node exits while mounted, the environment's cleanup hook releases a waiting
 * request, stops the loop and joins it, so exit never hangs on the thread.
 */
#include "avfs_fuse.h" /* first: it sets the libfuse API version and _GNU_SOURCE */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void stop_and_join(mount_t *m) {
  bridge_close(m);
  loop_stop(m);
  pthread_join(m->thread, NULL);
  m->state = MOUNT_ENDED;
}

static void on_env_exit(void *arg) {
  mount_t *m = arg;
  m->hooked = 0;
  if (m->state == MOUNT_RUNNING) stop_and_join(m);
}

static void free_mount(mount_t *m) {
  if (m->wake[0] >= 0) close(m->wake[0]);
  if (m->wake[1] >= 0) close(m->wake[1]);
  pthread_mutex_destroy(&m->lock);
  for (int i = 0; i < LOOP_THREADS; i++) pthread_cond_destroy(&m->slots[i].answered);
  free(m->mountpoint);
  free(m);
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)hint;
  mount_t *m = data;
  if (m->hooked) napi_remove_env_cleanup_hook(env, on_env_exit, m);
  if (m->state == MOUNT_RUNNING) stop_and_join(m);
  free_mount(m);
}

void mount_ended(napi_env env, mount_t *m, napi_value dispatch) {
  pthread_join(m->thread, NULL);
  m->state = MOUNT_ENDED;
  if (m->hooked) {
    napi_remove_env_cleanup_hook(env, on_env_exit, m);
    m->hooked = 0;
  }
  /* JS holds the handle for as long as it needs it; from here on it may be collected. */
  napi_delete_reference(env, m->handle);
  m->handle = NULL;
  for (int i = 0; i < LOOP_THREADS; i++) {
    if (m->slots[i].io) napi_delete_reference(env, m->slots[i].io);
    m->slots[i].io = NULL;
  }
  napi_value argv[6], recv, ignored;
  napi_create_int32(env, OP_COUNT, &argv[0]);
  for (int i = 1; i < 5; i++) napi_create_int32(env, 0, &argv[i]);
  napi_create_int32(env, m->exit_error, &argv[5]);
  napi_get_undefined(env, &recv);
  napi_call_function(env, recv, dispatch, 6, argv, &ignored);
}

static mount_t *this_mount(napi_env env, napi_callback_info info) {
  napi_value self;
  mount_t *m = NULL;
  napi_get_cb_info(env, info, NULL, NULL, &self, NULL);
  if (napi_unwrap(env, self, (void **)&m) != napi_ok || m == NULL) {
    napi_throw_type_error(env, NULL, "must be called on a mount handle");
    return NULL;
  }
  return m;
}

/*
 * Stops the loop: the request being served, if any, fails with EIO (a handler that never answers
 * cannot hold the mount), the loop detaches the mount and ends, and the dispatcher hears "ended".
 */
static napi_value js_unmount(napi_env env, napi_callback_info info) {
  mount_t *m = this_mount(env, info);
  if (m && m->state == MOUNT_RUNNING) {
    loop_stop(m);
    bridge_abort(m);
  }
  return NULL;
}

static char *string_arg(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  if (s) napi_get_value_string_utf8(env, v, s, len + 1, &len);
  return s;
}

static napi_value fail(napi_env env, mount_t *m, const char *message) {
  if (m) free_mount(m);
  napi_throw_error(env, NULL, message);
  return NULL;
}

/*
 * What libfuse and fusermount print on stderr while a mount is made, kept so the error can say
 * why (a user of the CLI or the host never sees the host process's stderr). Descriptor 2 points at
 * a memory file for the call (fusermount inherits it), then is put back, and what was caught is
 * also written to the real stderr, as before. `why` gets it on one line, control bytes escaped.
 */
typedef struct {
  int saved, file;
} capture_t;

static void capture_begin(capture_t *c) {
  fflush(stderr);
  c->saved = dup(2);
  c->file = memfd_create("avfs-mount-stderr", MFD_CLOEXEC);
  if (c->saved < 0 || c->file < 0 || dup2(c->file, 2) < 0) {
    if (c->file >= 0) close(c->file);
    if (c->saved >= 0) close(c->saved);
    c->saved = c->file = -1;
  }
}

#define WHY_MAX 480

static void capture_end(capture_t *c, char *why, size_t size) {
  why[0] = '\0';
  if (c->file < 0) return;
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  char raw[WHY_MAX];
  ssize_t n = pread(c->file, raw, sizeof raw, 0);
  close(c->file);
  if (n <= 0) return;
  if (write(2, raw, (size_t)n) < 0) { /* the real stderr is gone: the error still says why */ }
  size_t o = 0;
  for (ssize_t i = 0; i < n && o + 5 < size; i++) {
    unsigned char ch = (unsigned char)raw[i];
    if (ch == '\n' || ch == '\r' || ch == '\t') {
      if (i + 1 < n && o > 0) { why[o++] = ';'; why[o++] = ' '; }
    } else if (ch < 0x20 || ch == 0x7f) {
      o += (size_t)snprintf(why + o, size - o, "\\x%02x", ch);
    } else {
      why[o++] = (char)ch;
    }
  }
  while (o > 0 && (why[o - 1] == ' ' || why[o - 1] == ';')) o--;
  why[o] = '\0';
}

/* A fork that failed for want of processes (the user's RLIMIT_NPROC, still full of a run's
   dying processes) or a device that was busy: worth a second try after a short pause. */
static int transient(int err, const char *why) {
  return err == EAGAIN || err == EBUSY || strstr(why, "Resource temporarily unavailable") ||
         strstr(why, "Device or resource busy");
}

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static napi_value js_mount(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  napi_valuetype fn_type = napi_undefined;
  bool is_array = false;
  if (argc == 4) {
    napi_typeof(env, argv[3], &fn_type);
    napi_is_array(env, argv[2], &is_array);
  }
  if (fn_type != napi_function || !is_array) {
    return fail(env, NULL, "mount(mountpoint, options, implemented, dispatch): implemented is an array of op names, dispatch a function");
  }

  mount_t *m = calloc(1, sizeof *m);
  if (!m) return fail(env, NULL, "out of memory");
  m->wake[0] = m->wake[1] = -1;
  pthread_mutex_init(&m->lock, NULL);
  for (int i = 0; i < LOOP_THREADS; i++) {
    m->slots[i].mount = m;
    m->slots[i].index = i;
    pthread_cond_init(&m->slots[i].answered, NULL);
  }
  m->mountpoint = string_arg(env, argv[0]);
  char *options = string_arg(env, argv[1]);
  if (!m->mountpoint || !options) {
    free(options);
    return fail(env, m, "mountpoint and options must be strings");
  }

  int implemented[OP_COUNT] = {0};
  uint32_t n = 0;
  napi_get_array_length(env, argv[2], &n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    char name[32] = "";
    size_t len = 0;
    napi_get_element(env, argv[2], i, &v);
    napi_get_value_string_utf8(env, v, name, sizeof name, &len);
    for (int op = 0; op < OP_COUNT; op++) {
      if (strcmp(name, op_names[op]) == 0) implemented[op] = 1;
    }
  }
  ops_fill(&m->ops, implemented);

  if (pipe2(m->wake, O_CLOEXEC) != 0) {
    free(options);
    return fail(env, m, strerror(errno));
  }

  /* The same argument list serves fuse_mount (which takes the mount options out of it) and
     fuse_new (which takes the rest and refuses what it does not know), as fuse_main does. */
  struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
  fuse_opt_add_arg(&args, "avfs");
  if (*options) {
    fuse_opt_add_arg(&args, "-o");
    fuse_opt_add_arg(&args, options);
  }
  free(options);
  char why[WHY_MAX * 4 + 8] = "";
  char message[sizeof why + 64];
  /* fuse_mount takes the mount options out of args, so each try gets a copy of the list. */
  for (long backoff = 50;; backoff *= 4) {
    struct fuse_args copy = FUSE_ARGS_INIT(0, NULL);
    for (int i = 0; i < args.argc; i++) fuse_opt_add_arg(&copy, args.argv[i]);
    capture_t c;
    capture_begin(&c);
    open_fds_t before;
    fds_open(&before);
    errno = 0;
    m->ch = fuse_mount(m->mountpoint, &copy);
    int err = errno;
    fds_close_on_exec_since(&before);
    capture_end(&c, why, sizeof why);
    if (m->ch || backoff > 800 || !transient(err, why)) {
      fuse_opt_free_args(&args);
      args = copy;
      break;
    }
    fuse_opt_free_args(&copy);
    pause_ms(backoff);
  }
  if (!m->ch) {
    fuse_opt_free_args(&args);
    snprintf(message, sizeof message, "fuse_mount failed: %s", *why ? why : "libfuse gave no reason");
    return fail(env, m, message);
  }
  capture_t c;
  capture_begin(&c);
  m->fuse = fuse_new(m->ch, &args, &m->ops, sizeof m->ops, m);
  capture_end(&c, why, sizeof why);
  fuse_opt_free_args(&args);
  if (!m->fuse) {
    fuse_unmount(m->mountpoint, m->ch);
    snprintf(message, sizeof message, "fuse_new failed: %s", *why ? why : "libfuse gave no reason");
    return fail(env, m, message);
  }

  napi_value name;
  napi_create_string_utf8(env, "avfs-fuse", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, argv[3], NULL, name, 0, 1, NULL, NULL, m, bridge_call_js, &m->tsfn) != napi_ok) {
    fuse_unmount(m->mountpoint, m->ch);
    fuse_destroy(m->fuse);
    return fail(env, m, "cannot create the thread-safe function");
  }
  int e = loop_start(m);
  if (e != 0) {
    napi_release_threadsafe_function(m->tsfn, napi_tsfn_abort);
    fuse_unmount(m->mountpoint, m->ch);
    fuse_destroy(m->fuse);
    return fail(env, m, strerror(e));
  }
  m->state = MOUNT_RUNNING;

  napi_value handle;
  napi_property_descriptor methods[] = {
      {"reply", NULL, bridge_reply, NULL, NULL, NULL, napi_default, NULL},
      {"unmount", NULL, js_unmount, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_create_object(env, &handle);
  napi_define_properties(env, handle, 2, methods);
  napi_wrap(env, handle, m, finalize, NULL, NULL);
  napi_create_reference(env, handle, 1, &m->handle);
  napi_add_env_cleanup_hook(env, on_env_exit, m);
  m->hooked = 1;
  return handle;
}

/* pipe(): [readFd, writeFd], both close-on-exec. A command's stdout and stderr are real pipes
   (so /dev/stdout reopens), which Node cannot make itself (its child pipes are socket pairs). */
static napi_value js_pipe(napi_env env, napi_callback_info info) {
  (void)info;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  napi_value arr, fd;
  napi_create_array_with_length(env, 2, &arr);
  for (uint32_t i = 0; i < 2; i++) {
    napi_create_int32(env, fds[i], &fd);
    napi_set_element(env, arr, i, fd);
  }
  return arr;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value ops, fn;
  napi_create_array_with_length(env, OP_COUNT, &ops);
  for (uint32_t i = 0; i < OP_COUNT; i++) {
    napi_value s;
    napi_create_string_utf8(env, op_names[i], NAPI_AUTO_LENGTH, &s);
    napi_set_element(env, ops, i, s);
  }
  napi_set_named_property(env, exports, "ops", ops);
  napi_create_function(env, "mount", NAPI_AUTO_LENGTH, js_mount, NULL, &fn);
  napi_set_named_property(env, exports, "mount", fn);
  napi_create_function(env, "pipe", NAPI_AUTO_LENGTH, js_pipe, NULL, &fn);
  napi_set_named_property(env, exports, "pipe", fn);
  napi_create_function(env, "spawnGuard", NAPI_AUTO_LENGTH, js_spawn_guard, NULL, &fn);
  napi_set_named_property(env, exports, "spawnGuard", fn);
  napi_create_function(env, "peerCredentials", NAPI_AUTO_LENGTH, js_peer_credentials, NULL, &fn);
  napi_set_named_property(env, exports, "peerCredentials", fn);
  napi_create_function(env, "becomeRunner", NAPI_AUTO_LENGTH, js_become_runner, NULL, &fn);
  napi_set_named_property(env, exports, "becomeRunner", fn);
  napi_create_function(env, "scanTree", NAPI_AUTO_LENGTH, js_scan_tree, NULL, &fn);
  napi_set_named_property(env, exports, "scanTree", fn);
  napi_create_function(env, "readFiles", NAPI_AUTO_LENGTH, js_read_files, NULL, &fn);
  napi_set_named_property(env, exports, "readFiles", fn);
  napi_create_function(env, "reapChild", NAPI_AUTO_LENGTH, js_reap_child, NULL, &fn);
  napi_set_named_property(env, exports, "reapChild", fn);
  napi_create_function(env, "closeOnExecFrom3", NAPI_AUTO_LENGTH, js_close_on_exec_from_3, NULL, &fn);
  napi_set_named_property(env, exports, "closeOnExecFrom3", fn);
  return exports;
}

NAPI_MODULE(avfs_fuse, init)
