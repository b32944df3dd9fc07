/*
 * The request loop: LOOP_THREADS threads take requests off the FUSE device and run them through
 * libfuse, as libfuse's multi-threaded loop does, with one difference: each thread waits in
 * epoll on the device *and* on a pipe, so that unmount() stops them all at once, even when
 * processes that still hold files open keep a lazily detached mount alive. The device is read
 * non-blocking: a request the kernel withdraws between the wake-up and the read (its caller was
 * killed) leaves the thread in epoll, never stuck in read().
 *
 * Thread 0 starts the others, serves like them, joins them, and then tears down: it detaches the
 * mount (libfuse's fuse_unmount: lazily, unless the kernel already has) and closes the device,
 * which fails whatever the kernel still has queued with ENOTCONN; fuse_destroy; then it tells
 * the main thread (ENDED) and lets go of the thread-safe function.
 */
#include "avfs_fuse.h" /* first: it sets the libfuse API version and _GNU_SOURCE */

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Serves requests until unmount(), the end of the connection, or an error; then stops the others. */
static void serve(mount_t *m, int slot) {
  ops_serve(m, slot);
  struct fuse_session *se = fuse_get_session(m->fuse);
  int fd = fuse_chan_fd(m->ch);
  size_t bufsize = fuse_chan_bufsize(m->ch);
  char *mem = malloc(bufsize);
  int ep = epoll_create1(EPOLL_CLOEXEC);
  /* EPOLLEXCLUSIVE: a request wakes one idle thread, not all of them. The pipe wakes them all. */
  struct epoll_event device = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.u32 = 0};
  struct epoll_event stop = {.events = EPOLLIN, .data.u32 = 1};
  int error = 0;
  if (!mem) {
    error = ENOMEM;
  } else if (ep < 0) {
    error = errno;
  } else if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &device) != 0) {
    device.events = EPOLLIN; /* a kernel before 4.5: every idle thread wakes, one reads */
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &device) != 0) error = errno;
  }
  if (!error && epoll_ctl(ep, EPOLL_CTL_ADD, m->wake[0], &stop) != 0) error = errno;
  while (!error && !fuse_session_exited(se)) {
    struct epoll_event ev[2];
    int n = epoll_wait(ep, ev, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    int stopping = 0;
    for (int i = 0; i < n; i++) stopping |= ev[i].data.u32 == 1;
    if (stopping) break;
    struct fuse_buf buf = {.size = bufsize, .mem = mem};
    struct fuse_chan *ch = m->ch;
    int res = fuse_session_receive_buf(se, &buf, &ch);
    if (res == -EINTR || res == -EAGAIN) continue; /* another thread took it, or it was withdrawn */
    if (res < 0) {
      error = -res;
      break;
    }
    if (res == 0) break; /* the kernel ended the connection: unmounted from outside */
    fuse_session_process_buf(se, &buf, ch);
  }
  if (error) {
    pthread_mutex_lock(&m->lock);
    if (!m->exit_error) m->exit_error = error;
    pthread_mutex_unlock(&m->lock);
  }
  if (ep >= 0) close(ep);
  free(mem);
  loop_stop(m); /* whatever ended this thread ends the others */
}

static void *worker_main(void *arg) {
  slot_t *s = arg;
  serve(s->mount, s->index);
  return NULL;
}

static void *loop_main(void *arg) {
  mount_t *m = arg;
  int fd = fuse_chan_fd(m->ch);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  int started[LOOP_THREADS] = {0};
  for (int i = 1; i < LOOP_THREADS; i++) {
    started[i] = pthread_create(&m->workers[i], NULL, worker_main, &m->slots[i]) == 0;
  }
  serve(m, 0);
  for (int i = 1; i < LOOP_THREADS; i++) {
    if (started[i]) pthread_join(m->workers[i], NULL);
  }
  fuse_unmount(m->mountpoint, m->ch);
  /* Also unlinks the `.fuse_hidden…` names of files still open at the end (through JS, slot 0). */
  fuse_destroy(m->fuse);
  napi_call_threadsafe_function(m->tsfn, (void *)(uintptr_t)ENDED, napi_tsfn_blocking);
  napi_release_threadsafe_function(m->tsfn, napi_tsfn_release);
  return NULL;
}

int loop_start(mount_t *m) {
  /* Signals are Node's business: the loop threads (which inherit this mask) take none. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&m->thread, NULL, loop_main, m);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return e;
}

void loop_stop(mount_t *m) {
  char c = 1;
  while (write(m->wake[1], &c, 1) < 0 && errno == EINTR) {
  }
}
