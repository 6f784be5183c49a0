"""Prints what an image file is, as one JSON line, for the image tests (ImageProbe.swift).

    image_probe.py FILE [X,Y ...]

X,Y are fractions of the width and height (0.5,0.25 is the middle column, a quarter down);
the colour there is read from the first frame. Read with Pillow (and pillow-heif), a decoder
other than the server's libvips, so that a test does not check libvips with libvips.
"""
import json
import sys

from PIL import Image
from pillow_heif import register_heif_opener

register_heif_opener()
# The tests' own files are small; a bomb is never opened here (it would be refused anyway).
Image.MAX_IMAGE_PIXELS = 50_000_000

path = sys.argv[1]
with Image.open(path) as image:
    frames = getattr(image, "n_frames", 1)
    info_keys = sorted(str(key) for key in image.info.keys())
    text_keys = sorted(getattr(image, "text", {}).keys()) if image.format == "PNG" else []
    exif_tags = len(image.getexif())
    image.seek(0)
    first = image.convert("RGB")
    colours = []
    for point in sys.argv[2:]:
        fx, fy = (float(part) for part in point.split(","))
        x = min(first.width - 1, int(fx * first.width))
        y = min(first.height - 1, int(fy * first.height))
        colours.append(list(first.getpixel((x, y))))
    print(json.dumps({
        "format": image.format,
        "width": image.width,
        "height": image.height,
        "frames": frames,
        "colours": colours,
        "info_keys": info_keys,
        "text_keys": text_keys,
        "exif_tags": exif_tags,
    }))
