#ifndef CVIPS_H
#define CVIPS_H
// The part of libvips the image pipeline uses, as plain functions: libvips' API is
// variadic (options as name/value lists), which Swift cannot call, and its headers pull in
// glib, which Swift need not see. Every function that makes an image returns a new
// reference (NULL on failure, with the reason in cvips_take_error) and leaves its input's
// reference alone.

/// A libvips image (VipsImage), opaque here.
typedef struct _VipsImage CVipsImage;

/// The five formats whose loaders may see user bytes.
typedef enum {
    CVIPS_JPEG = 0,
    CVIPS_PNG = 1,
    CVIPS_GIF = 2,
    CVIPS_WEBP = 3,
    CVIPS_HEIF = 4,
} CVipsFormat;

/// Starts libvips once: blocks every loader but the five (and anything libvips marks
/// untrusted), turns off the operation cache (it would keep decoded images and open files)
/// and makes each pipeline single-threaded (the server runs several at once instead).
/// Returns 0, or -1 with the reason in cvips_take_error.
int cvips_start(void);

/// The reason for the last failure (libvips keeps one buffer for all threads, so it may hold
/// another image's reason too), to be freed with cvips_free_error
/// (NULL if none); clears it.
char *cvips_take_error(void);
void cvips_free_error(char *error);

void cvips_unref(CVipsImage *image);

/// Opens a file with its format's loader: only the header is read; pixels are decoded when
/// asked for, and a truncated or garbled file fails then (it is never filled with grey).
/// all_pages: every frame of an animation, stacked. sequential: pixels are read once, top
/// to bottom (an image that will be turned needs random access).
CVipsImage *cvips_open(const char *path, CVipsFormat format, int all_pages, int sequential);

/// Decodes every pixel of the file once, keeping none (0 when it decodes to the end, -1
/// with the reason when it does not).
int cvips_decodes(const char *path, CVipsFormat format, int all_pages);

int cvips_width(CVipsImage *image);
int cvips_height(CVipsImage *image);
/// The height of one frame (the height itself for a still image), and the frame count.
int cvips_page_height(CVipsImage *image);
int cvips_pages(CVipsImage *image);
/// The EXIF orientation (1 when there is none).
int cvips_orientation(CVipsImage *image);
int cvips_has_alpha(CVipsImage *image);

/// Turns the pixels as the EXIF orientation says, and drops the tag.
CVipsImage *cvips_autorotate(CVipsImage *image);
/// sRGB (or grey, which is left as it is): through the embedded ICC profile if there is
/// one, else by the interpretation libvips read.
CVipsImage *cvips_to_srgb(CVipsImage *image);
/// The alpha channel flattened onto white (JPEG has none).
CVipsImage *cvips_flatten_white(CVipsImage *image);

/// The image without the metadata fields a saver would write (EXIF, XMP, IPTC, ICC,
/// comments, text): `strip` alone leaves libvips' own EXIF block in animated WebP.
CVipsImage *cvips_without_metadata(CVipsImage *image);

/// Writes the image with no metadata at all (no EXIF, XMP, IPTC, ICC, comments, text
/// chunks). quality: JPEG and WebP only. An image with several frames (its page height
/// set) is written animated by GIF and WebP.
int cvips_save(CVipsImage *image, const char *path, CVipsFormat format, int quality);

/// A smaller copy made with shrink-on-load: width wide (never wider than the image),
/// aspect kept; crop_square: cut to a width x width square around the centre first. Only
/// the first frame of an animation. The loader is found by the file's bytes, among the five
/// cvips_start left; it refuses damage as cvips_open does for `format` (the file's format).
CVipsImage *cvips_thumbnail(const char *path, CVipsFormat format, int width, int crop_square);
#endif
