#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""weave.py: the series as a weave, to reorder patches and fold rewrites.

Every line that any patch of the development tree ever added is kept once,
in file order, with the patch that adds it and the patch that removes it
(SCCS's weave). A state of the tree is the lines whose "add" comes at or
before it and whose "remove" comes after it, so a plan can renumber the
patches, give a line to another patch (a fold: the final form of a line
written where its first form was), or drop a line's earlier forms, and
emit the series again as commits; a line that no patch removes is in the
final tree, so a plan that only moves lines leaves the final tree as it is.

  weave.py build DEVTREE BASE HEAD OUT.pickle
  weave.py rewrites W.pickle             each hunk that rewrites a line a
                                         series patch added
  weave.py emit W.pickle PLAN.py DEVTREE BRANCH
      PLAN.py (Python) sets order (new position -> old patch number; other
      hashable keys with new_meta = {key: message} add patches), optional
      messages = {old: message}, and fold(W), which edits the entries
      (e.add, e.dele, e.text) before the commits are written.
"""
import os, pickle, re, subprocess, sys

INF = 10**9

# Entries pickled by the script load in plans and other tools that import
# this file as the module "weave".
if __name__ == '__main__':
    sys.modules.setdefault('weave', sys.modules['__main__'])


def git(tree, *args, inp=None):
    return subprocess.run(['git', '-C', tree] + list(args), input=inp,
                          capture_output=True, check=True).stdout


class Entry:
    __slots__ = ('text', 'add', 'dele')

    def __init__(self, text, add, dele=INF):
        self.text, self.add, self.dele = text, add, dele


Entry.__module__ = 'weave'


def build(tree, base, head):
    commits = git(tree, 'rev-list', '--reverse', f'{base}..{head}').decode().split()
    files = {}      # path -> list of Entry
    created = {}    # path -> patch index that creates it (0 = base)
    meta = []
    for p, c in enumerate(commits, 1):
        meta.append(git(tree, 'log', '-1', '--format=%an%x00%ae%x00%ad%x00%B', c).decode())
        diff = git(tree, 'diff', '-U0', '--no-renames', '--minimal', f'{c}^', c).decode('utf-8', 'surrogateescape')
        cur = None
        hunks = {}
        for line in diff.split('\n'):
            if line.startswith('diff --git '):
                cur = None
            elif line.startswith('--- '):
                old = line[4:]
            elif line.startswith('+++ '):
                new = line[4:]
                path = (new if new != '/dev/null' else old)[2:]
                cur = path
                hunks[path] = []
                if old == '/dev/null':
                    created[path] = p
                    files[path] = []
                elif path not in files:
                    txt = git(tree, 'show', f'{c}^:{path}').decode('utf-8', 'surrogateescape')
                    lines = txt.split('\n')
                    assert lines[-1] == '', path
                    files[path] = [Entry(t, 0) for t in lines[:-1]]
                    created[path] = 0
                if new == '/dev/null':
                    raise SystemExit(f'{c} deletes {path}')
            elif line.startswith('@@ '):
                m = re.match(r'@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@', line)
                s, n = int(m.group(1)), int(m.group(2) or 1)
                hunks[cur].append([s, n, []])
            elif line.startswith('+') and cur is not None and hunks[cur]:
                hunks[cur][-1][2].append(line[1:])
            elif line.startswith('\\'):
                raise SystemExit(f'{c}: no newline at end of file')
        for path, hs in hunks.items():
            w = files[path]
            vis = [i for i, e in enumerate(w) if e.add < p and e.dele == INF]
            # apply from the bottom up so that weave indices stay valid
            for s, n, added in reversed(hs):
                if n > 0:
                    idx = vis[s - 1:s - 1 + n]
                    for i in idx:
                        w[i].dele = p
                    at = idx[-1] + 1
                else:
                    at = vis[s - 1] + 1 if s > 0 else 0
                w[at:at] = [Entry(t, p) for t in added]
    return {'commits': commits, 'files': files, 'created': created, 'meta': meta,
            'base': git(tree, 'rev-parse', base).decode().strip(), 'head': git(tree, 'rev-parse', head).decode().strip()}


def rewrites(W):
    """Each hunk of patch m that deletes lines a series patch added."""
    out = []
    n = len(W['commits'])
    for path, w in W['files'].items():
        for m in range(1, n + 1):
            run = []
            def flush():
                dels = [e for e in run if e.dele == m]
                if any(e.add > 0 for e in dels):
                    out.append((path, m, dels, [e for e in run if e.add == m]))
            for e in w:
                before = e.add < m and e.dele >= m
                after = e.add <= m and e.dele > m
                if before and after:
                    flush()
                    run = []
                elif before or after:
                    run.append(e)
            flush()
    return out


def state(W, order_pos, k, path):
    """Lines of PATH after new patch k; order_pos maps old index -> new index."""
    w = W['files'][path]
    res = []
    for e in w:
        # a line never added (INF) or added later has no removal to look up
        if order_pos(e.add) > k:
            continue
        if e.dele == INF or k < order_pos(e.dele):
            res.append(e.text)
    return res


def emit(W, plan, tree, branch, index):
    """Write the series of PLAN as commits of TREE on BRANCH, staging in INDEX."""
    order = plan['order']                       # new position -> old index
    pos = {old: new for new, old in enumerate(order, 1)}
    newmeta = plan.get('new_meta', {})
    pos[0] = 0
    def op(x):
        return INF if x == INF else pos[x]
    base = W['base']
    modes = {}
    for l in git(tree, 'ls-tree', '-r', W['head']).decode().splitlines():
        meta, path = l.split('\t', 1)
        modes[path] = meta.split()[0]
    env = dict(os.environ, GIT_INDEX_FILE=index)
    def g(*args, inp=None, extra_env=None):
        e = dict(env, **(extra_env or {}))
        return subprocess.run(['git', '-C', tree] + list(args), input=inp, env=e,
                              capture_output=True, check=True).stdout
    g('read-tree', base)
    parent = git(tree, 'rev-parse', base).decode().strip()
    prev = {}
    msgs = plan.get('messages', {})
    for k, old in enumerate(order, 1):
        for path in W['files']:
            cpos = op(W['created'][path])
            if cpos > k:
                if path in prev:
                    g('update-index', '--force-remove', path)
                    del prev[path]
                continue
            lines = state(W, op, k, path)
            txt = ''.join(t + '\n' for t in lines)
            if prev.get(path) == txt:
                continue
            prev[path] = txt
            sha = g('hash-object', '-w', '--stdin', inp=txt.encode('utf-8', 'surrogateescape')).decode().strip()
            g('update-index', '--add', '--cacheinfo', f'{modes.get(path, "100644")},{sha},{path}')
        t = g('write-tree').decode().strip()
        if old in newmeta:
            an, ae, ad, body = W['meta'][int(old) - 1].split('\0', 3)
            body = newmeta[old]
        else:
            an, ae, ad, body = W['meta'][old - 1].split('\0', 3)
            body = msgs.get(old, body)
        parent = g('commit-tree', t, '-p', parent, inp=body.encode(),
                   extra_env={'GIT_AUTHOR_NAME': an, 'GIT_AUTHOR_EMAIL': ae, 'GIT_AUTHOR_DATE': ad,
                              'GIT_COMMITTER_NAME': an, 'GIT_COMMITTER_EMAIL': ae,
                              'GIT_COMMITTER_DATE': ad}).decode().strip()
    git(tree, 'update-ref', f'refs/heads/{branch}', parent)
    return parent


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'build':
        W = build(*sys.argv[2:5])
        pickle.dump(W, open(sys.argv[5], 'wb'))
    elif cmd == 'rewrites':
        W = pickle.load(open(sys.argv[2], 'rb'))
        tot = 0
        for path, m, dels, adds in rewrites(W):
            sd = [e for e in dels if e.add > 0]
            if not sd:
                continue
            tot += len(sd)
            print(f'== {m:02d} {path}: -{len(sd)} (from {sorted(set(e.add for e in sd))}) +{len(adds)}')
            for e in dels:
                print(f'  -{e.add:02d} {e.text}')
            for e in adds:
                print(f'  +   {e.text}')
        print('total', tot)
    elif cmd == 'emit':
        W = pickle.load(open(sys.argv[2], 'rb'))
        plan = {'W': W, 'INF': INF}
        exec(open(sys.argv[3]).read(), plan)
        if 'fold' in plan:
            plan['fold'](W)
        index = os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), 'weave-index')
        print(emit(W, plan, sys.argv[4], sys.argv[5], index))

