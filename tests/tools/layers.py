#!/usr/bin/env python3
# Fails when planscope's files do not form layers: when two files use each
# other (directly or round a longer circle), or when a file reaches up to a
# layer above its own.  It looks twice:
#
#   includes  every #include "..." of every source and header, a header
#             counted as part of the .c file of the same name (ps-plan.h
#             with ps-plan.c), so that a circle through headers shows;
#   symbols   every function and variable an object file of the build uses
#             that another one defines (nm), which finds what includes
#             cannot: a call declared in a shared header.  (GObject
#             *_get_type functions, which every cast macro calls, count as
#             the header they stand for, not as a use.)
#
# LAYERS lists the folders from the bottom up.  A file may use files of its
# own folder and of the groups before its own; folders grouped together are
# siblings and may not use each other.  Headers in core/include belong to
# the folder of their .c file.  core/'s private headers (every header
# outside core/include) are out of reach of code outside core/, and a
# -private.h header elsewhere belongs to its own folder.
#
# Usage: layers.py BUILD_ROOT          (prints the layers it checked)

import json
import os
import re
import subprocess
import sys

from graphs import cycles

LAYERS = [
    ['core/util'],
    ['core/model'],
    ['core/import/json', 'core/import/dot', 'core/import/trace'],
    ['core/import'],
    ['core/analysis'],
    ['core/planner'],
    ['core/replay'],
    ['core/export'],
    ['core/gen'],
    ['render', 'profiler'],
    ['ui'],
    ['app'],
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sources():
    """Every .c and .h under the layered folders, relative to ROOT."""
    out = []
    for top in sorted({g.split('/')[0] for group in LAYERS for g in group}):
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(('.c', '.h')):
                    out.append(os.path.relpath(os.path.join(d, f), ROOT))
    return sorted(out)


def folder_of(path):
    """The layered folder a file lives in (the longest that holds it)."""
    best = None
    for group in LAYERS:
        for f in group:
            if path.startswith(f + '/') and (best is None or len(f) > len(best)):
                best = f
    return best


def rank():
    return {f: i for i, group in enumerate(LAYERS) for f in group}


def unit_of(path, all_files):
    """A header goes with the .c of its name: core/include/ps-plan.h and
    core/model/ps-plan-private.h are parts of core/model/ps-plan.c.
    Anything else is its own unit."""
    if not path.endswith('.h'):
        return path
    base = os.path.basename(path)[:-2]
    if base.endswith('-private'):
        base = base[:-len('-private')]
    base += '.c'
    here = os.path.join(os.path.dirname(path), base)
    if here in all_files:
        return here
    if path.startswith('core/include/'):
        matches = [f for f in all_files if f.startswith('core/') and os.path.basename(f) == base]
        if len(matches) == 1:
            return matches[0]
    return path


def resolve(inc, including, all_files, search):
    """The file an #include "inc" of `including` reads, as the compiler
    finds it: the including file's folder first, then the include paths."""
    for d in [os.path.dirname(including)] + search:
        p = os.path.normpath(os.path.join(d, inc))
        if p in all_files:
            return p
    return None


def search_path(path):
    """The include folders the build gives a file: core/ sees core/include
    and core/; everything else core/include and its own dependencies'
    folders (meson's include_directories)."""
    if path.startswith('core/'):
        return ['core/include', 'core']
    top = path.split('/')[0]
    extra = {'render': [], 'profiler': [], 'ui': ['render', 'profiler'],
             'app': ['render', 'profiler', 'ui']}.get(top, [])
    return ['core/include'] + extra


def check(edges, label, order, problems):
    """edges: {unit: {unit: why}}.  Circles, then layer order."""
    graph = {u: set(v) for u, v in edges.items()}
    for comp in cycles(graph):
        problems.append('%s: a circle: %s' % (label, ' <-> '.join(comp)))
    for u, targets in sorted(edges.items()):
        fu = folder_of(u)
        for v, why in sorted(targets.items()):
            fv = folder_of(v)
            if fu is None or fv is None or fu == fv:
                continue
            if order[fv] >= order[fu]:
                problems.append('%s: %s (%s) uses %s (%s), which is %s: %s'
                                % (label, u, fu, v, fv,
                                   'a sibling folder' if order[fv] == order[fu]
                                   else 'a layer above it', why))


def include_edges(files):
    edges = {}
    problems = []
    for f in files:
        with open(os.path.join(ROOT, f), encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            target = resolve(inc, f, files, search_path(f))
            if target is None:
                continue  # generated (ps-resources.h) or outside the tree
            if (target.startswith('core/') and not target.startswith('core/include/')
                    and not f.startswith('core/')):
                problems.append('includes: %s includes %s, a private header of core/'
                                % (f, target))
            elif (target.endswith('-private.h') and not target.startswith('core/')
                    and os.path.dirname(target) != os.path.dirname(f)):
                problems.append('includes: %s includes %s, a private header of another folder'
                                % (f, target))
            u, v = unit_of(f, files), unit_of(target, files)
            if u != v:
                edges.setdefault(u, {})[v] = '#include "%s" in %s' % (inc, f)
    return edges, problems


def symbol_edges(build, files):
    with open(os.path.join(build, 'compile_commands.json')) as fh:
        entries = json.load(fh)
    objects = {}
    for e in entries:
        src = os.path.relpath(os.path.normpath(os.path.join(e['directory'], e['file'])), ROOT)
        out = e.get('output')
        if out is None:
            m = re.search(r'-o\s+(\S+)', e.get('command', ''))
            out = m.group(1) if m else None
        if src in files and out:
            objects[src] = os.path.join(e['directory'], out)
    defined, used = {}, {}
    for src, obj in sorted(objects.items()):
        if not os.path.exists(obj):
            return None, 'symbols: %s is not built; build first' % obj
        lines = subprocess.run(['nm', '--defined-only', '-g', obj], capture_output=True,
                               text=True, check=True).stdout.splitlines()
        for line in lines:
            parts = line.split()
            if len(parts) == 3:
                defined.setdefault(parts[2], src)
        lines = subprocess.run(['nm', '-u', obj], capture_output=True, text=True,
                               check=True).stdout.splitlines()
        used[src] = {line.split()[-1] for line in lines if line.strip()}
    edges = {}
    for src, names in used.items():
        for name in sorted(names):
            # A GObject type's get_type function is what the cast macros of
            # G_DECLARE_FINAL_TYPE call: it says which struct a pointer is,
            # as a header does, and is no use of the type's code.
            if name.endswith('_get_type'):
                continue
            d = defined.get(name)
            if d is not None and d != src:
                edges.setdefault(src, {}).setdefault(d, name)
    return edges, None


def main():
    if len(sys.argv) != 2:
        print('usage: layers.py BUILD_ROOT', file=sys.stderr)
        return 2
    files = sources()
    order = rank()
    problems = []
    inc, inc_problems = include_edges(set(files))
    problems += inc_problems
    check(inc, 'includes', order, problems)
    sym, err = symbol_edges(sys.argv[1], set(files))
    if err:
        print('layers: ' + err, file=sys.stderr)
        return 1
    check(sym, 'symbols', order, problems)
    for group in LAYERS:
        print('layer: ' + ', '.join(group))
    for p in problems:
        print('layers: ' + p, file=sys.stderr)
    print('layers: %d files, %d include edges, %d symbol edges, %d problems'
          % (len(files), sum(len(v) for v in inc.values()), sum(len(v) for v in sym.values()),
             len(problems)))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
