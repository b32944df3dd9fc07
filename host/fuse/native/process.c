/*
 * Processes and descriptors, for what outlives a run's owner (host/proxy/guard.ts):
 *
 * `spawnGuard(argv, stdinFd)` starts a small process (a run's guard) with posix_spawn. glibc's
 * posix_spawn does not copy this process's memory (the child shares it until it execs), so the
 * start costs the same in a 60 MB CLI as in the host; Node's spawn forks, ~3 ms here for the CLI,
 * more for the host. The guard has a session of its own (a signal to the owner's process group, or
 * a terminal's hangup, does not reach it), `/` as its directory (the owner's may be in a mount),
 * `stdinFd` as its standard input, /dev/null as its output and no other descriptor. It is reaped
 * by a thread of its own, so a long-lived owner gathers no zombies and JS keeps no list.
 *
 * `fds_close_on_exec_since(before)` (used around fuse_mount): libfuse 2 leaves the FUSE device and,
 * with auto_unmount, its socket to fusermount open across exec. Every command this process then
 * started held them: the connection of a dead server stayed up (calls into the mount hung instead
 * of failing) and fusermount never saw its socket close, so it never unmounted.
 */
#include "avfs_fuse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The listing's own descriptor is not counted: it is closed right after, so the next open (the
   FUSE device, in fuse_mount) takes its number, which was then taken for one open before and left
   open across exec: every command this process started held its mount's connection. */
void fds_open(open_fds_t *set) {
  memset(set, 0, sizeof *set);
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int own = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = atoi(e->d_name);
    if (fd != own && fd >= 0 && fd < OPEN_FDS_MAX) set->bits[fd / 8] |= (unsigned char)(1u << (fd % 8));
  }
  closedir(d);
}

/* Marks close-on-exec each descriptor from `lowest` up that is open now and not in `before` (NULL: none). */
static void close_on_exec(const open_fds_t *before, int lowest) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int own = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = atoi(e->d_name);
    if (fd == own || fd < lowest) continue;
    if (before && fd < OPEN_FDS_MAX && (before->bits[fd / 8] & (1u << (fd % 8)))) continue;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(d);
}

void fds_close_on_exec_since(const open_fds_t *before) { close_on_exec(before, 0); }

/* closeOnExecFrom3(): every descriptor but stdin, stdout and stderr is close-on-exec from now on
   (host/proxy/pipes.ts): what this process inherited from its caller (an agent's pipe, a file
   open outside the vault) or a library opened without the flag never reaches a sandboxed command. */
napi_value js_close_on_exec_from_3(napi_env env, napi_callback_info info) {
  (void)info;
  close_on_exec(NULL, 3);
  napi_value undef;
  napi_get_undefined(env, &undef);
  return undef;
}

static void *reap(void *arg) {
  pid_t pid = (pid_t)(intptr_t)arg;
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
  return NULL;
}

static void free_strings(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

/* spawnGuard(argv: string[], stdinFd: number): the child's pid. */
napi_value js_spawn_guard(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  bool is_array = false;
  int32_t in_fd = -1;
  uint32_t n = 0;
  if (argc == 2) napi_is_array(env, args[0], &is_array);
  if (!is_array || napi_get_value_int32(env, args[1], &in_fd) != napi_ok || in_fd < 0) {
    napi_throw_type_error(env, NULL, "spawnGuard(argv, stdinFd): argv is an array of strings, stdinFd a descriptor");
    return NULL;
  }
  napi_get_array_length(env, args[0], &n);
  if (n == 0) {
    napi_throw_type_error(env, NULL, "spawnGuard: argv is empty");
    return NULL;
  }
  char **argv = calloc(n + 1, sizeof *argv);
  if (!argv) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    size_t len = 0;
    napi_get_element(env, args[0], i, &v);
    if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok || !(argv[i] = malloc(len + 1))) {
      free_strings(argv);
      napi_throw_type_error(env, NULL, "spawnGuard: argv holds strings only");
      return NULL;
    }
    napi_get_value_string_utf8(env, v, argv[i], len + 1, &len);
  }

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
#if __GLIBC_PREREQ(2, 34)
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
#if __GLIBC_PREREQ(2, 29)
  posix_spawn_file_actions_addchdir_np(&actions, "/");
#endif
  /* Node blocks some signals in its threads and ignores SIGPIPE: the guard starts with the defaults. */
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int e = posix_spawn(&pid, argv[0], &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  free_strings(argv);
  if (e != 0) {
    napi_throw_error(env, NULL, strerror(e));
    return NULL;
  }

  pthread_t t;
  pthread_attr_t ta;
  pthread_attr_init(&ta);
  pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&ta, 64 * 1024);
  if (pthread_create(&t, &ta, reap, (void *)(intptr_t)pid) != 0) {
    /* No thread: the guard stays a zombie after it ends, until this process exits. Harmless. */
  }
  pthread_attr_destroy(&ta);
  napi_value out;
  napi_create_int32(env, pid, &out);
  return out;
}
