#ifndef CLIBVIPS_SHIM_H
#define CLIBVIPS_SHIM_H
// libvips and libwebpmux, for the CVips target only: Swift never imports glib's headers
// (CVips.h is the boundary); this module brings the include paths and link flags that
// pkg-config gives.
#include <vips/vips.h>
#include <webp/mux.h>
#endif
