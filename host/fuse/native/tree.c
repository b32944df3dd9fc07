/*
 * A working copy's walk and reads, in one call each (host/proxy/workingCopy.ts, `--materialize`):
 *
 * `scanTree(root)` walks a directory tree with one statx per entry (no BigInt stat objects, no
 * call per file into JS) and returns `{ paths, stats }`: the paths below `root` ("/a", "/a/b", in
 * the order of a depth-first walk, a directory before what it holds), joined by NUL, and for each
 * one six 64-bit fields (mode, inode, size, mtime, ctime and birth time in ns; birth time 0 where
 * the file system keeps none). Entries that are not regular files, directories or symlinks are
 * left out, and not entered. Returns null when the walk fails (an entry gone or unreadable
 * meanwhile): the caller's own walk then reports what is wrong.
 *
 * `readFiles(root, paths, sizes)` reads the files at `paths` (NUL-joined, below `root`) whose
 * sizes the walk gave into one buffer, and returns `{ data, lengths }`: the bytes read of each (a
 * Float64Array; file i's bytes start at the sum of (size + 1) of the files before it: each slot has
 * a byte to spare, by which a file that grew is noticed), -1 for a file that is not that size any
 * more (grew, or cannot be read), which the caller reads again on its own. Up to two threads read
 * (this machine's open/read/close of a small file costs 6-12 µs, most of it in the kernel).
 */
#define _GNU_SOURCE
#include "avfs_fuse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIELDS 6

typedef struct {
  char *buf;
  size_t len, cap;
} bytes_t;

static int put(bytes_t *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + n) cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (!nb) return -1;
    b->buf = nb;
    b->cap = cap;
  }
  memcpy(b->buf + b->len, p, n);
  b->len += n;
  return 0;
}

static int64_t ns(struct statx_timestamp t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

/* Walks the directory open at `dfd` (path `prefix`, "" for the root); closes `dfd`. */
static int walk(int dfd, bytes_t *prefix, bytes_t *paths, bytes_t *stats) {
  DIR *d = fdopendir(dfd);
  if (!d) {
    close(dfd);
    return -1;
  }
  int rc = 0;
  struct dirent *e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    const char *name = e->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
    struct statx sx;
    if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0) {
      rc = -1;
      break;
    }
    mode_t fmt = sx.stx_mode & S_IFMT;
    if (fmt != S_IFREG && fmt != S_IFDIR && fmt != S_IFLNK) continue;
    size_t at = prefix->len;
    size_t nlen = strlen(name);
    if (put(prefix, "/", 1) || put(prefix, name, nlen) || put(paths, prefix->buf, prefix->len) || put(paths, "", 1)) {
      rc = -1;
      break;
    }
    int64_t f[FIELDS] = {
        (int64_t)sx.stx_mode, (int64_t)sx.stx_ino, (int64_t)sx.stx_size, ns(sx.stx_mtime), ns(sx.stx_ctime), (sx.stx_mask & STATX_BTIME) ? ns(sx.stx_btime) : 0,
    };
    if (put(stats, f, sizeof f)) {
      rc = -1;
      break;
    }
    if (fmt == S_IFDIR) {
      int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0 || walk(sub, prefix, paths, stats) != 0) {
        rc = -1;
        break;
      }
    }
    prefix->len = at;
    errno = 0;
  }
  if (rc == 0 && errno != 0) rc = -1;
  closedir(d);
  return rc;
}

static int string_arg(napi_env env, napi_value v, char **out, size_t *len) {
  size_t n;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok) return -1;
  *out = malloc(n + 1);
  if (!*out) return -1;
  napi_get_value_string_utf8(env, v, *out, n + 1, &n);
  if (len) *len = n;
  return 0;
}

static napi_value null_value(napi_env env) {
  napi_value v;
  napi_get_null(env, &v);
  return v;
}

static void free_bytes(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

napi_value js_scan_tree(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char *root;
  if (argc < 1 || string_arg(env, argv[0], &root, NULL) != 0) {
    napi_throw_type_error(env, NULL, "scanTree(root)");
    return NULL;
  }
  int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free(root);
  if (fd < 0) return null_value(env);
  bytes_t prefix = {0}, paths = {0}, stats = {0};
  int rc = walk(fd, &prefix, &paths, &stats);
  free(prefix.buf);
  if (rc != 0) {
    free(paths.buf);
    free(stats.buf);
    return null_value(env);
  }
  napi_value out, p, s;
  /* The last path's NUL is left out: split('\0') gives the paths alone. */
  napi_create_string_utf8(env, paths.buf ? paths.buf : "", paths.len ? paths.len - 1 : 0, &p);
  free(paths.buf);
  if (stats.len == 0) {
    free(stats.buf);
    napi_create_buffer(env, 0, NULL, &s);
  } else if (napi_create_external_buffer(env, stats.len, stats.buf, free_bytes, NULL, &s) != napi_ok) {
    void *copy;
    napi_create_buffer_copy(env, stats.len, stats.buf, &copy, &s);
    free(stats.buf);
  }
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "paths", p);
  napi_set_named_property(env, out, "stats", s);
  return out;
}

typedef struct {
  int rfd;
  char **names;
  const double *sizes;
  double *lens;
  char *out;
  size_t from, to;
  const size_t *offs;
} read_job_t;

/* Reads files [from, to) of a job into their slots (each slot one byte longer than its size). */
static void *read_range(void *arg) {
  read_job_t *j = arg;
  for (size_t i = j->from; i < j->to; i++) {
    size_t want = (size_t)j->sizes[i];
    char *dst = j->out + j->offs[i];
    j->lens[i] = -1;
    const char *name = j->names[i];
    /* Paths are "/a/b": relative to the root's descriptor without the leading slash. */
    int fd = openat(j->rfd, name[0] == '/' ? name + 1 : name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    /* One byte more than expected: a file that grew is noticed. */
    size_t got = 0;
    for (;;) {
      ssize_t n = read(fd, dst + got, want + 1 - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n < 0) got = want + 1;
        break;
      }
      got += (size_t)n;
      if (got > want) break;
    }
    close(fd);
    if (got <= want) j->lens[i] = (double)got;
  }
  return NULL;
}

#define READ_THREADS 2
/* Below this many files a second thread costs more than it saves. */
#define FILES_PER_THREAD 256

napi_value js_read_files(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char *root = NULL, *names = NULL;
  size_t names_len = 0;
  bool typed = false;
  if (argc >= 3) napi_is_typedarray(env, argv[2], &typed);
  if (argc < 3 || !typed || string_arg(env, argv[0], &root, NULL) != 0 || string_arg(env, argv[1], &names, &names_len) != 0) {
    free(root);
    napi_throw_type_error(env, NULL, "readFiles(root, paths, sizes)");
    return NULL;
  }
  napi_typedarray_type type;
  size_t count;
  void *sizes_data;
  napi_get_typedarray_info(env, argv[2], &type, &count, &sizes_data, NULL, NULL);
  if (type != napi_float64_array) {
    free(root);
    free(names);
    napi_throw_type_error(env, NULL, "readFiles: sizes must be a Float64Array");
    return NULL;
  }
  const double *sizes = sizes_data;
  char **starts = malloc((count + 1) * sizeof *starts);
  size_t *offs = malloc((count + 1) * sizeof *offs);
  size_t total = 0, found = 0;
  for (char *p = names; found < count && p <= names + names_len; p += strlen(p) + 1) starts[found++] = p;
  for (size_t i = 0; i < count; i++) {
    offs[i] = total;
    total += (size_t)sizes[i] + 1;
  }
  napi_value data, lengths_ab, lengths;
  void *out, *lens_data;
  if (found != count || napi_create_buffer(env, total, &out, &data) != napi_ok) {
    free(root);
    free(names);
    free(starts);
    free(offs);
    if (found != count) napi_throw_type_error(env, NULL, "readFiles: as many paths as sizes");
    return NULL;
  }
  napi_create_arraybuffer(env, count * sizeof(double), &lens_data, &lengths_ab);
  napi_create_typedarray(env, napi_float64_array, count, lengths_ab, 0, &lengths);
  double *lens = lens_data;
  for (size_t i = 0; i < count; i++) lens[i] = -1;
  int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free(root);
  if (rfd >= 0) {
    size_t threads = count / FILES_PER_THREAD;
    if (threads < 1) threads = 1;
    if (threads > READ_THREADS) threads = READ_THREADS;
    read_job_t jobs[READ_THREADS];
    pthread_t tids[READ_THREADS];
    int started[READ_THREADS] = {0};
    for (size_t t = 0; t < threads; t++) {
      jobs[t] = (read_job_t){rfd, starts, sizes, lens, out, count * t / threads, count * (t + 1) / threads, offs};
      /* The first range is this thread's own; one that cannot start runs here too. */
      if (t > 0) started[t] = pthread_create(&tids[t], NULL, read_range, &jobs[t]) == 0;
    }
    read_range(&jobs[0]);
    for (size_t t = 1; t < threads; t++) {
      if (started[t]) pthread_join(tids[t], NULL);
      else read_range(&jobs[t]);
    }
    close(rfd);
  }
  free(names);
  free(starts);
  free(offs);
  napi_value result;
  napi_create_object(env, &result);
  napi_set_named_property(env, result, "data", data);
  napi_set_named_property(env, result, "lengths", lengths);
  return result;
}
