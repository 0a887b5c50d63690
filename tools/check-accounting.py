#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An independent re-implementation of docs/accounting.md, in Python and from
the documents alone: it reads a .mach6 capture (docs/capture-format.md),
replays its events through the accounting and prints each thread's payload,
or compares it, value for value, with `mach6 report --json` of the same file.

    tools/check-accounting.py CAPTURE            the payload of every thread
    tools/check-accounting.py CAPTURE REPORT     compare with REPORT (JSON);
                                                 exit 1 on any difference
    tools/check-accounting.py CAPTURE --events   the events, one a line

The test accounting-spec runs it on a recording of the demo game. Records it
does not know (checkpoints, samples, ...) are skipped, as a reader may."""
import json, struct, sys

M64 = (1 << 64) - 1

def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x

def uleb(b, i):
    v = 0; sh = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << sh; sh += 7
        if not c & 0x80:
            return v, i

def unzz(z):
    return (z >> 1) ^ -(z & 1)

def read_capture(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'MACH6CAP'
    pos = 128
    labels = {0: 'root'}
    threads = {}   # index -> dict
    while pos + 12 <= len(data):
        typ, ln, _crc = struct.unpack_from('<III', data, pos)
        p = data[pos + 12: pos + 12 + ln]
        pos += 12 + ln
        if typ == 1:
            (lid,) = struct.unpack_from('<I', p); labels[lid] = p[4:].decode('utf-8', 'replace')
        elif typ == 2:
            idx, tid = struct.unpack_from('<IQ', p)
            threads[idx] = dict(tid=tid, name=p[12:].decode('utf-8', 'replace'), events=[])
        elif typ == 6:
            idx, cnt = struct.unpack_from('<II', p)
            for k in range(cnt):
                threads[idx]['events'].append(struct.unpack_from('<qqII', p, 8 + 24 * k))
        elif typ == 12:
            idx, cnt = struct.unpack_from('<II', p)
            assert p[8] == 0, 'only codec 0 here'
            i = 9
            n, i = uleb(p, i); raw, i = uleb(p, i)
            t = h = 0; depth = 0
            for _ in range(n):
                lab, i = uleb(p, i); dt, i = uleb(p, i); dh, i = uleb(p, i); dd, i = uleb(p, i)
                t = s64(t + unzz(dt)); h = s64(h + unzz(dh))
                pred = depth if lab else depth - 1
                d = (pred + unzz(dd)) & 0xffffffff
                depth = d + 1 if lab else d
                threads[idx]['events'].append((t, h, lab, d))
        elif typ == 8:
            break
    return labels, threads

# --- the generator and the reservoir --------------------------------------
def splitmix64(state):
    state = (state + 0x9e3779b97f4a7c15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return state, z ^ (z >> 31)

class Rng:
    def __init__(self, seed):
        self.s = []
        st = seed & M64
        for _ in range(4):
            st, z = splitmix64(st); self.s.append(z)
    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result
    def below(self, k):
        return (self.next() * k) >> 64

class Reservoir:
    def __init__(self):
        self.values = []; self.seen = 0
    def add(self, rng, v):
        self.seen += 1
        k = self.seen
        if k <= 128:
            self.values.append(v)
        else:
            j = rng.below(k)
            if j < 128:
                self.values[j] = v

def quantile(sv, p):
    n = len(sv)
    if n == 0:
        return 0.0
    pos = p * float(n - 1)
    lo = int(pos)
    frac = pos - float(lo)
    if lo + 1 >= n:
        return float(sv[n - 1])
    return float(sv[lo]) + frac * (float(sv[lo + 1]) - float(sv[lo]))

# --- the tree --------------------------------------------------------------
class Node:
    def __init__(self, label, parent):
        self.label = label; self.parent = parent; self.children = []
        self.depth = parent.depth + 1 if parent else 0
        self.count = self.opens = 0
        self.time_sum = self.mem_sum = self.inverse_sum = self.self_sum = 0
        self.inverse_count = 0
        self.time_min = self.mem_min = None; self.time_max = self.mem_max = None
        self.h_first = self.h_last = self.h_close_prev = 0
        self.tres = Reservoir(); self.mres = Reservoir()

class Tree:
    def __init__(self, seed):
        self.root = Node(0, None); self.stack = []; self.frames = 0
        self.rng = Rng(seed)
    def mark(self, label, t, h):
        parent = self.stack[-1][0] if self.stack else self.root
        if not self.stack:
            self.frames += 1
        node = next((c for c in parent.children if c.label == label), None)
        if node is None:
            node = Node(label, parent); parent.children.append(node)
        self.stack.append([node, t, h, 0])
        if node.count > 0:
            node.inverse_sum += h - node.h_close_prev; node.inverse_count += 1
        elif node.opens == 0:
            node.h_first = h
        node.opens += 1; node.h_last = h
    def done(self, t, h):
        node, t0, h0, child_sum = self.stack.pop()
        dt = t - t0; d = h - h0
        node.count += 1; node.time_sum += dt; node.mem_sum += d
        node.time_min = dt if node.time_min is None else min(node.time_min, dt)
        node.time_max = dt if node.time_max is None else max(node.time_max, dt)
        node.mem_min = d if node.mem_min is None else min(node.mem_min, d)
        node.mem_max = d if node.mem_max is None else max(node.mem_max, d)
        node.self_sum += d - child_sum
        if self.stack:
            self.stack[-1][3] += d
        node.h_close_prev = h; node.h_last = h
        node.tres.add(self.rng, dt); node.mres.add(self.rng, d)
        return node, dt
    def abandon(self):
        while self.stack:
            node, t0, h0, child_sum = self.stack.pop()
            node.opens -= 1
            if node.count > 0:
                node.inverse_sum -= h0 - node.h_close_prev; node.inverse_count -= 1
                node.h_last = node.h_close_prev
            elif node.opens == 0:
                node.h_first = node.h_last = 0
            if not self.stack:
                self.frames -= 1

def ingest(events, seed):
    tree = Tree(seed); synced = False; last_t = 0
    counts = dict(rejected=0, skipped=0, accepted=0)
    L_T, L_H = 1 << 61, 1 << 53
    def reject():
        nonlocal synced
        counts['rejected'] += 1; synced = False; tree.abandon()
    for (t_ns, h, lab, d) in events:
        t = max(t_ns, last_t)
        if abs(t_ns) > L_T or abs(h) > L_H:
            reject(); continue
        if not synced:
            if lab == 0 or d != 0:
                counts['skipped'] += 1; continue
            synced = True; tree.abandon()
        last_t = t
        depth = len(tree.stack)
        if lab != 0:
            if d != depth or depth >= 4096:   # (unknown label ids: not checked here)
                reject(); continue
            tree.mark(lab, t, h)
        else:
            if depth == 0 or d != depth - 1:
                reject(); continue
            tree.done(t, h)
        counts['accepted'] += 1
    return tree, counts

def stats(tree, n):
    c = n.count; fr = float(tree.frames); net = n.mem_sum + n.inverse_sum
    tv = sorted(n.tres.values); mv = sorted(n.mres.values)
    S, K = 1e9, 1024.0
    st = {
        'time.avg': float(n.time_sum) / float(c) / S if c else 0.0,
        'time.p50': quantile(tv, 0.50) / S, 'time.p90': quantile(tv, 0.90) / S,
        'time.max': float(n.time_max) / S if c else 0.0,
        'mem_delta.avg': float(n.mem_sum) / float(c) / K if c else 0.0,
        'mem.net': float(net) / K,
        'count': c,
        'time.min': float(n.time_min) / S if c else 0.0,
        'time.p10': quantile(tv, 0.10) / S,
        'time.total': float(n.time_sum) / S,
        'mem_delta.min': float(n.mem_min) / K if c else 0.0,
        'mem_delta.max': float(n.mem_max) / K if c else 0.0,
        'mem_delta.p10': quantile(mv, 0.10) / K, 'mem_delta.p50': quantile(mv, 0.50) / K,
        'mem_delta.p90': quantile(mv, 0.90) / K,
        'mem_delta.total': float(n.mem_sum) / K,
        'inverse_mem.total': float(n.inverse_sum) / K,
        'inverse_mem.avg': float(n.inverse_sum) / float(n.inverse_count) / K if n.inverse_count else 0.0,
        'inverse_mem.count': n.inverse_count,
        'mem.rate': float(net) / fr / K if fr > 0 else 0.0,
        'mem.first': float(n.h_first) / K if n.opens else 0.0,
        'mem.last': float(n.h_last) / K if n.opens else 0.0,
        'mem_delta.rate': float(n.mem_sum) / fr / K if fr > 0 else 0.0,
        'mem_self.rate': float(n.self_sum) / fr / K if fr > 0 else 0.0,
        'mem_self.total': float(n.self_sum) / K,
    }
    return st

def payload(tree, labels, n):
    return {'label': labels[n.label], 'stats': stats(tree, n),
            'children': [payload(tree, labels, c) for c in n.children]}

def compare(a, b, path, bad):
    if a['label'] != b['label']:
        bad.append((path, 'label', a['label'], b['label'])); return
    p = path + '/' + a['label']
    if list(a['stats']) != list(b['stats']):
        bad.append((p, 'keys', list(a['stats']), list(b['stats'])))
    for k, v in a['stats'].items():
        if b['stats'].get(k) != v:
            bad.append((p, k, v, b['stats'].get(k)))
    if len(a['children']) != len(b['children']):
        bad.append((p, 'children', len(a['children']), len(b['children']))); return
    for x, y in zip(a['children'], b['children']):
        compare(x, y, p, bad)

if __name__ == '__main__':
    labels, threads = read_capture(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2] == '--events':
        for idx, th in sorted(threads.items()):
            print('thread', idx, th['name'])
            for ev in th['events']:
                print('  t=%d h=%d %s depth=%d' % (ev[0], ev[1], ('mark ' + labels[ev[2]]) if ev[2] else 'done', ev[3]))
        sys.exit(0)
    ours = {}
    for idx, th in sorted(threads.items()):
        tree, counts = ingest(th['events'], 0x6d61636836 + idx)
        ours[idx] = (payload(tree, labels, tree.root), counts)
    if len(sys.argv) > 2:
        theirs = json.load(open(sys.argv[2]))
        total = 0
        for th in theirs['threads']:
            bad = []
            compare(ours[th['index']][0], th['payload'], '', bad)
            nodes = 0
            stack = [th['payload']]
            while stack:
                x = stack.pop(); nodes += 1; stack.extend(x['children'])
            counts = ours[th['index']][1]
            for key in ('rejected', 'skipped'):
                if key in th and th[key] != counts[key]:
                    bad.append(('(thread)', key, counts[key], th[key]))
            print('thread %d: %d nodes, %d differences, %s' % (th['index'], nodes, len(bad), counts))
            for b in bad[:20]:
                print('  ', b)
            total += len(bad)
        sys.exit(1 if total else 0)
    for idx, (p, counts) in ours.items():
        print(json.dumps({'index': idx, 'counts': counts, 'payload': p}, indent=2))
