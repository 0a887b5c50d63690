#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Renders each icon with rsvg-convert and checks the result is a PNG of the asked size
# with something drawn in it; symbolic icons must use the one colour GTK recolours.
#
#   check-icons.py RSVG_CONVERT ICON.svg...

import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib


def png_pixels(path):
    """Return (width, height, count of pixels with non-zero alpha) of an 8-bit RGBA PNG."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        raise ValueError('not a PNG')
    pos, idat, width = 8, b'', None
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height, depth, color, _, _, interlace = struct.unpack('>IIBBBBB', body)
            if (depth, color, interlace) != (8, 6, 0):
                raise ValueError(f'unexpected PNG format depth={depth} color={color}')
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * 4
    prev = bytearray(stride)
    drawn = 0
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - 4] if x >= 4 else 0
            b = prev[x]
            c = prev[x - 4] if x >= 4 else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 0xff
            elif ftype == 2:
                line[x] = (line[x] + b) & 0xff
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xff
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 0xff
        drawn += sum(1 for x in range(3, stride, 4) if line[x])
        prev = line
    return width, height, drawn


def symbolic_colors(path):
    """Colours a symbolic icon uses other than the #2e3436 GTK recolours."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    found = set(c.lower() for c in re.findall(r'#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b', text))
    return sorted(found - {'#2e3436'})


def main():
    rsvg, icons = sys.argv[1], sys.argv[2:]
    failed = False
    for icon in icons:
        if icon.endswith('-symbolic.svg') and symbolic_colors(icon):
            print(f'{icon}: a symbolic icon must be drawn in #2e3436 only, '
                  f'found {", ".join(symbolic_colors(icon))}', file=sys.stderr)
            failed = True
    with tempfile.TemporaryDirectory() as tmp:
        for icon in icons:
            for size in (16, 32, 128):
                out = os.path.join(tmp, f'{os.path.basename(icon)}-{size}.png')
                r = subprocess.run([rsvg, '-w', str(size), '-h', str(size), icon, '-o', out],
                                   capture_output=True, text=True)
                if r.returncode != 0 or not os.path.exists(out) or os.path.getsize(out) == 0:
                    print(f'{icon}: rsvg-convert failed at {size}px: {r.stderr.strip()}',
                          file=sys.stderr)
                    failed = True
                    continue
                w, h, drawn = png_pixels(out)
                share = drawn / (w * h)
                print(f'{os.path.basename(icon)} at {size}px: {w}x{h}, {share:.0%} drawn')
                if (w, h) != (size, size) or share < 0.10:
                    print(f'{icon}: expected a {size}x{size} image with at least 10% drawn, '
                          f'got {w}x{h} with {share:.0%}', file=sys.stderr)
                    failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
