"""Images from couriers' phones, behind one small interface of ours (Pillow inside).

A photo is decoded whole, then encoded again from its pixels alone: whatever the file carried
besides them (EXIF with the phone's GPS position, XMP, comments, colour profiles, trailing bytes)
is gone. The orientation EXIF asked for is applied to the pixels first, so the photo still
stands the right way up. A signature, kept as sent, is verified instead (png_verify). A file
that announces more pixels than MAX_PIXELS is refused before its pixels are decoded (a
"decompression bomb": a small file that would fill memory).
"""

import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

#: about 48 megapixels: more than any phone camera's photo, far less than what exhausts memory
MAX_PIXELS = 48_000_000
JPEG_QUALITY = 85

_FORMATS = {"JPEG": ("image/jpeg", "jpg"), "PNG": ("image/png", "png")}


class ImageRefused(ValueError):
    """Not a JPEG or PNG (or not the one format asked for) that decodes whole within the limits."""


@dataclass(frozen=True)
class CleanImage:
    """An image encoded again from its pixels: the bytes to store, and what they are."""

    content: bytes
    content_type: str
    extension: str
    width: int
    height: int


#: what Pillow raises for a file it cannot read (or one too large to decode)
_UNREADABLE = (
    UnidentifiedImageError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
)


def image_decode(
    data: bytes, *, formats: tuple[str, ...] = ("JPEG", "PNG"), max_pixels: int | None = None
) -> Image.Image:
    """`data` decoded whole (one of `formats`, by its content, never its name; its `format`
    says which) when it has at most `max_pixels` (default MAX_PIXELS); raises ImageRefused
    otherwise."""
    limit = MAX_PIXELS if max_pixels is None else max_pixels
    image = _read_whole(data, formats, limit, decode=True)
    if image.format not in formats:
        raise ImageRefused(f"format {image.format}")
    return image


def png_verify(data: bytes, *, max_pixels: int) -> None:
    """Raises ImageRefused unless `data` is a whole PNG of at most `max_pixels`: every chunk
    there up to IEND, each with its checksum. Its pixels are not inflated (1.5 ms of CPU for a
    600x200 signature pad's drawing, against 0.03): a truncated or altered file already fails
    a checksum, and only a file crafted with fresh checksums could hide a broken pixel stream."""
    _read_whole(data, ("PNG",), max_pixels, decode=False)


def _read_whole(
    data: bytes, formats: tuple[str, ...], max_pixels: int, *, decode: bool
) -> Image.Image:
    """`data` opened as one of `formats` and read whole once it announces at most `max_pixels`:
    its pixels decoded (`decode`), or only its structure checked; raises ImageRefused
    otherwise."""
    try:
        with warnings.catch_warnings():
            # Pillow only warns between MAX_IMAGE_PIXELS and twice that: refuse at the warning.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=list(formats)) as image:
                width, height = image.size
                if width * height > max_pixels:
                    raise ImageRefused("too many pixels")
                # No pixel data at all (a PNG without IDAT): `load` refuses it, `verify` would
                # index the data it does not have.
                if not image.tile:
                    raise ImageRefused("no pixel data")
                if decode:
                    image.load()
                else:
                    image.verify()
    except _UNREADABLE as exc:
        raise ImageRefused(str(exc)) from None
    return image


def image_reencode(data: bytes) -> CleanImage:
    """`data` decoded (a JPEG or PNG: image_decode) and encoded again in its own format without
    any metadata; raises ImageRefused otherwise."""
    image = image_decode(data)
    source_format = image.format
    content_type, extension = _FORMATS[source_format]
    try:
        upright = ImageOps.exif_transpose(image)  # the photo stands as the phone held it
    except _UNREADABLE as exc:  # its EXIF is broken
        raise ImageRefused(str(exc)) from None
    upright.info = {}  # nothing of the source's metadata reaches the encoder
    out = io.BytesIO()
    if source_format == "JPEG":
        if upright.mode not in ("RGB", "L"):
            upright = upright.convert("RGB")
        upright.save(out, "JPEG", quality=JPEG_QUALITY)
    else:
        upright.save(out, "PNG")
    return CleanImage(out.getvalue(), content_type, extension, upright.width, upright.height)
