#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks the translations in po/ against the sources. Run by `meson test --suite po`;
# stdlib only, plus msgfmt and xgettext from gettext.
#
#   check-translations.py statistics SOURCE_ROOT
#       every language in po/LINGUAS has a .po that msgfmt --check accepts, with no fuzzy
#       and no untranslated messages.
#   check-translations.py coverage SOURCE_ROOT
#       every message xgettext extracts from the files in po/POTFILES.in (same keywords as
#       the glib preset of i18n.gettext) has an entry in each .po.

import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77  # meson: test skipped

# The glib preset of meson's i18n.gettext(), so the test sees what `ninja mach6-pot` sees.
XGETTEXT_ARGS = [
    '--from-code=UTF-8', '--add-comments',
    '--keyword=_', '--keyword=N_', '--keyword=C_:1c,2', '--keyword=NC_:1c,2',
    '--keyword=g_dcgettext:2', '--keyword=g_dngettext:2,3', '--keyword=g_dpgettext2:2c,3',
    '--flag=N_:1:pass-c-format', '--flag=C_:2:pass-c-format', '--flag=NC_:2:pass-c-format',
    '--flag=g_dngettext:2:pass-c-format', '--flag=g_strdup_printf:1:c-format',
    '--flag=g_string_printf:2:c-format', '--flag=g_string_append_printf:2:c-format',
    '--flag=g_error_new:3:c-format', '--flag=g_set_error:4:c-format',
    '--flag=g_markup_printf_escaped:1:c-format', '--flag=g_log:3:c-format',
    '--flag=g_print:1:c-format', '--flag=g_printerr:1:c-format', '--flag=g_printf:1:c-format',
    '--flag=g_fprintf:2:c-format', '--flag=g_sprintf:2:c-format', '--flag=g_snprintf:3:c-format',
]


def linguas(po_dir):
    langs = []
    with open(os.path.join(po_dir, 'LINGUAS'), encoding='utf-8') as f:
        for line in f:
            line = line.split('#', 1)[0]
            langs.extend(line.split())
    return langs


def unquote(s):
    s = s.strip()
    if not (s.startswith('"') and s.endswith('"')):
        raise ValueError(f'not a quoted string: {s}')
    s = s[1:-1]
    return re.sub(r'\\(.)', lambda m: {'n': '\n', 't': '\t', 'r': '\r'}.get(m.group(1), m.group(1)), s)


def parse_po(path):
    """Return {(msgctxt, msgid): {'plural':..., 'msgstr': [...], 'fuzzy': bool}}; obsolete
    (#~) entries and the header are left out."""
    entries = {}
    cur = None
    field = None

    def flush():
        nonlocal cur
        if cur is not None and 'msgid' in cur and cur['msgid'] != '':
            key = (cur.get('msgctxt'), cur['msgid'])
            entries[key] = {
                'plural': cur.get('msgid_plural'),
                'msgstr': [cur['msgstr'][k] for k in sorted(cur.get('msgstr', {}))],
                'fuzzy': cur.get('fuzzy', False),
            }
        cur = None

    with open(path, encoding='utf-8') as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line:
                flush()
                field = None
                continue
            if line.startswith('#~'):
                continue
            if line.startswith('#'):
                if cur is not None and 'msgid' in cur:
                    flush()
                if cur is None:
                    cur = {}
                if line.startswith('#,') and 'fuzzy' in line:
                    cur['fuzzy'] = True
                continue
            m = re.match(r'(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")$', line)
            if m:
                kw, idx, value = m.group(1), m.group(2), unquote(m.group(3))
                if kw in ('msgctxt', 'msgid') and cur is not None and 'msgid' in cur:
                    flush()
                if cur is None:
                    cur = {}
                if kw.startswith('msgstr'):
                    field = ('msgstr', int(idx) if idx else 0)
                    cur.setdefault('msgstr', {})[field[1]] = value
                else:
                    field = (kw, None)
                    cur[kw] = value
                continue
            if line.startswith('"') and cur is not None and field is not None:
                if field[0] == 'msgstr':
                    cur['msgstr'][field[1]] += unquote(line)
                else:
                    cur[field[0]] += unquote(line)
                continue
            raise ValueError(f'{path}:{lineno}: cannot parse: {raw.rstrip()}')
    flush()
    return entries


def check_statistics(root):
    po_dir = os.path.join(root, 'po')
    msgfmt = shutil.which('msgfmt')
    if not msgfmt:
        print('msgfmt not found; skipping')
        return SKIP
    failed = False
    for lang in linguas(po_dir):
        po = os.path.join(po_dir, lang + '.po')
        if not os.path.isfile(po):
            print(f'po/LINGUAS names {lang} but po/{lang}.po does not exist', file=sys.stderr)
            failed = True
            continue
        r = subprocess.run([msgfmt, '--check', '--statistics', '-o', os.devnull, po],
                           capture_output=True, text=True)
        report = (r.stdout + r.stderr).strip()
        print(f'po/{lang}.po: {report}')
        if r.returncode != 0:
            print(f'po/{lang}.po: msgfmt --check failed', file=sys.stderr)
            failed = True
            continue
        fuzzy = re.search(r'(\d+) fuzzy', report)
        untranslated = re.search(r'(\d+) untranslated', report)
        for what, m in (('fuzzy', fuzzy), ('untranslated', untranslated)):
            if m and int(m.group(1)) > 0:
                print(f'po/{lang}.po: {m.group(1)} {what} message(s), expected 0', file=sys.stderr)
                failed = True
        # msgfmt does not count a plural entry with some empty forms as untranslated.
        for (ctxt, msgid), e in parse_po(po).items():
            if e['fuzzy'] or any(s == '' for s in e['msgstr']):
                where = f' (context {ctxt!r})' if ctxt else ''
                print(f'po/{lang}.po: not translated{where}: {msgid!r}', file=sys.stderr)
                failed = True
    return 1 if failed else 0


def extract(root, potfiles):
    xgettext = shutil.which('xgettext')
    if not xgettext:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        pot = os.path.join(tmp, 'mach6.pot')
        r = subprocess.run([xgettext, '--package-name=mach6', '--files-from', potfiles,
                            '--directory', root, '--output', pot, *XGETTEXT_ARGS],
                           capture_output=True, text=True)
        if r.stderr.strip():
            print(r.stderr.strip(), file=sys.stderr)
        if r.returncode != 0:
            raise RuntimeError('xgettext failed')
        if not os.path.exists(pot):
            return {}  # nothing to translate
        return parse_po(pot)


def check_coverage(root):
    po_dir = os.path.join(root, 'po')
    template = extract(root, os.path.join(po_dir, 'POTFILES.in'))
    if template is None:
        print('xgettext not found; skipping')
        return SKIP
    failed = False
    for lang in linguas(po_dir):
        po = os.path.join(po_dir, lang + '.po')
        if not os.path.isfile(po):
            print(f'po/LINGUAS names {lang} but po/{lang}.po does not exist', file=sys.stderr)
            failed = True
            continue
        have = parse_po(po)
        missing = [k for k in template if k not in have]
        stale = [k for k in have if k not in template]
        for ctxt, msgid in missing:
            where = f' (context {ctxt!r})' if ctxt else ''
            print(f'po/{lang}.po: missing msgid{where}: {msgid!r}', file=sys.stderr)
        for key in template:
            if key in have and bool(template[key]['plural']) != bool(have[key]['plural']):
                print(f'po/{lang}.po: plural form differs for {key[1]!r}', file=sys.stderr)
                failed = True
        for ctxt, msgid in stale:
            print(f'po/{lang}.po: note: no longer in the sources: {msgid!r}')
        print(f'po/{lang}.po: {len(template) - len(missing)} of {len(template)} messages present')
        failed = failed or bool(missing)
    return 1 if failed else 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ('statistics', 'coverage'):
        print('usage: check-translations.py statistics|coverage SOURCE_ROOT', file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[2])
    if sys.argv[1] == 'statistics':
        return check_statistics(root)
    return check_coverage(root)


if __name__ == '__main__':
    sys.exit(main())
