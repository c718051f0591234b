/*
 * Program-binary cache files (see progcache.h). Layout, little-endian as the
 * host writes it (a cache is never shared across machines):
 *   "GLCPBIN1" | key.a u64 | key.b u64 | format u32 | pad u32 | len u64 |
 *   checksum u64 (FNV-1a of the blob) | blob[len]
 *
 * A store writes a temporary file of its own (pid and a process-wide
 * counter: unique per thread and call, created with O_EXCL) and renames it
 * over the entry, so concurrent writers, threads or processes, never write
 * into one file and a reader sees a whole entry or none.
 */
#include "progcache.h"

#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct file_header {
    char magic[8];
    uint64_t key_a, key_b;
    uint32_t format, pad;
    uint64_t len, checksum;
} file_header;

static const char magic[8] = {'G', 'L', 'C', 'P', 'B', 'I', 'N', '1'};

uint64_t glc__fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i;
    for (i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void glc__progcache_path(const char *dir, glc__progkey key, char *out, size_t len)
{
    snprintf(out, len, "%s/glc-%016llx%016llx.bin", dir, (unsigned long long)key.a,
             (unsigned long long)key.b);
}

glc_status glc__progcache_load(const char *dir, glc__progkey key, uint32_t *format,
                               void **blob, size_t *len, char *why, size_t whylen)
{
    char path[1024];
    file_header h;
    FILE *f;
    void *data = NULL;
    glc__progcache_path(dir, key, path, sizeof path);
    f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "no entry %s", path);
        return GLC_ERR_IO;
    }
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, magic, sizeof magic) != 0) {
        snprintf(why, whylen, "%s: bad header", path);
        goto fail;
    }
    if (h.key_a != key.a || h.key_b != key.b) {
        snprintf(why, whylen, "%s: entry of another key", path);
        goto fail;
    }
    if (h.len == 0 || h.len > (64u << 20)) {
        snprintf(why, whylen, "%s: implausible length %llu", path, (unsigned long long)h.len);
        goto fail;
    }
    data = glc__malloc((size_t)h.len);
    if (!data) {
        snprintf(why, whylen, "%s: out of memory", path);
        goto fail;
    }
    if (fread(data, 1, (size_t)h.len, f) != (size_t)h.len) {
        snprintf(why, whylen, "%s: truncated", path);
        goto fail;
    }
    if (glc__fnv1a(GLC__FNV_SEED, data, (size_t)h.len) != h.checksum) {
        snprintf(why, whylen, "%s: checksum mismatch (corrupt entry)", path);
        goto fail;
    }
    fclose(f);
    *format = h.format;
    *blob = data;
    *len = (size_t)h.len;
    return GLC_OK;
fail:
    glc__free(data);
    fclose(f);
    return GLC_ERR_IO;
}

static atomic_ulong tmp_seq;

glc_status glc__progcache_store(const char *dir, glc__progkey key, uint32_t format,
                                const void *blob, size_t len, char *why, size_t whylen)
{
    char path[1024], tmp[1100];
    file_header h;
    FILE *f;
    int ok, fd;
    glc__progcache_path(dir, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.%lu.tmp", path, (long)getpid(),
             (unsigned long)atomic_fetch_add(&tmp_seq, 1));
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, sizeof magic);
    h.key_a = key.a;
    h.key_b = key.b;
    h.format = format;
    h.len = len;
    h.checksum = glc__fnv1a(GLC__FNV_SEED, blob, len);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            remove(tmp);
        }
        snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(err));
        return GLC_ERR_IO;
    }
    ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(blob, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return GLC_ERR_IO;
    }
    return GLC_OK;
}
