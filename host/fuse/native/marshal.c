/*
 * Requests to JS arguments, and JS answers back into what libfuse expects. Argument order is the
 * order of the JS handler's parameters (host/fuse/binding.ts, FuseOps). Runs on the main thread
 * while the loop thread waits, so the request and the kernel's buffers are valid throughout.
 */
#include "avfs_fuse.h" /* first: it sets the libfuse API version and _GNU_SOURCE */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000
/* What a read or write (with big_writes) asks for at the most: one Buffer serves them all. */
#define IO_MIN (128 * 1024)

/* Why the last answer was refused (main thread only). */
static char why[200];

static const char *refuse(const char *what, const char *detail) {
  snprintf(why, sizeof why, "%s: %s", what, detail);
  return why;
}

static napi_value str(napi_env env, const char *s) {
  napi_value v;
  if (s == NULL) s = ""; /* libfuse always passes paths here (no nullpath_ok), but never crash on one */
  napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
  return v;
}

static napi_value num(napi_env env, double d) {
  napi_value v;
  napi_create_double(env, d, &v);
  return v;
}

static napi_value fh(napi_env env, const struct fuse_file_info *fi) { return num(env, fi ? (double)fi->fh : 0); }

/* A time for JS: BigInt nanoseconds since the epoch (every 64-bit second count fits), or "now"/"omit". */
static napi_value time_to_js(napi_env env, const struct timespec *t) {
  if (t->tv_nsec == UTIME_NOW) return str(env, "now");
  if (t->tv_nsec == UTIME_OMIT) return str(env, "omit");
  __int128 ns = (__int128)t->tv_sec * NS_PER_S + t->tv_nsec;
  int negative = ns < 0;
  unsigned __int128 mag = negative ? -(unsigned __int128)ns : (unsigned __int128)ns;
  uint64_t words[2] = {(uint64_t)mag, (uint64_t)(mag >> 64)};
  napi_value v;
  napi_create_bigint_words(env, negative, words[1] ? 2 : 1, words, &v);
  return v;
}

/* A BigInt of nanoseconds since the epoch into a timespec (tv_nsec in [0, 1e9), as POSIX has it). */
static const char *time_from_js(napi_env env, napi_value v, const char *key, struct timespec *t) {
  napi_valuetype type;
  napi_typeof(env, v, &type);
  if (type == napi_undefined) {
    t->tv_sec = 0;
    t->tv_nsec = 0;
    return NULL;
  }
  if (type != napi_bigint) return refuse(key, "a time must be a BigInt of nanoseconds");
  int negative = 0;
  size_t count = 2;
  uint64_t words[2] = {0, 0};
  if (napi_get_value_bigint_words(env, v, &negative, &count, words) != napi_ok || count > 2 || words[1] >> 62) {
    return refuse(key, "time out of range");
  }
  __int128 ns = (__int128)(((unsigned __int128)words[1] << 64) | words[0]);
  if (negative) ns = -ns;
  __int128 s = ns / NS_PER_S;
  __int128 rem = ns % NS_PER_S;
  if (rem < 0) {
    s -= 1;
    rem += NS_PER_S;
  }
  if (s > INT64_MAX || s < INT64_MIN) return refuse(key, "time out of range");
  t->tv_sec = (time_t)s;
  t->tv_nsec = (long)rem;
  return NULL;
}

/* A numeric property; a missing one (undefined) reads as 0. */
static const char *num_prop(napi_env env, napi_value obj, const char *key, double *out) {
  napi_value v;
  napi_valuetype type;
  *out = 0;
  if (napi_get_named_property(env, obj, key, &v) != napi_ok) return refuse(key, "cannot be read");
  napi_typeof(env, v, &type);
  if (type == napi_undefined) return NULL;
  if (type != napi_number) return refuse(key, "must be a number");
  napi_get_value_double(env, v, out);
  return NULL;
}

static const char *time_prop(napi_env env, napi_value obj, const char *key, struct timespec *t) {
  napi_value v;
  if (napi_get_named_property(env, obj, key, &v) != napi_ok) return refuse(key, "cannot be read");
  return time_from_js(env, v, key, t);
}

static int is_object(napi_env env, napi_value v) {
  napi_valuetype type;
  return napi_typeof(env, v, &type) == napi_ok && type == napi_object;
}

static const char *stat_from_js(napi_env env, napi_value obj, struct stat *st) {
  memset(st, 0, sizeof *st);
  if (!is_object(env, obj)) return refuse("stat", "must be an object");
  double mode, uid, gid, size, nlink, ino, rdev, blksize, blocks;
  const char *bad;
  if ((bad = num_prop(env, obj, "mode", &mode)) || (bad = num_prop(env, obj, "uid", &uid)) ||
      (bad = num_prop(env, obj, "gid", &gid)) || (bad = num_prop(env, obj, "size", &size)) ||
      (bad = num_prop(env, obj, "nlink", &nlink)) || (bad = num_prop(env, obj, "ino", &ino)) ||
      (bad = num_prop(env, obj, "rdev", &rdev)) || (bad = num_prop(env, obj, "blksize", &blksize)) ||
      (bad = num_prop(env, obj, "blocks", &blocks)) || (bad = time_prop(env, obj, "atime", &st->st_atim)) ||
      (bad = time_prop(env, obj, "mtime", &st->st_mtim)) || (bad = time_prop(env, obj, "ctime", &st->st_ctim))) {
    return bad;
  }
  st->st_mode = (mode_t)mode;
  st->st_uid = (uid_t)uid;
  st->st_gid = (gid_t)gid;
  st->st_size = (off_t)size;
  st->st_nlink = (nlink_t)nlink;
  st->st_ino = (ino_t)ino;
  st->st_rdev = (dev_t)rdev;
  st->st_blksize = (blksize_t)blksize;
  st->st_blocks = (blkcnt_t)blocks;
  return NULL;
}

static const char *statvfs_from_js(napi_env env, napi_value obj, struct statvfs *sv) {
  memset(sv, 0, sizeof *sv);
  if (!is_object(env, obj)) return refuse("statfs", "must be an object");
  double v[11];
  static const char *const keys[11] = {"bsize", "frsize", "blocks", "bfree", "bavail", "files",
                                        "ffree", "favail", "fsid",   "flag",  "namemax"};
  for (int i = 0; i < 11; i++) {
    const char *bad = num_prop(env, obj, keys[i], &v[i]);
    if (bad) return bad;
  }
  sv->f_bsize = (unsigned long)v[0];
  sv->f_frsize = (unsigned long)v[1];
  sv->f_blocks = (fsblkcnt_t)v[2];
  sv->f_bfree = (fsblkcnt_t)v[3];
  sv->f_bavail = (fsblkcnt_t)v[4];
  sv->f_files = (fsfilcnt_t)v[5];
  sv->f_ffree = (fsfilcnt_t)v[6];
  sv->f_favail = (fsfilcnt_t)v[7];
  sv->f_fsid = (unsigned long)v[8];
  sv->f_flag = (unsigned long)v[9];
  sv->f_namemax = (unsigned long)v[10];
  return NULL;
}

/* Hands each name (and its inode number and type, which use_ino and d_type report) to libfuse. */
static const char *readdir_from_js(napi_env env, request_t *r, napi_value names, napi_value stats) {
  bool is_array = false;
  napi_is_array(env, names, &is_array);
  if (!is_array) return refuse("readdir", "names must be an array");
  bool have_stats = false;
  napi_is_array(env, stats, &have_stats);
  uint32_t n = 0;
  napi_get_array_length(env, names, &n);
  char small[1024];
  for (uint32_t i = 0; i < n; i++) {
    napi_value name;
    size_t len = 0;
    napi_get_element(env, names, i, &name);
    if (napi_get_value_string_utf8(env, name, NULL, 0, &len) != napi_ok) return refuse("readdir", "names must be strings");
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf) return refuse("readdir", "out of memory");
    napi_get_value_string_utf8(env, name, buf, len + 1, &len);
    struct stat st;
    memset(&st, 0, sizeof st);
    napi_value s;
    if (have_stats && napi_get_element(env, stats, i, &s) == napi_ok && is_object(env, s)) {
      double ino = 0, mode = 0;
      num_prop(env, s, "ino", &ino);
      num_prop(env, s, "mode", &mode);
      st.st_ino = (ino_t)ino;
      st.st_mode = (mode_t)mode;
    }
    int full = r->filler(r->dir_buf, buf, &st, 0);
    if (buf != small) free(buf);
    if (full) break; /* libfuse keeps its own error (out of memory) for the reply */
  }
  return NULL;
}

/* The slot's byte Buffer, at least `size` long (replaced by a bigger one if need be). */
static napi_value io_buffer(napi_env env, slot_t *s, size_t size) {
  napi_value buf;
  if (s->io && size <= s->io_size) {
    napi_get_reference_value(env, s->io, &buf);
    return buf;
  }
  size_t want = s->io_size * 2 > IO_MIN ? s->io_size * 2 : IO_MIN;
  if (want < size) want = size;
  void *data = NULL;
  if (napi_create_buffer(env, want, &data, &buf) != napi_ok) return NULL;
  if (s->io) napi_delete_reference(env, s->io);
  napi_create_reference(env, buf, 1, &s->io);
  s->io_data = data;
  s->io_size = want;
  return buf;
}

size_t marshal_args(napi_env env, mount_t *m, request_t *r, napi_value *argv) {
  size_t n = 0;
  if (r->op != OP_INIT) argv[n++] = str(env, r->path);
  switch (r->op) {
    case OP_FGETATTR:
    case OP_FLUSH:
    case OP_RELEASE:
      argv[n++] = fh(env, r->fi);
      break;
    case OP_ACCESS:
    case OP_OPEN:
      argv[n++] = num(env, r->flags);
      break;
    case OP_CREATE:
    case OP_CHMOD:
    case OP_MKDIR:
      argv[n++] = num(env, r->mode);
      break;
    case OP_READ:
    case OP_WRITE: {
      slot_t *s = &m->slots[r->slot];
      napi_value buf = io_buffer(env, s, r->size);
      if (!buf) return (size_t)-1;
      if (r->op == OP_WRITE) memcpy(s->io_data, r->write_data, r->size);
      argv[n++] = fh(env, r->fi);
      argv[n++] = buf;
      argv[n++] = num(env, (double)r->size);
      argv[n++] = num(env, (double)r->offset);
      break;
    }
    case OP_FSYNC:
    case OP_FSYNCDIR:
      argv[n++] = num(env, r->datasync);
      argv[n++] = fh(env, r->fi);
      break;
    case OP_TRUNCATE:
      argv[n++] = num(env, (double)r->offset);
      break;
    case OP_FTRUNCATE:
      argv[n++] = fh(env, r->fi);
      argv[n++] = num(env, (double)r->offset);
      break;
    case OP_UTIMENS:
      argv[n++] = time_to_js(env, &r->times[0]);
      argv[n++] = time_to_js(env, &r->times[1]);
      break;
    case OP_CHOWN:
      argv[n++] = num(env, r->new_uid);
      argv[n++] = num(env, r->new_gid);
      break;
    case OP_MKNOD:
      argv[n++] = num(env, r->mode);
      argv[n++] = num(env, (double)r->dev);
      break;
    case OP_RENAME:
    case OP_LINK:
    case OP_SYMLINK:
      argv[n++] = str(env, r->path2);
      break;
    default:
      break;
  }
  return n;
}

/* Reads what JS answered (argv[0] is the result, then the op's values) into the request. */
const char *marshal_answer(napi_env env, mount_t *m, request_t *r, size_t argc, napi_value *argv) {
  napi_value undef;
  napi_get_undefined(env, &undef);
  napi_value a = argc > 1 ? argv[1] : undef;
  napi_value b = argc > 2 ? argv[2] : undef;
  const char *bad = NULL;
  if (r->op == OP_READ) {
    if (r->result > 0) {
      size_t n = (size_t)r->result;
      if (n > r->size) n = r->size;
      memcpy(r->out, m->slots[r->slot].io_data, n);
      r->result = (int)n;
    }
    return NULL;
  }
  if (r->result != 0) return NULL;
  switch (r->op) {
    case OP_GETATTR:
    case OP_FGETATTR:
      bad = stat_from_js(env, a, r->st);
      break;
    case OP_STATFS:
      bad = statvfs_from_js(env, a, r->sv);
      break;
    case OP_READDIR:
      bad = readdir_from_js(env, r, a, b);
      break;
    case OP_READLINK: {
      size_t copied = 0;
      if (r->size == 0) break;
      if (napi_get_value_string_utf8(env, a, r->out, r->size, &copied) != napi_ok) bad = refuse("readlink", "must answer a string");
      break;
    }
    case OP_OPEN:
    case OP_CREATE: {
      napi_valuetype type;
      double h = 0;
      napi_typeof(env, a, &type);
      if (type == napi_number) napi_get_value_double(env, a, &h);
      else if (type != napi_undefined) bad = refuse(op_names[r->op], "the file handle must be a number");
      r->fi->fh = (uint64_t)h;
      break;
    }
    default:
      break;
  }
  if (bad) r->result = -EIO;
  return bad;
}
