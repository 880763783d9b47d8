#ifndef TRUSTBED_CSQLITE_SHIM_H
#define TRUSTBED_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <string.h>
// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline void (*trustbed_sqlite_transient(void))(void *) { return SQLITE_TRANSIENT; }

/*
 * "trustbed-wal": the default VFS, except that a write-ahead log's appends are gathered and
 * written with one write(2) per commit instead of two per frame.
 *
 * Why: SQLite writes each WAL frame as two writes, its 24-byte header and then the page; an
 * issuance flow commits 3 transactions of about 17 frames in all, 34 pwrite(2) calls that took
 * 6% of the machine under the PID Provider's benchmark (perf: ext4's write path once per call).
 *
 * Why it is safe: only contiguous appends to a file opened as a WAL are held, and they are
 * written before anything else touches the file or the wal-index: at the page of the commit
 * frame (the frame whose header carries a database size, bytes 4-7), before every other method
 * of the file (read, sync, truncate, size, locks, shared-memory calls and barriers, close), when
 * the buffer would overflow, and before a write that does not follow on. So a commit's frames are
 * in the file, and any error is returned from that commit's own write, before SQLite publishes the
 * commit in the wal-index: what other connections and processes can see, and what a kill -9
 * leaves, is what the default VFS would have left. The buffer belongs to one file handle, which
 * SQLite uses from one thread at a time (the connection's lock).
 */
typedef struct trustbed_wal_file {
    sqlite3_file base;
    sqlite3_file *real;          /* the default VFS's file, allocated right after this struct */
    unsigned char *buffer;       /* NULL: not a WAL, writes pass through */
    sqlite3_int64 start;         /* file offset of buffer[0] */
    int used;
    int capacity;
    int commit_header;           /* the last frame header buffered is a commit frame's */
} trustbed_wal_file;

#define TRUSTBED_WAL_BUFFER (64 * 1024)
#define TRUSTBED_WAL_FRAME_HEADER 24

static inline int trustbed_wal_flush(trustbed_wal_file *f) {
    if (f->used == 0) return SQLITE_OK;
    int rc = f->real->pMethods->xWrite(f->real, f->buffer, f->used, f->start);
    f->used = 0;
    f->commit_header = 0;
    return rc;
}

static inline int trustbed_wal_close(sqlite3_file *file) {
    trustbed_wal_file *f = (trustbed_wal_file *) file;
    int rc = trustbed_wal_flush(f);
    int closed = f->real->pMethods ? f->real->pMethods->xClose(f->real) : SQLITE_OK;
    sqlite3_free(f->buffer);
    f->buffer = NULL;
    return rc != SQLITE_OK ? rc : closed;
}

static inline int trustbed_wal_write(sqlite3_file *file, const void *data, int amount, sqlite3_int64 offset) {
    trustbed_wal_file *f = (trustbed_wal_file *) file;
    if (f->buffer == NULL) return f->real->pMethods->xWrite(f->real, data, amount, offset);
    if (f->used > 0 && (offset != f->start + f->used || amount > f->capacity - f->used)) {
        int rc = trustbed_wal_flush(f);
        if (rc != SQLITE_OK) return rc;
    }
    if (amount > f->capacity) return f->real->pMethods->xWrite(f->real, data, amount, offset);
    if (f->used == 0) f->start = offset;
    memcpy(f->buffer + f->used, data, (size_t) amount);
    f->used += amount;
    if (amount == TRUSTBED_WAL_FRAME_HEADER) {
        const unsigned char *h = (const unsigned char *) data;
        f->commit_header = (h[4] | h[5] | h[6] | h[7]) != 0;
        return SQLITE_OK;
    }
    /* A page after a commit frame's header ends the commit: write it all now. */
    return f->commit_header ? trustbed_wal_flush(f) : SQLITE_OK;
}

/* Every other method: the pending appends first, then the default VFS's method. */
#define TRUSTBED_WAL_FLUSHED(file) trustbed_wal_file *f = (trustbed_wal_file *) (file); \
    int flushed = trustbed_wal_flush(f); if (flushed != SQLITE_OK) return flushed;

static inline int trustbed_wal_read(sqlite3_file *file, void *out, int amount, sqlite3_int64 offset) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xRead(f->real, out, amount, offset);
}
static inline int trustbed_wal_truncate(sqlite3_file *file, sqlite3_int64 size) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xTruncate(f->real, size);
}
static inline int trustbed_wal_sync(sqlite3_file *file, int flags) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xSync(f->real, flags);
}
static inline int trustbed_wal_size(sqlite3_file *file, sqlite3_int64 *size) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xFileSize(f->real, size);
}
static inline int trustbed_wal_lock(sqlite3_file *file, int level) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xLock(f->real, level);
}
static inline int trustbed_wal_unlock(sqlite3_file *file, int level) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xUnlock(f->real, level);
}
static inline int trustbed_wal_check_reserved(sqlite3_file *file, int *out) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xCheckReservedLock(f->real, out);
}
static inline int trustbed_wal_control(sqlite3_file *file, int op, void *arg) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xFileControl(f->real, op, arg);
}
static inline int trustbed_wal_sector_size(sqlite3_file *file) {
    trustbed_wal_file *f = (trustbed_wal_file *) file;
    return f->real->pMethods->xSectorSize(f->real);
}
static inline int trustbed_wal_device(sqlite3_file *file) {
    trustbed_wal_file *f = (trustbed_wal_file *) file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}
static inline int trustbed_wal_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xShmMap(f->real, page, size, extend, out);
}
static inline int trustbed_wal_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}
static inline void trustbed_wal_shm_barrier(sqlite3_file *file) {
    trustbed_wal_file *f = (trustbed_wal_file *) file;
    (void) trustbed_wal_flush(f); /* empty here: a commit is flushed at its commit frame */
    f->real->pMethods->xShmBarrier(f->real);
}
static inline int trustbed_wal_shm_unmap(sqlite3_file *file, int delete_flag) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}
static inline int trustbed_wal_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xFetch(f->real, offset, amount, out);
}
static inline int trustbed_wal_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *page) {
    TRUSTBED_WAL_FLUSHED(file) return f->real->pMethods->xUnfetch(f->real, offset, page);
}

static const sqlite3_io_methods trustbed_wal_methods = {
    3, trustbed_wal_close, trustbed_wal_read, trustbed_wal_write, trustbed_wal_truncate, trustbed_wal_sync,
    trustbed_wal_size, trustbed_wal_lock, trustbed_wal_unlock, trustbed_wal_check_reserved, trustbed_wal_control,
    trustbed_wal_sector_size, trustbed_wal_device, trustbed_wal_shm_map, trustbed_wal_shm_lock,
    trustbed_wal_shm_barrier, trustbed_wal_shm_unmap, trustbed_wal_fetch, trustbed_wal_unfetch,
};

static inline int trustbed_wal_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    sqlite3_vfs *real = (sqlite3_vfs *) vfs->pAppData;
    trustbed_wal_file *f = (trustbed_wal_file *) file;
    memset(f, 0, sizeof(*f));
    f->real = (sqlite3_file *) &f[1];
    int rc = real->xOpen(real, name, f->real, flags, out_flags);
    /* SQLite calls xClose after a failed xOpen only when pMethods is set. */
    if (f->real->pMethods == NULL) return rc;
    if (f->real->pMethods->iVersion < 3) {
        f->real->pMethods->xClose(f->real);
        return SQLITE_CANTOPEN;
    }
    f->base.pMethods = &trustbed_wal_methods;
    if (rc == SQLITE_OK && (flags & SQLITE_OPEN_WAL) != 0) {
        f->buffer = (unsigned char *) sqlite3_malloc(TRUSTBED_WAL_BUFFER);
        f->capacity = f->buffer != NULL ? TRUSTBED_WAL_BUFFER : 0;
    }
    return rc;
}

/* The VFS's other methods are the default VFS's, called with the default VFS. */
#define TRUSTBED_REAL_VFS(vfs) ((sqlite3_vfs *) (vfs)->pAppData)
static inline int trustbed_vfs_delete(sqlite3_vfs *v, const char *n, int s) { return TRUSTBED_REAL_VFS(v)->xDelete(TRUSTBED_REAL_VFS(v), n, s); }
static inline int trustbed_vfs_access(sqlite3_vfs *v, const char *n, int f, int *o) { return TRUSTBED_REAL_VFS(v)->xAccess(TRUSTBED_REAL_VFS(v), n, f, o); }
static inline int trustbed_vfs_full_pathname(sqlite3_vfs *v, const char *n, int size, char *out) { return TRUSTBED_REAL_VFS(v)->xFullPathname(TRUSTBED_REAL_VFS(v), n, size, out); }
static inline void *trustbed_vfs_dlopen(sqlite3_vfs *v, const char *n) { return TRUSTBED_REAL_VFS(v)->xDlOpen(TRUSTBED_REAL_VFS(v), n); }
static inline void trustbed_vfs_dlerror(sqlite3_vfs *v, int size, char *out) { TRUSTBED_REAL_VFS(v)->xDlError(TRUSTBED_REAL_VFS(v), size, out); }
static inline void (*trustbed_vfs_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) { return TRUSTBED_REAL_VFS(v)->xDlSym(TRUSTBED_REAL_VFS(v), h, s); }
static inline void trustbed_vfs_dlclose(sqlite3_vfs *v, void *h) { TRUSTBED_REAL_VFS(v)->xDlClose(TRUSTBED_REAL_VFS(v), h); }
static inline int trustbed_vfs_randomness(sqlite3_vfs *v, int size, char *out) { return TRUSTBED_REAL_VFS(v)->xRandomness(TRUSTBED_REAL_VFS(v), size, out); }
static inline int trustbed_vfs_sleep(sqlite3_vfs *v, int us) { return TRUSTBED_REAL_VFS(v)->xSleep(TRUSTBED_REAL_VFS(v), us); }
static inline int trustbed_vfs_current_time(sqlite3_vfs *v, double *out) { return TRUSTBED_REAL_VFS(v)->xCurrentTime(TRUSTBED_REAL_VFS(v), out); }
static inline int trustbed_vfs_last_error(sqlite3_vfs *v, int size, char *out) { return TRUSTBED_REAL_VFS(v)->xGetLastError(TRUSTBED_REAL_VFS(v), size, out); }
static inline int trustbed_vfs_current_time64(sqlite3_vfs *v, sqlite3_int64 *out) { return TRUSTBED_REAL_VFS(v)->xCurrentTimeInt64(TRUSTBED_REAL_VFS(v), out); }

/*
 * The name to pass to sqlite3_open_v2: "trustbed-wal", registered (not as the default) on first
 * use; NULL (the default VFS) if it cannot be. Registration is serialized by SQLite's own
 * mutex; a second caller finds it registered. Only the Store module includes this header, so
 * there is one VFS object.
 */
static inline const char *trustbed_sqlite_wal_vfs(void) {
    static sqlite3_vfs vfs;
    static const char *const name = "trustbed-wal";
    if (sqlite3_vfs_find(name) != NULL) return name;
    sqlite3_mutex *mutex = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1);
    sqlite3_mutex_enter(mutex);
    const char *result = name;
    if (sqlite3_vfs_find(name) == NULL) {
        sqlite3_vfs *real = sqlite3_vfs_find(NULL);
        if (real == NULL || real->iVersion < 2) {
            result = NULL;
        } else {
            memset(&vfs, 0, sizeof(vfs));
            vfs.iVersion = 2;
            vfs.szOsFile = (int) sizeof(trustbed_wal_file) + real->szOsFile;
            vfs.mxPathname = real->mxPathname;
            vfs.zName = name;
            vfs.pAppData = real;
            vfs.xOpen = trustbed_wal_open;
            vfs.xDelete = trustbed_vfs_delete;
            vfs.xAccess = trustbed_vfs_access;
            vfs.xFullPathname = trustbed_vfs_full_pathname;
            vfs.xDlOpen = trustbed_vfs_dlopen;
            vfs.xDlError = trustbed_vfs_dlerror;
            vfs.xDlSym = trustbed_vfs_dlsym;
            vfs.xDlClose = trustbed_vfs_dlclose;
            vfs.xRandomness = trustbed_vfs_randomness;
            vfs.xSleep = trustbed_vfs_sleep;
            vfs.xCurrentTime = trustbed_vfs_current_time;
            vfs.xGetLastError = trustbed_vfs_last_error;
            vfs.xCurrentTimeInt64 = trustbed_vfs_current_time64;
            if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) result = NULL;
        }
    }
    sqlite3_mutex_leave(mutex);
    return result;
}
#endif
