// The libvips calls of CVips.h. Errors stay in libvips' error buffer until
// cvips_take_error reads them.
#include "CVips.h"
#include "CLinux.h"
#include <stdlib.h>
#include <vips/vips.h>

/// libvips' warnings (a damaged tile it papered over, say) go to stderr otherwise; what
/// matters to the server is whether a call failed, which it learns from the error buffer.
static void drop_message(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)domain, (void)level, (void)message, (void)data;
}

int cvips_start(void) {
    // A 90-degree turn needs the whole image: past this size libvips decodes to a
    // temporary file instead of memory (an operator's own setting wins).
    // Under the environment's lock: a child started meanwhile gets a whole environment.
    clinux_setenv_default("VIPS_DISC_THRESHOLD", "16m");
    if (VIPS_INIT("posts-server") != 0) return -1;
    vips_block_untrusted_set(TRUE);
    // Every loader blocked, then the five bases (file, buffer and source variants) let back.
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpeg", FALSE);
    vips_operation_block_set("VipsForeignLoadPng", FALSE);
    vips_operation_block_set("VipsForeignLoadNsgif", FALSE);
    vips_operation_block_set("VipsForeignLoadWebp", FALSE);
    vips_operation_block_set("VipsForeignLoadHeif", FALSE);
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, drop_message, NULL);
    vips_cache_set_max(0);
    vips_concurrency_set(1);
    return 0;
}

char *cvips_take_error(void) {
    char *error = vips_error_buffer_copy();
    if (error != NULL && error[0] == '\0') {
        g_free(error);
        return NULL;
    }
    return error;
}

void cvips_free_error(char *error) { g_free(error); }

void cvips_unref(CVipsImage *image) {
    if (image != NULL) g_object_unref(image);
}

/// How much damage a format's loader refuses: a truncated or garbled upload must be an
/// error (415, and the client sends it again), never published as grey pixels. libjpeg
/// reports damaged scan data (a bad Huffman code, a marker where data should be) only as a
/// warning and fills the rest with grey, so JPEG fails on warnings, as sharp does by
/// default; its other warnings (an unknown JFIF version, say) are rare. The other decoders
/// report damage as errors, while libpng also warns of harmless things (a known-bad sRGB
/// profile, common in PNGs from the web), so they fail on errors.
static VipsFailOn fail_on(CVipsFormat format) {
    return format == CVIPS_JPEG ? VIPS_FAIL_ON_WARNING : VIPS_FAIL_ON_ERROR;
}

CVipsImage *cvips_open(const char *path, CVipsFormat format, int all_pages, int sequential) {
    VipsImage *out = NULL;
    VipsAccess access = sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM;
    VipsFailOn fail = fail_on(format);
    int n = all_pages ? -1 : 1;
    int result = -1;
    switch (format) {
    case CVIPS_JPEG: result = vips_jpegload(path, &out, "access", access, "fail_on", fail, NULL); break;
    case CVIPS_PNG: result = vips_pngload(path, &out, "access", access, "fail_on", fail, NULL); break;
    case CVIPS_GIF: result = vips_gifload(path, &out, "access", access, "fail_on", fail, "n", n, NULL); break;
    case CVIPS_WEBP: result = vips_webpload(path, &out, "access", access, "fail_on", fail, "n", n, NULL); break;
    case CVIPS_HEIF: result = vips_heifload(path, &out, "access", access, "fail_on", fail, NULL); break;
    }
    return result == 0 ? out : NULL;
}

int cvips_decodes(const char *path, CVipsFormat format, int all_pages) {
    CVipsImage *image = cvips_open(path, format, all_pages, 1);
    if (image == NULL) return -1;
    double average = 0;
    int result = vips_avg(image, &average, NULL);
    g_object_unref(image);
    return result;
}

int cvips_width(CVipsImage *image) { return vips_image_get_width(image); }
int cvips_height(CVipsImage *image) { return vips_image_get_height(image); }
int cvips_page_height(CVipsImage *image) { return vips_image_get_page_height(image); }
int cvips_pages(CVipsImage *image) { return vips_image_get_n_pages(image); }
int cvips_orientation(CVipsImage *image) { return vips_image_get_orientation(image); }
int cvips_has_alpha(CVipsImage *image) { return vips_image_hasalpha(image); }

CVipsImage *cvips_autorotate(CVipsImage *image) {
    VipsImage *out = NULL;
    return vips_autorot(image, &out, NULL) == 0 ? out : NULL;
}

CVipsImage *cvips_to_srgb(CVipsImage *image) {
    VipsImage *out = NULL;
    VipsInterpretation interpretation = vips_image_guess_interpretation(image);
    if (vips_image_get_typeof(image, VIPS_META_ICC_NAME)) {
        // The embedded profile says what the numbers mean; sRGB is what every screen assumes.
        if (vips_icc_transform(image, &out, "srgb", "embedded", TRUE,
                               "intent", VIPS_INTENT_PERCEPTUAL, NULL) == 0) return out;
        // A broken profile: fall back on the interpretation rather than refuse the photo.
        vips_error_clear();
    }
    if (interpretation == VIPS_INTERPRETATION_sRGB || interpretation == VIPS_INTERPRETATION_B_W) {
        g_object_ref(image);
        return image;
    }
    return vips_colourspace(image, &out, VIPS_INTERPRETATION_sRGB, NULL) == 0 ? out : NULL;
}

CVipsImage *cvips_flatten_white(CVipsImage *image) {
    VipsImage *out = NULL;
    double white[3] = {255, 255, 255};
    VipsArrayDouble *background = vips_array_double_new(white, 3);
    int result = vips_flatten(image, &out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result == 0 ? out : NULL;
}

CVipsImage *cvips_thumbnail(const char *path, CVipsFormat format, int width, int crop_square) {
    VipsImage *out = NULL;
    // Its loader refuses damage as cvips_open's does: an avatar is made from an upload.
    VipsFailOn fail = fail_on(format);
    int result = crop_square
        ? vips_thumbnail(path, &out, width, "height", width, "size", VIPS_SIZE_DOWN,
                         "crop", VIPS_INTERESTING_CENTRE, "fail_on", fail, NULL)
        : vips_thumbnail(path, &out, width, "height", VIPS_MAX_COORD, "size", VIPS_SIZE_DOWN, "fail_on", fail, NULL);
    return result == 0 ? out : NULL;
}
