/*
 * Build-time tool: turns glsl/<name>.comp and glsl/common.glsl into a C
 * table of string literals (build/gen/glsl_table.c), so the library needs
 * no file access at run time.
 *
 * A line `#include "x.glsl"` (GLSL ES has no #include) is replaced by the
 * text of x.glsl, looked up in the including file's folder, then in each
 * -I folder (the generated enums.glsl sits in build/gen). A file is
 * inlined once per kernel (a later include of it is dropped), so family
 * includes (quant.glsl, storage.glsl, ...) may include each other; what
 * common.glsl includes counts as included by every kernel, for kernel.c
 * compiles each kernel after common.glsl. #line directives keep info-log
 * lines true: common.glsl is source string 1 and a kernel 2 (kernel.c
 * numbers those), each include file 3, 4, ... in the order the table
 * first meets it; a comment before its text names it.
 *
 * Usage: embed-glsl [-I DIR]... common.glsl FILE... > glsl_table.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIRS 8
#define MAX_INC 32
#define MAX_DEPTH 8

static const char *dirs[MAX_DIRS];
static int ndirs;
static char inc_seen[MAX_INC][256]; /* included by this entry (and common) */
static int ninc, ncommon;
static char inc_num[MAX_INC][256];  /* source string 3 + i: inc_num[i] */
static int nnum;

static int source_number(const char *file)
{
    int i;
    for (i = 0; i < nnum; i++)
        if (strcmp(inc_num[i], file) == 0)
            return 3 + i;
    if (nnum == MAX_INC)
        return -1;
    snprintf(inc_num[nnum++], sizeof inc_num[0], "%s", file);
    return 2 + nnum;
}

/* Writes s as the body of a C string literal. */
static void put_escaped(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            putchar('\\');
        if (s[i] != '\r')
            putchar(s[i]);
    }
}

static void put_line(const char *s, size_t n)
{
    fputs("     \"", stdout);
    put_escaped(s, n);
    fputs("\\n\"\n", stdout);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    long len;
    char *buf;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)len + 1))) {
        fclose(f);
        return NULL;
    }
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* The text of include `name` seen from the file in folder `here`. */
static char *find_include(const char *here, const char *name)
{
    char path[1024];
    char *text;
    int i;
    snprintf(path, sizeof path, "%s/%s", here, name);
    if ((text = slurp(path)) != NULL)
        return text;
    for (i = 0; i < ndirs; i++) {
        snprintf(path, sizeof path, "%s/%s", dirs[i], name);
        if ((text = slurp(path)) != NULL)
            return text;
    }
    return NULL;
}

/* Emits `text` (source string `src`), inlining its includes. */
static int emit_text(const char *text, const char *here, int src, int depth)
{
    const char *p = text;
    int line = 1;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t'))
            q++;
        if (strncmp(q, "#include \"", 10) == 0) {
            const char *name = q + 10, *close = memchr(name, '"', (size_t)(p + n - name));
            char file[256];
            char *inc;
            int k, seen = 0;
            if (!close || (size_t)(close - name) >= sizeof file) {
                fprintf(stderr, "embed-glsl: bad #include line %d\n", line);
                return 1;
            }
            memcpy(file, name, (size_t)(close - name));
            file[close - name] = '\0';
            for (k = 0; k < ninc; k++)
                seen |= strcmp(inc_seen[k], file) == 0;
            if (!seen) {
                char mark[320];
                int num;
                if (ninc == MAX_INC || depth == MAX_DEPTH || (num = source_number(file)) < 0) {
                    fprintf(stderr, "embed-glsl: %s: too many or too deep includes\n", file);
                    return 1;
                }
                if (!(inc = find_include(here, file))) {
                    fprintf(stderr, "embed-glsl: cannot find include %s\n", file);
                    return 1;
                }
                snprintf(inc_seen[ninc++], sizeof inc_seen[0], "%s", file);
                snprintf(mark, sizeof mark, "// source string %d: %s", num, file);
                put_line(mark, strlen(mark));
                snprintf(mark, sizeof mark, "#line 1 %d", num);
                put_line(mark, strlen(mark));
                if (emit_text(inc, here, num, depth + 1)) {
                    free(inc);
                    return 1;
                }
                free(inc);
                snprintf(mark, sizeof mark, "#line %d %d", line + 1, src);
                put_line(mark, strlen(mark));
            } else {
                put_line("", 0);
            }
        } else {
            put_line(p, n);
        }
        line++;
        p = end ? end + 1 : p + n;
    }
    return 0;
}

static int emit(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot;
    char here[1024];
    char *text = slurp(path);
    int rc, is_common;
    if (!text) {
        fprintf(stderr, "embed-glsl: cannot open %s\n", path);
        return 1;
    }
    base = base ? base + 1 : path;
    snprintf(here, sizeof here, "%.*s", base > path ? (int)(base - path - 1) : 1,
             base > path ? path : ".");
    dot = strchr(base, '.');
    printf("    {\"%.*s\",\n", (int)(dot ? (size_t)(dot - base) : strlen(base)), base);
    is_common = strncmp(base, "common.", 7) == 0;
    ninc = ncommon;
    rc = emit_text(text, here, is_common ? 1 : 2, 0);
    if (is_common)
        ncommon = ninc;
    fputs("     \"\"},\n", stdout);
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    int i, n = 0;
    puts("/* Generated by embed-glsl from glsl/: do not edit. */");
    puts("#include \"kernel.h\"\n");
    puts("const glc__glsl_source glc__glsl_table[] = {");
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-I") == 0 && i + 1 < argc) {
            if (ndirs < MAX_DIRS)
                dirs[ndirs++] = argv[i + 1];
            i++;
            continue;
        }
        if (emit(argv[i]))
            return 1;
        n++;
    }
    puts("};");
    printf("const size_t glc__glsl_count = %d;\n", n);
    return 0;
}
