/*
 * The libfuse operation table: each operation packs its arguments into a request and waits for
 * JS's answer (bridge.c). Only the operations JS implements are set, so libfuse keeps its own
 * default (usually ENOSYS) for the others, and the kernel stops asking.
 */
#include "avfs_fuse.h" /* first: it sets the libfuse API version and _GNU_SOURCE */

#include <errno.h>
#include <string.h>

const char *const op_names[OP_COUNT] = {
    [OP_INIT] = "init",         [OP_GETATTR] = "getattr",   [OP_FGETATTR] = "fgetattr", [OP_ACCESS] = "access",
    [OP_READDIR] = "readdir",   [OP_READLINK] = "readlink", [OP_OPEN] = "open",         [OP_CREATE] = "create",
    [OP_READ] = "read",         [OP_WRITE] = "write",       [OP_FLUSH] = "flush",       [OP_FSYNC] = "fsync",
    [OP_FSYNCDIR] = "fsyncdir", [OP_RELEASE] = "release",   [OP_TRUNCATE] = "truncate", [OP_FTRUNCATE] = "ftruncate",
    [OP_UTIMENS] = "utimens",   [OP_CHMOD] = "chmod",       [OP_CHOWN] = "chown",       [OP_MKNOD] = "mknod",
    [OP_MKDIR] = "mkdir",       [OP_RMDIR] = "rmdir",       [OP_UNLINK] = "unlink",     [OP_RENAME] = "rename",
    [OP_LINK] = "link",         [OP_SYMLINK] = "symlink",   [OP_STATFS] = "statfs",
};

/*
 * The mount this thread serves. Not fuse_get_context()->private_data: fuse_destroy() unlinks the
 * `.fuse_hidden…` files still left with a context whose private data it has cleared.
 */
static __thread mount_t *serving;
static __thread int serving_slot;

void ops_serve(mount_t *m, int slot) {
  serving = m;
  serving_slot = slot;
}

static int run(request_t *r) {
  struct fuse_context *c = fuse_get_context();
  r->slot = serving_slot;
  r->uid = c->uid;
  r->gid = c->gid;
  r->pid = c->pid;
  return bridge_send(serving, r);
}

#define REQUEST(o) \
  request_t r;     \
  memset(&r, 0, sizeof r); \
  r.op = (o)

static void *op_init(struct fuse_conn_info *conn) {
  (void)conn;
  REQUEST(OP_INIT);
  run(&r);
  return serving;
}

static int op_getattr(const char *path, struct stat *st) {
  REQUEST(OP_GETATTR);
  r.path = path;
  r.st = st;
  return run(&r);
}

static int op_fgetattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  REQUEST(OP_FGETATTR);
  r.path = path;
  r.st = st;
  r.fi = fi;
  return run(&r);
}

static int op_access(const char *path, int mask) {
  REQUEST(OP_ACCESS);
  r.path = path;
  r.flags = mask;
  return run(&r);
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset, struct fuse_file_info *fi) {
  (void)offset; /* JS lists the whole directory at once (filler offsets 0) */
  REQUEST(OP_READDIR);
  r.path = path;
  r.dir_buf = buf;
  r.filler = filler;
  r.fi = fi;
  return run(&r);
}

static int op_readlink(const char *path, char *buf, size_t size) {
  REQUEST(OP_READLINK);
  r.path = path;
  r.out = buf;
  r.size = size;
  return run(&r);
}

static int op_open(const char *path, struct fuse_file_info *fi) {
  REQUEST(OP_OPEN);
  r.path = path;
  r.fi = fi;
  r.flags = fi->flags;
  return run(&r);
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
  REQUEST(OP_CREATE);
  r.path = path;
  r.mode = mode;
  r.fi = fi;
  return run(&r);
}

static int op_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi) {
  REQUEST(OP_READ);
  r.path = path;
  r.out = buf;
  r.size = size;
  r.offset = offset;
  r.fi = fi;
  return run(&r);
}

static int op_write(const char *path, const char *data, size_t size, off_t offset, struct fuse_file_info *fi) {
  REQUEST(OP_WRITE);
  r.path = path;
  r.write_data = data;
  r.size = size;
  r.offset = offset;
  r.fi = fi;
  return run(&r);
}

static int op_flush(const char *path, struct fuse_file_info *fi) {
  REQUEST(OP_FLUSH);
  r.path = path;
  r.fi = fi;
  return run(&r);
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
  REQUEST(OP_FSYNC);
  r.path = path;
  r.datasync = datasync;
  r.fi = fi;
  return run(&r);
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
  REQUEST(OP_FSYNCDIR);
  r.path = path;
  r.datasync = datasync;
  r.fi = fi;
  return run(&r);
}

static int op_release(const char *path, struct fuse_file_info *fi) {
  REQUEST(OP_RELEASE);
  r.path = path;
  r.fi = fi;
  return run(&r);
}

static int op_truncate(const char *path, off_t size) {
  REQUEST(OP_TRUNCATE);
  r.path = path;
  r.offset = size;
  return run(&r);
}

static int op_ftruncate(const char *path, off_t size, struct fuse_file_info *fi) {
  REQUEST(OP_FTRUNCATE);
  r.path = path;
  r.offset = size;
  r.fi = fi;
  return run(&r);
}

static int op_utimens(const char *path, const struct timespec tv[2]) {
  REQUEST(OP_UTIMENS);
  r.path = path;
  r.times = tv;
  return run(&r);
}

static int op_chmod(const char *path, mode_t mode) {
  REQUEST(OP_CHMOD);
  r.path = path;
  r.mode = mode;
  return run(&r);
}

static int op_chown(const char *path, uid_t uid, gid_t gid) {
  REQUEST(OP_CHOWN);
  r.path = path;
  r.new_uid = uid;
  r.new_gid = gid;
  return run(&r);
}

static int op_mknod(const char *path, mode_t mode, dev_t dev) {
  REQUEST(OP_MKNOD);
  r.path = path;
  r.mode = mode;
  r.dev = dev;
  return run(&r);
}

static int op_mkdir(const char *path, mode_t mode) {
  REQUEST(OP_MKDIR);
  r.path = path;
  r.mode = mode;
  return run(&r);
}

static int op_rmdir(const char *path) {
  REQUEST(OP_RMDIR);
  r.path = path;
  return run(&r);
}

static int op_unlink(const char *path) {
  REQUEST(OP_UNLINK);
  r.path = path;
  return run(&r);
}

static int op_rename(const char *from, const char *to) {
  REQUEST(OP_RENAME);
  r.path = from;
  r.path2 = to;
  return run(&r);
}

static int op_link(const char *from, const char *to) {
  REQUEST(OP_LINK);
  r.path = from;
  r.path2 = to;
  return run(&r);
}

static int op_symlink(const char *target, const char *path) {
  REQUEST(OP_SYMLINK);
  r.path = target;
  r.path2 = path;
  return run(&r);
}

static int op_statfs(const char *path, struct statvfs *sv) {
  REQUEST(OP_STATFS);
  r.path = path;
  r.sv = sv;
  return run(&r);
}

void ops_fill(struct fuse_operations *ops, const int implemented[OP_COUNT]) {
  memset(ops, 0, sizeof *ops);
  /* init always reaches JS: it is how JS learns that the kernel has started talking to us. */
  ops->init = op_init;
#define SET(OP, field, fn) \
  if (implemented[OP]) ops->field = fn
  SET(OP_GETATTR, getattr, op_getattr);
  SET(OP_FGETATTR, fgetattr, op_fgetattr);
  SET(OP_ACCESS, access, op_access);
  SET(OP_READDIR, readdir, op_readdir);
  SET(OP_READLINK, readlink, op_readlink);
  SET(OP_OPEN, open, op_open);
  SET(OP_CREATE, create, op_create);
  SET(OP_READ, read, op_read);
  SET(OP_WRITE, write, op_write);
  SET(OP_FLUSH, flush, op_flush);
  SET(OP_FSYNC, fsync, op_fsync);
  SET(OP_FSYNCDIR, fsyncdir, op_fsyncdir);
  SET(OP_RELEASE, release, op_release);
  SET(OP_TRUNCATE, truncate, op_truncate);
  SET(OP_FTRUNCATE, ftruncate, op_ftruncate);
  SET(OP_UTIMENS, utimens, op_utimens);
  SET(OP_CHMOD, chmod, op_chmod);
  SET(OP_CHOWN, chown, op_chown);
  SET(OP_MKNOD, mknod, op_mknod);
  SET(OP_MKDIR, mkdir, op_mkdir);
  SET(OP_RMDIR, rmdir, op_rmdir);
  SET(OP_UNLINK, unlink, op_unlink);
  SET(OP_RENAME, rename, op_rename);
  SET(OP_LINK, link, op_link);
  SET(OP_SYMLINK, symlink, op_symlink);
  SET(OP_STATFS, statfs, op_statfs);
#undef SET
  /*
   * Without this flag libfuse 2 calls utimens only when a setattr changes both times, and drops
   * a change of one (touch -m, tar x, utimensat with UTIME_OMIT). With it, every time change
   * arrives, UTIME_NOW and UTIME_OMIT as such.
   */
  ops->flag_utime_omit_ok = 1;
}
