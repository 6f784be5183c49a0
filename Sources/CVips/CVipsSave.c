// Writing images: what CVips.h says of cvips_without_metadata and cvips_save. Apart from
// CVips.c because writing is where every metadata block must be kept out, WebP's included.
#include "CVips.h"
#include <vips/vips.h>
#include <webp/mux.h>

/// Whether a metadata field is one a saver would write out: anything that can carry who,
/// where or with what a photo was taken. Frame timing and loop count are not among them.
static gboolean is_revealing(const char *name) {
    static const char *prefixes[] = {"exif-", "xmp-", "iptc-", "icc-", "png-comment-", "gif-comment",
                                     "heif-", "jpeg-", "orientation", "resolution-unit"};
    for (size_t index = 0; index < sizeof prefixes / sizeof prefixes[0]; index++) {
        if (g_str_has_prefix(name, prefixes[index])) return TRUE;
    }
    return FALSE;
}

CVipsImage *cvips_without_metadata(CVipsImage *image) {
    VipsImage *out = NULL;
    if (vips_copy(image, &out, NULL) != 0) return NULL;
    gchar **fields = vips_image_get_fields(out);
    for (gchar **field = fields; *field != NULL; field++) {
        if (is_revealing(*field)) vips_image_remove(out, *field);
    }
    g_strfreev(fields);
    return out;
}

/// libvips 8.14's WebP saver writes an EXIF chunk of its own even when told to strip: the
/// image is encoded in memory and every metadata chunk taken out with libwebpmux.
static int save_webp(VipsImage *image, const char *path, int quality) {
    void *encoded = NULL;
    size_t length = 0;
    if (vips_webpsave_buffer(image, &encoded, &length, "strip", TRUE, "Q", quality, NULL) != 0) return -1;
    WebPData input = {encoded, length};
    WebPMux *mux = WebPMuxCreate(&input, 0);
    int result = -1;
    if (mux == NULL) {
        vips_error("webpsave", "libwebpmux could not read the encoded image");
    } else {
        WebPMuxDeleteChunk(mux, "EXIF");
        WebPMuxDeleteChunk(mux, "XMP ");
        WebPMuxDeleteChunk(mux, "ICCP");
        WebPData output = {NULL, 0};
        if (WebPMuxAssemble(mux, &output) != WEBP_MUX_OK) {
            vips_error("webpsave", "libwebpmux could not write the image");
        } else {
            GError *error = NULL;
            if (g_file_set_contents(path, (const char *)output.bytes, (gssize)output.size, &error)) {
                result = 0;
            } else {
                vips_error("webpsave", "%s", error->message);
                g_error_free(error);
            }
            WebPDataClear(&output);
        }
        WebPMuxDelete(mux);
    }
    g_free(encoded);
    return result;
}

/// Huffman tables made for the image save 5-10% of a JPEG, but libjpeg then holds every
/// coefficient until the end: 72 MB for a 24-megapixel photo, where a streamed save holds a
/// few rows. Up to this size (sizes, avatars, most screenshots) the tables are worth it.
static const gint64 optimized_jpeg_pixels = 4000000;

int cvips_save(CVipsImage *image, const char *path, CVipsFormat format, int quality) {
    gboolean optimize = (gint64)vips_image_get_width(image) * vips_image_get_height(image) <= optimized_jpeg_pixels;
    switch (format) {
    case CVIPS_JPEG:
    case CVIPS_HEIF:
        return vips_jpegsave(image, path, "strip", TRUE, "Q", quality, "optimize_coding", optimize, NULL);
    case CVIPS_PNG:
        return vips_pngsave(image, path, "strip", TRUE, "compression", 6, NULL);
    case CVIPS_GIF:
        return vips_gifsave(image, path, "strip", TRUE, NULL);
    case CVIPS_WEBP:
        return save_webp(image, path, quality);
    }
    return -1;
}
