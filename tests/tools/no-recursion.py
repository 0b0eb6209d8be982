#!/usr/bin/env python3
# Fails when the C call graph of planscope has a cycle (direct or mutual
# recursion) that is not listed in ALLOWED: input files are hostile, and
# recursion that a file can drive deep overflows the stack.  Every source in
# the build's compile_commands.json under the checked folders is compiled
# again with GCC's -fcallgraph-info; calls through function pointers are not
# edges of that graph and are not checked.
#
# Usage: no-recursion.py BUILD_ROOT [FOLDER...]   (default folders: core
# render profiler app ui)

import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from graphs import cycles

# Cycles whose depth no input controls, as sorted tuples of function names.
ALLOWED = set()

NODE = re.compile(r'^node: \{ title: "([^"]+)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


def kept_flags(entry):
    """Only the flags that change what is parsed: includes, macros, standard."""
    args = entry.get('arguments') or shlex.split(entry['command'])
    out = []
    i = 1
    while i < len(args):
        a = args[i]
        if a in ('-I', '-D', '-U', '-isystem', '-include', '-idirafter'):
            out += [a, args[i + 1]]
            i += 2
            continue
        if a.startswith(('-I', '-D', '-U', '-std=', '-isystem')):
            out.append(a)
        i += 1
    return out


def compile_one(job):
    entry, index, tmp, gcc = job
    obj = os.path.join(tmp, '%d.o' % index)
    cmd = ([gcc] + kept_flags(entry)
           + ['-O0', '-w', '-fcallgraph-info', '-c', entry['file'], '-o', obj])
    proc = subprocess.run(cmd, cwd=entry['directory'], capture_output=True, text=True)
    if proc.returncode != 0:
        return entry['file'], None, proc.stderr
    return entry['file'], os.path.join(tmp, '%d.ci' % index), None


def main():
    if len(sys.argv) < 2:
        print('usage: no-recursion.py BUILD_ROOT [FOLDER...]', file=sys.stderr)
        return 2
    build = sys.argv[1]
    folders = sys.argv[2:] or ['core', 'render', 'profiler', 'app', 'ui']
    gcc = shutil.which('gcc')
    if gcc is None:
        print('no-recursion: gcc is missing: run build-aux/install-deps.sh', file=sys.stderr)
        return 1
    with open(os.path.join(build, 'compile_commands.json')) as f:
        entries = json.load(f)
    source_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    picked = []
    seen = set()
    for e in entries:
        path = os.path.normpath(os.path.join(e['directory'], e['file']))
        rel = os.path.relpath(path, source_root).split(os.sep)
        if not path.endswith('.c') or path in seen or rel[0] not in folders:
            continue
        seen.add(path)
        picked.append(e)
    if not picked:
        print('no-recursion: no sources found in %s' % build, file=sys.stderr)
        return 1

    graph = {}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = [(e, i, tmp, gcc) for i, e in enumerate(picked)]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            results = list(pool.map(compile_one, jobs))
        for src, ci, err in results:
            if ci is None:
                print('no-recursion: cannot compile %s:\n%s' % (src, err), file=sys.stderr)
                return 1
            with open(ci) as f:
                for line in f:
                    m = EDGE.match(line)
                    if m:
                        graph.setdefault(m.group(1), set()).add(m.group(2))
                        continue
                    m = NODE.match(line)
                    if m:
                        graph.setdefault(m.group(1), set())

    def short(name):
        return name.replace('../', '').split('/')[-1]

    bad = 0
    for comp in sorted(cycles(graph)):
        names = tuple(sorted(short(n) for n in comp))
        if names in ALLOWED:
            print('allowed cycle: %s' % ' -> '.join(names))
            continue
        print('recursion: %s' % ' -> '.join(names), file=sys.stderr)
        bad += 1
    print('no-recursion: %d sources, %d functions, %d unlisted cycles'
          % (len(picked), len(graph), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
