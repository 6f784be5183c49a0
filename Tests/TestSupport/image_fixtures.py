"""Writes the images the image tests upload, into the folder named by argv[1].

Made with Pillow (and pillow-heif for HEIC) so that each one carries exactly what a test
looks for: GPS and a camera serial in EXIF, an orientation tag, PNG text chunks, frames,
a header that lies about its size, bytes that stop halfway or are garbled.
"""
import io
import struct
import sys
import zlib

from PIL import Image, PngImagePlugin
from pillow_heif import register_heif_opener

register_heif_opener()
out = sys.argv[1]


def path(name):
    return f"{out}/{name}"


def gradient(width, height):
    """Left half red, right half blue: a turn by 90 degrees shows where each half went."""
    image = Image.new("RGB", (width, height), (220, 30, 30))
    image.paste((30, 30, 220), (width // 2, 0, width, height))
    return image


def exif_with_secrets(orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation  # Orientation
    exif[0x010F] = "PhoneMaker"  # Make
    exif[0x0110] = "Phone 15"  # Model
    gps = exif.get_ifd(0x8825)
    gps[1] = "N"
    gps[2] = (48.0, 51.0, 29.0)
    gps[3] = "E"
    gps[4] = (2.0, 17.0, 40.0)
    exif_ifd = exif.get_ifd(0x8769)
    exif_ifd[0xA431] = "SERIAL-0042"  # BodySerialNumber
    return exif


# 600 x 400 as stored, orientation 6: shown upright it is 400 wide and 600 high.
gradient(600, 400).save(path("gps-rotated.jpg"), quality=90, exif=exif_with_secrets(6),
                        comment=b"camera comment")

# A PNG with text chunks (one of them XMP-like).
info = PngImagePlugin.PngInfo()
info.add_text("Comment", "secret comment")
info.add_text("Author", "Jane Doe")
info.add_itxt("XML:com.adobe.xmp", "<x:xmpmeta>GPS 48.85</x:xmpmeta>")
gradient(300, 200).save(path("text.png"), pnginfo=info)

# Animations: three frames each.
frames = [Image.new("RGB", (120, 80), colour) for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
frames[0].save(path("animated.gif"), save_all=True, append_images=frames[1:], duration=100, loop=0)
frames[0].save(path("animated.webp"), save_all=True, append_images=frames[1:], duration=100, loop=0)

# An iPhone's kind of photo.
gradient(640, 480).save(path("photo.heic"), quality=80)

# Plain ones, for sizes and avatars.
gradient(2000, 1000).save(path("wide.jpg"), quality=85)
gradient(300, 200).save(path("small.jpg"), quality=85)
gradient(800, 400).save(path("wide.png"))
gradient(400, 300).save(path("still.webp"), quality=80)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_claiming(width, height):
    """A valid PNG signature and header claiming width x height, then a tiny IDAT: the
    decoder would want width x height pixels of memory."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")


with open(path("bomb.png"), "wb") as f:
    f.write(png_claiming(50000, 50000))

# Over 8,192 px on a side while far under 40 megapixels: refused too.
Image.new("L", (9000, 10), 128).save(path("too-wide.png"))

# A JPEG that stops after a third of its bytes.
buffer = io.BytesIO()
gradient(400, 300).save(buffer, format="JPEG", quality=90)
data = buffer.getvalue()
with open(path("truncated.jpg"), "wb") as f:
    f.write(data[: len(data) // 3])

# The same kind of JPEG with 64 bytes in the middle of its scan data overwritten, as a
# flaky transfer or a bad flash block would: its markers are intact (no 0xFF byte in
# the pattern), so only the decoder sees the damage, as bad Huffman codes.
scan_start = data.index(b"\xff\xda")
scan_start += 2 + int.from_bytes(data[scan_start + 2:scan_start + 4], "big")
middle = scan_start + (len(data) - 2 - scan_start) // 2
with open(path("garbled.jpg"), "wb") as f:
    f.write(data[:middle] + bytes((i * 37 + 11) % 255 for i in range(64)) + data[middle + 64:])

# A progressive JPEG (what many apps and web tools write), whole and cut in half.
buffer = io.BytesIO()
gradient(400, 300).save(buffer, format="JPEG", quality=90, progressive=True)
data = buffer.getvalue()
with open(path("progressive.jpg"), "wb") as f:
    f.write(data)
with open(path("truncated-progressive.jpg"), "wb") as f:
    f.write(data[: len(data) // 2])

# A PNG and a WebP cut in half.
buffer = io.BytesIO()
gradient(400, 300).save(buffer, format="PNG")
data = buffer.getvalue()
with open(path("truncated.png"), "wb") as f:
    f.write(data[: len(data) // 2])
buffer = io.BytesIO()
gradient(400, 300).save(buffer, format="WEBP", quality=80)
data = buffer.getvalue()
with open(path("truncated.webp"), "wb") as f:
    f.write(data[: len(data) // 2])

# The animated GIF cut after two thirds of its bytes: inside its second frame's data.
with open(path("animated.gif"), "rb") as f:
    data = f.read()
with open(path("truncated.gif"), "wb") as f:
    f.write(data[: len(data) * 2 // 3])

# JPEG's magic number, then nothing an image decoder can use.
with open(path("corrupt.jpg"), "wb") as f:
    f.write(b"\xff\xd8\xff\xe0" + b"not really an image" * 50)
