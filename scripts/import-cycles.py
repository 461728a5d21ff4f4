#!/usr/bin/env python3
"""Import cycles between ellery's top-level modules (issue 16).

An edge A -> B when a file of module A (src/A.rs or src/A/**) names
`crate::B` (in a `use`, a `crate::{B, ..}` group or a qualified path;
comments stripped). Test code (files named tests.rs, `#[cfg(test)] mod tests`
blocks at the end of a file) is left out unless --tests is given. Cycles
inside one folder are allowed, so only top-level modules are nodes. Prints
each strongly connected component of two or more modules with the files
that make its edges; exits 1 if there is one.

Usage: scripts/import-cycles.py [--tests] [SRC_DIR]
"""
import os
import re
import sys

args = [a for a in sys.argv[1:] if a != "--tests"]
tests = "--tests" in sys.argv
root = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "src")
mods = set()
for f in os.listdir(root):
    if f.endswith(".rs") and f not in ("lib.rs", "main.rs"):
        mods.add(f[:-3])
    elif os.path.isdir(os.path.join(root, f)):
        mods.add(f)
edges = {}
for dirpath, _, files in os.walk(root):
    for f in files:
        if not f.endswith(".rs"):
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, root)
        top = rel.split(os.sep)[0]
        top = top[:-3] if top.endswith(".rs") else top
        if top not in mods or (not tests and f == "tests.rs"):
            continue
        text = open(path, encoding="utf-8").read()
        if not tests:
            cut = text.find("#[cfg(test)]\nmod tests")
            if cut >= 0:
                text = text[:cut]
        text = re.sub(r"//[^\n]*", "", text)
        refs = set(re.findall(r"crate::([a-z_]+)", text))
        for group in re.findall(r"crate::\{([^}]*)\}", text):
            refs |= set(re.findall(r"(?:^|,)\s*([a-z_]+)", group))
        for r in refs - {top}:
            if r in mods:
                edges.setdefault(top, {}).setdefault(r, set()).add(rel)

# Tarjan's strongly connected components.
index, low, stack, on, comps = {}, {}, [], set(), []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in edges.get(v, {}):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        comps.append(comp)


for v in sorted(mods):
    if v not in index:
        visit(v)
cycles = [sorted(c) for c in comps if len(c) > 1]
for comp in cycles:
    print("cycle:", " ".join(comp))
    for a in comp:
        for b in comp:
            if b in edges.get(a, {}):
                print(f"  {a} -> {b}: {', '.join(sorted(edges[a][b]))}")
if not cycles:
    print("no import cycle between top-level modules")
sys.exit(1 if cycles else 0)
