#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks that po/POTFILES.in lists every source file with translatable strings, and
# nothing that no longer exists. Run by `meson test --suite po`; stdlib only.
#
#   check-potfiles.py SOURCE_ROOT [POTFILES.in]
#   check-potfiles.py --update SOURCE_ROOT    rewrite po/POTFILES.in from the scan

import os
import re
import subprocess
import sys

SCANNED_DIRS = ('core', 'ui', 'app', 'producer', 'data', 'examples')
SCANNED_SUFFIXES = ('.c', '.h', '.ui', '.in', '.xml')

# Gettext calls as the glib preset of i18n.gettext() extracts them, plus the plain
# libintl ones. `\b` keeps `foo_(` and `g_gettext(` out.
C_MARKER = re.compile(
    r'\b(?:_|N_|C_|NC_|Q_|g_dgettext|g_dcgettext|g_dngettext|g_dpgettext2?|'
    r'gettext|dgettext|dcgettext|ngettext|dngettext|pgettext)\s*\(')
UI_MARKER = re.compile(r'\btranslatable\s*=\s*["\'](?:yes|true|1)["\']', re.I)
DESKTOP_KEY = re.compile(r'^(?:Name|GenericName|Comment|Keywords|X-GNOME-FullName)\s*=\s*\S',
                         re.M)
GSCHEMA_MARKER = re.compile(r'<(?:summary|description)\b')
MIME_MARKER = re.compile(r'<comment\b')


def strip_c(text):
    """Drop comments and the contents of string/char literals, keep everything else."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            i = n if j < 0 else j + 2
            out.append(' ')
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif c in '"\'':
            out.append(c)
            i += 1
            while i < n and text[i] != c and text[i] != '\n':
                i += 2 if text[i] == '\\' else 1
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def has_c_markers(text):
    for line in strip_c(text).splitlines():
        if re.match(r'\s*#\s*(?:define|undef)\b', line):
            continue  # a macro defining _() is not a use of it
        if C_MARKER.search(line):
            return True
    return False


def is_translatable(path, text):
    name = os.path.basename(path)
    base = name[:-3] if name.endswith('.in') else name
    if base.endswith(('.c', '.h')):
        return has_c_markers(text)
    if base.endswith('.ui'):
        return bool(UI_MARKER.search(text))
    if base.endswith('.desktop'):
        return bool(DESKTOP_KEY.search(text))
    if base.endswith(('.metainfo.xml', '.appdata.xml')):
        return True  # <name> and <summary> are always translatable
    if base.endswith('.gschema.xml'):
        return bool(GSCHEMA_MARKER.search(text))
    if base.endswith('.xml') and '<mime-info' in text:
        return bool(MIME_MARKER.search(text))
    if base.endswith('.xml'):
        return bool(UI_MARKER.search(text))
    return False


def source_files(root):
    try:
        out = subprocess.run(
            ['git', 'ls-files', '-co', '--exclude-standard', '--', *SCANNED_DIRS],
            cwd=root, check=True, capture_output=True, text=True).stdout
        paths = out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        paths = []  # not a git checkout (a release tarball): walk the folders instead
        for top in SCANNED_DIRS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
                dirnames[:] = [d for d in dirnames if not d.startswith('.')]
                for f in filenames:
                    paths.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(set(p for p in paths
                      if p.endswith(SCANNED_SUFFIXES) and os.path.isfile(os.path.join(root, p))))


def read_potfiles(path):
    entries = []
    with open(path, encoding='utf-8') as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            line = re.sub(r'^\[[^]]*\]\s*', '', line)  # [encoding: UTF-8]
            entries.append((lineno, line))
    return entries


HEADER = '# Source files with translatable strings, one per line (checked by check-potfiles.py).\n'


def translatable_files(root):
    found = []
    for path in source_files(root):
        try:
            with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
                text = f.read()
        except OSError:
            continue
        if is_translatable(path, text):
            found.append(path)
    return found


def update(root):
    potfiles = os.path.join(root, 'po', 'POTFILES.in')
    found = translatable_files(root)
    with open(potfiles, 'w', encoding='utf-8') as f:
        f.write(HEADER)
        f.writelines(p + '\n' for p in found)
    print(f'check-potfiles: wrote {len(found)} file(s) to {potfiles}')
    return 0


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == '--update':
        return update(os.path.abspath(args[1]))
    if len(args) not in (1, 2):
        print('usage: check-potfiles.py [--update] SOURCE_ROOT [POTFILES.in]', file=sys.stderr)
        return 2
    root = os.path.abspath(args[0])
    potfiles = args[1] if len(args) == 2 else os.path.join(root, 'po', 'POTFILES.in')

    entries = read_potfiles(potfiles)
    listed = {e for _, e in entries}
    errors = []

    for lineno, entry in entries:
        if not os.path.isfile(os.path.join(root, entry)):
            errors.append(f'{potfiles}:{lineno}: {entry} is listed but does not exist')

    seen = set()
    for lineno, entry in entries:
        if entry in seen:
            errors.append(f'{potfiles}:{lineno}: {entry} is listed twice')
        seen.add(entry)

    for path in translatable_files(root):
        if path not in listed:
            errors.append(f'{path}: has translatable strings but is missing from po/POTFILES.in '
                          f'(po/check-potfiles.py --update rewrites the list)')

    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f'check-potfiles: {len(errors)} problem(s)', file=sys.stderr)
        return 1
    print(f'check-potfiles: {len(listed)} file(s) listed, all present, none missing')
    return 0


if __name__ == '__main__':
    sys.exit(main())
