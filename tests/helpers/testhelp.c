#include "testhelp.h"

#include <check.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <zip.h>

#include "engine/load.h"

char *th_dequote(char *s)
{
    for (char *c = s; *c; c++)
        if (*c == '\'')
            *c = '"';
    return s;
}

void th_vformat_json(char *out, size_t cap, const char *fmt, va_list ap)
{
    int len = vsnprintf(out, cap, fmt, ap);
    ck_assert_msg(len > 0 && (size_t)len < cap, "fixture too long");
    th_dequote(out);
}

int th_png_rgba(uint32_t w, uint32_t h, const uint8_t *rgba, void **out, size_t *len)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = w;
    img.height = h;
    img.format = PNG_FORMAT_RGBA;
    png_alloc_size_t size = 0;
    *out = NULL;
    if (!png_image_write_to_memory(&img, NULL, &size, 0, rgba, 0, NULL))
        return -1;
    *out = malloc(size);
    if (*out && png_image_write_to_memory(&img, *out, &size, 0, rgba, 0, NULL)) {
        *len = size;
        return 0;
    }
    free(*out);
    *out = NULL;
    return -1;
}

int th_png(uint32_t w, uint32_t h, const uint8_t rgba[4], void **out, size_t *len)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    if (!px)
        return -1;
    for (size_t i = 0; i < (size_t)w * h; i++)
        memcpy(px + i * 4, rgba, 4);
    int rc = th_png_rgba(w, h, px, out, len);
    free(px);
    return rc;
}

/* Finishes a simplified read begun on img into a new RGBA8 buffer. */
static int finish_decode(png_image *img, uint32_t *w, uint32_t *h, uint8_t **rgba)
{
    img->format = PNG_FORMAT_RGBA;
    *rgba = malloc(PNG_IMAGE_SIZE(*img));
    if (!*rgba) {
        png_image_free(img);
        return -1;
    }
    if (!png_image_finish_read(img, NULL, *rgba, 0, NULL)) {
        free(*rgba);
        *rgba = NULL;
        return -1;
    }
    *w = img->width;
    *h = img->height;
    return 0;
}

int th_png_decode(const void *png, size_t len, uint32_t *w, uint32_t *h, uint8_t **rgba)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    *rgba = NULL;
    if (!png_image_begin_read_from_memory(&img, png, len))
        return -1;
    return finish_decode(&img, w, h, rgba);
}

int th_png_decode_file(const char *path, uint32_t *w, uint32_t *h, uint8_t **rgba)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    *rgba = NULL;
    if (!png_image_begin_read_from_file(&img, path))
        return -1;
    return finish_decode(&img, w, h, rgba);
}

static int zip_bytes(zip_source_t *src, void **out, size_t *len)
{
    zip_stat_t st;
    if (zip_source_open(src) < 0)
        return -1;
    if (zip_source_stat(src, &st) < 0 || !(*out = malloc(st.size ? st.size : 1))) {
        zip_source_close(src);
        return -1;
    }
    zip_int64_t got = zip_source_read(src, *out, st.size);
    zip_source_close(src);
    *len = (size_t)st.size;
    return got == (zip_int64_t)st.size ? 0 : -1;
}

int th_zip(const char *const *names, const void *const *data, const size_t *lens, int count,
           void **out, size_t *len)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    zip_t *za = src ? zip_open_from_source(src, ZIP_TRUNCATE, &ze) : NULL;
    zip_error_fini(&ze);
    if (!za)
        return -1;
    zip_source_keep(src);
    for (int i = 0; i < count; i++) {
        zip_source_t *f = zip_source_buffer(za, data[i], lens[i], 0);
        if (!f || zip_file_add(za, names[i], f, ZIP_FL_OVERWRITE) < 0) {
            zip_source_free(f);
            zip_discard(za);
            zip_source_free(src);
            return -1;
        }
    }
    int rc = zip_close(za) == 0 ? zip_bytes(src, out, len) : -1;
    if (rc)
        zip_discard(za);
    zip_source_free(src);
    return rc;
}

int th_skf(const char *json, int atlases, void **out, size_t *len)
{
    enum { MAX = 8 };
    const char *names[MAX + 1] = {"armature.json"};
    const void *data[MAX + 1] = {json};
    size_t lens[MAX + 1] = {strlen(json)};
    char namebuf[MAX][32];
    void *pngs[MAX] = {0};
    static const uint8_t fill[4] = {200, 100, 50, 255};
    int rc = 0;
    for (int i = 0; i < atlases && i < MAX && !rc; i++) {
        snprintf(namebuf[i], sizeof namebuf[i], "atlas%d.png", i);
        names[i + 1] = namebuf[i];
        rc = th_png(64, 64, fill, &pngs[i], &lens[i + 1]);
        data[i + 1] = pngs[i];
    }
    if (!rc)
        rc = th_zip(names, data, lens, 1 + (atlases < MAX ? atlases : MAX), out, len);
    for (int i = 0; i < MAX; i++)
        free(pngs[i]);
    return rc;
}

int th_load(const char *json, int atlases, struct armature **arm, struct eng_error *err)
{
    void *buf;
    size_t len;
    ck_assert_int_eq(th_skf(json, atlases, &buf, &len), 0);
    int rc = armature_load(buf, len, NULL, arm, err);
    free(buf);
    return rc;
}

int th_load_atlases(const char *json, const void *const *pngs, const size_t *lens, int count,
                    struct armature **arm, struct eng_error *err)
{
    enum { MAX = 8 };
    ck_assert_int_le(count, MAX);
    const char *names[MAX + 1] = {"armature.json"};
    const void *data[MAX + 1] = {json};
    size_t sizes[MAX + 1] = {strlen(json)};
    char namebuf[MAX][32];
    for (int i = 0; i < count; i++) {
        snprintf(namebuf[i], sizeof namebuf[i], "atlas%d.png", i);
        names[i + 1] = namebuf[i];
        data[i + 1] = pngs[i];
        sizes[i + 1] = lens[i];
    }
    void *buf;
    size_t len;
    ck_assert_int_eq(th_zip(names, data, sizes, 1 + count, &buf, &len), 0);
    int rc = armature_load(buf, len, NULL, arm, err);
    free(buf);
    return rc;
}

static const char *existing_dir(const char *env)
{
    const char *d = getenv(env);
    struct stat st;
    return d && stat(d, &st) == 0 && S_ISDIR(st.st_mode) ? d : NULL;
}

const char *th_shared_dir(void)
{
    return existing_dir("SKELD_SHARED");
}

int th_exit_status(int failed, bool needs_shared)
{
    if (failed)
        return EXIT_FAILURE;
    if (needs_shared && !th_shared_dir()) {
        fprintf(stderr, "SKIP: $SKELD_SHARED (../shared) is absent: the tests that need it did "
                        "not run\n");
        return 77;
    }
    return EXIT_SUCCESS;
}

const char *th_samples_dir(void)
{
    return existing_dir("SKELD_SAMPLES");
}

struct armature *th_load_path(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct armature *arm = NULL;
    struct eng_error err = {0};
    int rc = armature_load_file(path, NULL, &arm, &err);
    ck_assert_msg(rc == 0, "loading %s: %s", path, err.msg);
    return arm;
}

bool th_local_fs(const char *path)
{
    static const long kinds[] = {0xEF53,     0x58465342, 0x9123683E, 0x01021994,
                                 0x794c7630, 0xF2F52010, 0x2fc12fc1};
    struct statfs fs;
    if (statfs(path, &fs) != 0)
        return false;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if ((long)fs.f_type == kinds[i])
            return true;
    return false;
}
