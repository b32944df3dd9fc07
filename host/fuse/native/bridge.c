/*
 * The handoff between the loop threads and the JS main thread.
 *
 * A loop thread publishes its request in its slot, queues the request's sequence number on the
 * thread-safe function and sleeps until the main thread marks the request done. The main thread
 * calls the JS dispatcher with the request's arguments; JS answers through `reply(seq, result,
 * ...)`, at once or later. An answer counts only for a request still waiting with that sequence
 * number, so a second or late answer is ignored instead of writing into a request that has
 * returned.
 */
#include "avfs_fuse.h" /* first: it sets the libfuse API version and _GNU_SOURCE */

#include <errno.h>

int bridge_send(mount_t *m, request_t *r) {
  slot_t *s = &m->slots[r->slot];
  pthread_mutex_lock(&m->lock);
  if (m->closing) {
    pthread_mutex_unlock(&m->lock);
    return -EIO;
  }
  r->seq = ++m->seq;
  s->request = r;
  pthread_mutex_unlock(&m->lock);

  /* The queued item is the sequence number, not the request: by the time the main thread gets to
     it, the request may have been failed (unmount) and its stack frame reused by the next one. */
  if (napi_call_threadsafe_function(m->tsfn, (void *)(uintptr_t)r->seq, napi_tsfn_blocking) != napi_ok) {
    pthread_mutex_lock(&m->lock);
    s->request = NULL;
    pthread_mutex_unlock(&m->lock);
    return -EIO;
  }

  pthread_mutex_lock(&m->lock);
  while (!r->done && !m->closing) pthread_cond_wait(&s->answered, &m->lock);
  if (!r->done) {
    /* Node is shutting down: nobody will answer. */
    s->request = NULL;
    r->result = -EIO;
  }
  pthread_mutex_unlock(&m->lock);
  return r->result;
}

/* Main thread, lock held: the request has its answer. Returns the condition to signal. */
static pthread_cond_t *finish_locked(mount_t *m, request_t *r) {
  slot_t *s = &m->slots[r->slot];
  r->done = 1;
  s->request = NULL;
  return &s->answered;
}

/* Main thread: the request has its answer; its loop thread may go on. The signal comes after
   the unlock, so the woken thread does not wait for the lock still held here. */
static void finish(mount_t *m, request_t *r) {
  pthread_mutex_lock(&m->lock);
  pthread_cond_t *answered = finish_locked(m, r);
  pthread_mutex_unlock(&m->lock);
  pthread_cond_signal(answered);
}

/* Main thread: the request with sequence number `seq` if it is still waiting for its answer, else NULL. */
static request_t *waiting(mount_t *m, uint64_t seq) {
  request_t *found = NULL;
  pthread_mutex_lock(&m->lock);
  for (int i = 0; i < LOOP_THREADS && !m->closing && !found; i++) {
    request_t *w = m->slots[i].request;
    if (w && w->seq == seq) found = w;
  }
  pthread_mutex_unlock(&m->lock);
  return found;
}

void bridge_call_js(napi_env env, napi_value dispatch, void *context, void *data) {
  mount_t *m = context;
  /* No environment: Node is tearing it down, and the cleanup hook (addon.c) released the loop threads. */
  if (env == NULL) return;
  uint64_t seq = (uintptr_t)data;
  if (seq == ENDED) {
    mount_ended(env, m, dispatch);
    return;
  }
  request_t *r = waiting(m, seq);
  if (!r) return;

  /* dispatch(op, seq, uid, gid, pid, ...the op's arguments) */
  napi_value argv[5 + 6];
  napi_create_int32(env, r->op, &argv[0]);
  napi_create_double(env, (double)seq, &argv[1]);
  napi_create_uint32(env, r->uid, &argv[2]);
  napi_create_uint32(env, r->gid, &argv[3]);
  napi_create_int32(env, r->pid, &argv[4]);
  size_t n = marshal_args(env, m, r, argv + 5);
  if (n == (size_t)-1) {
    r->result = -ENOMEM;
    finish(m, r);
    return;
  }
  napi_value recv, ignored;
  napi_get_undefined(env, &recv);
  if (napi_call_function(env, recv, dispatch, 5 + n, argv, &ignored) != napi_ok && waiting(m, seq) == r) {
    /* The dispatcher threw before answering: fail the call. The exception stays pending and
       surfaces as an uncaught one, as any bug should. */
    r->result = -EIO;
    finish(m, r);
  }
}

napi_value bridge_reply(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4], self, answer;
  napi_get_cb_info(env, info, &argc, argv, &self, NULL);
  mount_t *m = NULL;
  if (napi_unwrap(env, self, (void **)&m) != napi_ok || m == NULL) {
    napi_throw_type_error(env, NULL, "reply() must be called on a mount handle");
    return NULL;
  }
  double seq = 0;
  int32_t result = 0;
  if (argc < 1 || napi_get_value_double(env, argv[0], &seq) != napi_ok) {
    napi_throw_type_error(env, NULL, "reply(seq, result, ...values): seq must be a number");
    return NULL;
  }
  /* A result that is not a number still answers the call (with EIO), then throws. */
  int result_ok = argc >= 2 && napi_get_value_int32(env, argv[1], &result) == napi_ok;
  request_t *r = seq >= 1 ? waiting(m, (uint64_t)seq) : NULL;
  if (!r) {
    napi_get_boolean(env, false, &answer);
    return answer;
  }
  r->result = result_ok ? result : -EIO;
  const char *bad = result_ok ? marshal_answer(env, m, r, argc - 1, argv + 1) : "reply(seq, result, ...values): result must be a number";
  finish(m, r);
  if (bad) {
    napi_throw_type_error(env, NULL, bad);
    return NULL;
  }
  napi_get_boolean(env, true, &answer);
  return answer;
}

void bridge_abort(mount_t *m) {
  pthread_mutex_lock(&m->lock);
  for (int i = 0; i < LOOP_THREADS; i++) {
    request_t *r = m->slots[i].request;
    if (!r) continue;
    r->result = -EIO;
    finish_locked(m, r);
  }
  pthread_mutex_unlock(&m->lock);
  for (int i = 0; i < LOOP_THREADS; i++) pthread_cond_signal(&m->slots[i].answered);
}

void bridge_close(mount_t *m) {
  pthread_mutex_lock(&m->lock);
  m->closing = 1;
  for (int i = 0; i < LOOP_THREADS; i++) pthread_cond_broadcast(&m->slots[i].answered);
  pthread_mutex_unlock(&m->lock);
}
