/*
 * Who is on the other end, for "only a person answers" (host/proxy/peer.ts):
 *
 * `peerCredentials(fd)`: the pid, uid and gid of the process that connected a Unix socket, from
 * the kernel (SO_PEERCRED: taken at connect(), in this process's pid namespace), never from what
 * the client says. Node does not expose it.
 *
 * `becomeRunner()`: this process starts commands for avfs runs. It becomes a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so a command's descendant that double-forks away from its parent is
 * re-parented to this process, not to init: every process a run starts keeps this one among its
 * ancestors. And its name (/proc/PID/comm) becomes `avfs-runner`, which its descendants cannot
 * change: that is how a host tells a run's process from a person's.
 *
 * `reapChild(pid)`: collects an exited child this process adopted as subreaper (Node waits only for
 * the children it spawned itself); true when it was collected.
 */
#include "avfs_fuse.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

napi_value js_peer_credentials(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  int32_t fd = -1;
  napi_get_cb_info(env, info, &argc, &arg, NULL, NULL);
  if (argc != 1 || napi_get_value_int32(env, arg, &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, NULL, "peerCredentials(fd): fd is a descriptor");
    return NULL;
  }
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  napi_value out, v;
  napi_create_object(env, &out);
  napi_create_int32(env, cred.pid, &v);
  napi_set_named_property(env, out, "pid", v);
  napi_create_uint32(env, cred.uid, &v);
  napi_set_named_property(env, out, "uid", v);
  napi_create_uint32(env, cred.gid, &v);
  napi_set_named_property(env, out, "gid", v);
  return out;
}

napi_value js_become_runner(napi_env env, napi_callback_info info) {
  (void)info;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || prctl(PR_SET_NAME, RUNNER_NAME, 0, 0, 0) != 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  return NULL;
}

napi_value js_reap_child(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg, out;
  int32_t pid = -1;
  napi_get_cb_info(env, info, &argc, &arg, NULL, NULL);
  if (argc != 1 || napi_get_value_int32(env, arg, &pid) != napi_ok || pid <= 0) {
    napi_throw_type_error(env, NULL, "reapChild(pid): pid is a process id");
    return NULL;
  }
  pid_t r;
  while ((r = waitpid(pid, NULL, WNOHANG)) < 0 && errno == EINTR) {
  }
  napi_get_boolean(env, r == pid, &out);
  return out;
}
