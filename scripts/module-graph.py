#!/usr/bin/env python3
"""The module graph of every crate in the workspace, read from its `use`
lines and `crate::`/`super::` paths, and the cycles in it.

    scripts/module-graph.py            # every crate: edges, then cycles
    scripts/module-graph.py --check    # exit 1 if any crate has a cycle
    scripts/module-graph.py --dot      # Graphviz, one cluster per crate

A node is a source file (a module); an edge A -> B means A names something
defined in B (a `use`, a re-export, or a path in the code). Test code is left
out: `tests.rs` modules and everything after a `#[cfg(test)]` line, which by
the workspace's convention closes a file. `mod` declarations are not edges.
It reads text, not the compiler's view, so a path built by a macro can be
missed; the check is for the layering a reader sees.
"""

import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

PATH_RE = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_RE = re.compile(r"\buse\s+(crate|super|self)::([^;]*);", re.S)


def modules_of(src):
    """Maps a module path (tuple of names) to its file, for one crate."""
    mods = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel[-1] in ("lib", "main") and len(rel) == 1:
                path = ()
            elif rel[-1] == "mod":
                path = tuple(rel[:-1])
            else:
                path = tuple(rel)
            if rel[0] == "bin":
                continue
            mods[path] = full
    return mods


def code_of(path):
    """The file's code without comments, literals and test code."""
    text = open(path, encoding="utf-8").read()
    cut = text.find("#[cfg(test)]")
    if cut >= 0:
        text = text[:cut]
    return strip(text)


def strip(text):
    """Blanks comments, string and char literals (a small Rust lexer)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif re.match(r'b?r#*"', text[i:i + 40]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'b?r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + m.end())
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(?:\\.|\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|[^'\\\n])'", text[i:])
            if m:
                i += m.end()
                out.append("' '")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e] (as name lists)."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, s):
        depth = 0
        parts, cur = [], ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for p in parts:
            if "{" in p:
                head, rest = p.split("{", 1)
                walk(prefix + [x for x in head.split("::") if x], rest[:-1])
            else:
                names = [x.split(" as ")[0] for x in p.split("::") if x]
                out.append(prefix + names)

    walk([], tree)
    return out


def resolve(mods, here, anchor, names):
    """The deepest module that `anchor::names` points into, or None."""
    if anchor == "crate":
        base = ()
    elif anchor == "self":
        base = here
    else:  # super, possibly repeated
        base = here[:-1]
        while names and names[0] == "super":
            base = base[:-1]
            names = names[1:]
    full = base + tuple(n for n in names if n not in ("self", "*"))
    for k in range(len(full), -1, -1):
        if full[:k] in mods:
            return full[:k]
    return None


def graph(crate_dir):
    src = os.path.join(crate_dir, "src")
    mods = modules_of(src)
    edges = {m: set() for m in mods}
    for here, path in mods.items():
        if here and here[-1] == "tests":
            continue
        code = code_of(path)
        refs = []
        for m in USE_RE.finditer(code):
            for names in expand_use(m.group(2)):
                refs.append((m.group(1), names))
        for m in PATH_RE.finditer(USE_RE.sub("", code)):
            refs.append((m.group(1), [x for x in m.group(2).split("::") if x]))
        for anchor, names in refs:
            target = resolve(mods, here, anchor, list(names))
            if target is not None and target != here and not (target and target[-1] == "tests"):
                edges[here].add(target)
    return mods, edges


def cycles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def name(crate, m):
    return crate + ("::" + "::".join(m) if m else "")


def main():
    args = sys.argv[1:]
    crates_dir = os.path.join(ROOT, "crates")
    found = []
    if "--dot" in args:
        print("digraph modules {\n  rankdir=LR; node [shape=box, fontsize=10];")
    for crate in sorted(os.listdir(crates_dir)):
        d = os.path.join(crates_dir, crate)
        if not os.path.isdir(os.path.join(d, "src")):
            continue
        mods, edges = graph(d)
        cyc = cycles(edges)
        found += [(crate, c) for c in cyc]
        if "--dot" in args:
            print(f'  subgraph "cluster_{crate}" {{ label="{crate}";')
            for m in sorted(mods):
                print(f'    "{name(crate, m)}";')
            for m in sorted(edges):
                for t in sorted(edges[m]):
                    print(f'    "{name(crate, m)}" -> "{name(crate, t)}";')
            print("  }")
        elif "--check" not in args:
            print(f"## {crate}")
            for m in sorted(edges):
                targets = ", ".join(name(crate, t) for t in sorted(edges[m]))
                print(f"{name(crate, m)} -> {targets or '(nothing)'}")
            print()
    if "--dot" in args:
        print("}")
        return 0
    if found:
        print("cycles:")
        for crate, comp in found:
            print("  " + " <-> ".join(name(crate, m) for m in comp))
        return 1 if "--check" in args else 0
    print("no module cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
