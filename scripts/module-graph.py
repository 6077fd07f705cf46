#!/usr/bin/env python3
"""The module graph of every crate in the workspace, read from its `use`
lines and paths, and the cycles in it.

    scripts/module-graph.py            # every crate: edges, then cycles
    scripts/module-graph.py --check    # exit 1 if any crate has a cycle
    scripts/module-graph.py --dot      # Graphviz, one cluster per crate
    scripts/module-graph.py --self-test  # the fixtures in module-graph-fixtures/
    scripts/module-graph.py --root DIR # DIR/crates instead of this workspace

A node is a source file (a module); an edge A -> B means A names something
defined in B (a `use`, a re-export, or a path in the code). A path counts
when it starts with `crate::`, `self::`, `super::`, a child module the file
declares (`mod queues;` then `queues::RunQueues`), or a name a `use` binds
to a module; re-exports are followed to where the item lives (`Crate`).
Test code is left out: `tests.rs` modules and everything after a
`#[cfg(test)]` line, which by the workspace's convention closes a file.
`mod` declarations are not edges.

A cycle is a set of modules that reach one another. One that stays inside
a single module and the files it is split into (a parent calling
`worker::run` and `worker` using `super::Shared`) is listed but not
counted: it is one module's own business, not layering (a loop through
the crate root always counts). It reads text, not the compiler's view, so
a path built by a macro can be missed; the check is for the layering a
reader sees.
"""

import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# A path: a first segment not itself after `::` or inside a name, then
# `::name` segments. Which first segments count is decided per file (below).
PATH_RE = re.compile(r"(?<![A-Za-z0-9_:])([A-Za-z_][A-Za-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_RE = re.compile(r"\buse\s+([^;]*);", re.S)
# `mod NAME;` (any visibility, attributes before it): a child module in its
# own file. An inline `mod NAME { ... }` is part of this file's node.
MOD_RE = re.compile(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;")
INLINE_MOD_RE = re.compile(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")
# A `#[macro_export]` macro is named at the crate root, wherever defined.
MACRO_RE = re.compile(r"#\[macro_export\]\s*macro_rules!\s*([A-Za-z_][A-Za-z0-9_]*)")

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
    """`a::{b, c::{d as e}}` -> [([a, b], None), ([a, c, d], "e")]: each
    leaf's segments and its alias (`as` name), if any."""
    tree = re.sub(r"\s+as\s+", "@", tree.strip())
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
                p, _, alias = p.partition("@")
                out.append((prefix + [x for x in p.split("::") if x], alias or None))

    walk([], tree)
    return out


def inline_modules(code):
    """(start, end, name) of each inline `mod NAME { ... }` body."""
    out = []
    for m in INLINE_MOD_RE.finditer(code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        out.append((m.end(), i, m.group(1)))
    return out


class Crate:
    """One crate's modules, and what each file's names point to.

    A path is resolved from its first segment: `crate`, `self`, `super`
    (repeated), a child module the file declares with `mod NAME;`, or a
    name the file's `use` lines bind to a module (`use crate::sched;` then
    `sched::queues::X`). The rest of the path walks down the module tree;
    where it leaves the tree at a name some module brings in with `use`
    (a re-export such as `pub use config::Config;` in `lib.rs`), it follows
    that `use`, so `crate::Config` points into `config`, not the root. A
    `#[macro_export]` macro is found where it is defined. Inside an inline
    `mod NAME { ... }`, `self` and `super` count from that inline module.
    """

    def __init__(self, src):
        self.mods = modules_of(src)
        self.children = {}
        self.uses = {}
        self.paths = {}
        self.macros = {}
        for m, path in self.mods.items():
            code = code_of(path)
            inline = inline_modules(code)

            def scope(pos, m=m, inline=inline):
                return m + tuple(n for a, b, n in inline if a <= pos < b)

            self.children[m] = {
                n: m + (n,) for n in MOD_RE.findall(code) if m + (n,) in self.mods
            }
            self.uses[m] = [
                (scope(u.start()), names, alias)
                for u in USE_RE.finditer(code)
                for names, alias in expand_use(u.group(1))
            ]
            blanked = USE_RE.sub(lambda u: " " * len(u.group(0)), code)
            self.paths[m] = [
                (scope(p.start()), [p.group(1)] + [x for x in p.group(2).split("::") if x])
                for p in PATH_RE.finditer(blanked)
            ]
            for name in MACRO_RE.findall(code):
                self.macros.setdefault(name, (m, False))
        self._bindings = {}

    def bindings(self, m):
        """Name -> (module, is the module itself) for each name that `m`'s
        `use` lines bring in. Computed on first use; a module asked for while
        its own bindings are being computed sees the ones found so far."""
        if m in self._bindings:
            return self._bindings[m]
        found = dict(self.macros) if m == () else {}
        self._bindings[m] = found
        for scope, names, alias in self.uses[m]:
            if scope != m or names[-1] == "*":
                continue
            bound = alias or (names[-2] if names[-1] == "self" and len(names) > 1 else names[-1])
            target = self.resolve(scope, names)
            if target is not None:
                found[bound] = target
        return found

    def anchor(self, scope, names):
        """Where the path `names` written in `scope` (a module, or an inline
        module within it) starts, and the rest of it; None for a path that
        does not start in this crate (`std::`, another crate, a type's
        associated item)."""
        first, rest = names[0], names[1:]
        if first == "crate":
            return (), rest
        if first == "self":
            return scope, rest
        if first == "super":
            base = scope[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            return base, rest
        here = self.file_of(scope)
        if first in self.children[here]:
            return self.children[here][first], rest
        bound = self.bindings(here).get(first)
        if bound is not None and bound[1]:
            return bound[0], rest
        return None

    def file_of(self, scope):
        """The module (file) that `scope` is, or is an inline module in."""
        while scope not in self.mods:
            scope = scope[:-1]
        return scope

    def resolve(self, scope, names):
        """(module, exact): the deepest module the path `names` written in
        `scope` points into, and whether it names that module itself; None
        when the path does not start in this crate."""
        start = self.anchor(scope, names)
        if start is None:
            return None
        base, rest = start
        full = base + tuple(n for n in rest if n not in ("self", "*"))
        for _ in range(16):  # re-exports of re-exports; a loop gives up
            k = len(full)
            while full[:k] not in self.mods:
                k -= 1
            if k == len(full):
                return full, True
            bound = self.bindings(full[:k]).get(full[k])
            if bound is None:
                break
            if not bound[1]:
                return bound[0], False
            full = bound[0] + full[k + 1:]
        return self.file_of(full), False

    def refs(self, here):
        """Every path in module `here` (its `use` lines and its code), as
        (scope, segments)."""
        return [(scope, names) for scope, names, _ in self.uses[here]] + self.paths[here]


def graph(crate_dir):
    crate = Crate(os.path.join(crate_dir, "src"))
    edges = {m: set() for m in crate.mods}
    for here in crate.mods:
        if here and here[-1] == "tests":
            continue
        for scope, names in crate.refs(here):
            found = crate.resolve(scope, names)
            if found is None:
                continue
            target = found[0]
            if target != here and not (target and target[-1] == "tests"):
                edges[here].add(target)
    return crate.mods, edges


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


def within_one_module(comp):
    """The member of a cycle that every other member lies under, if there
    is one other than the crate root: a module and the files it is split
    into (`mod worker;` calling `super::Shared`, `worker::run` called
    back). Such a loop stays inside one module's own files, so it is not a
    layering cycle; one that leaves the subtree is."""
    for top in comp:
        if top and all(m[:len(top)] == top for m in comp):
            return top
    return None


def name(crate, m):
    return crate + ("::" + "::".join(m) if m else "")


def main(args):
    crates_dir = os.path.join(ROOT, "crates")
    if "--root" in args:
        i = args.index("--root")
        crates_dir = os.path.join(args[i + 1], "crates")
        del args[i:i + 2]
    if "--self-test" in args:
        return self_test()
    found, inner = [], []
    if "--dot" in args:
        print("digraph modules {\n  rankdir=LR; node [shape=box, fontsize=10];")
    for crate in sorted(os.listdir(crates_dir)):
        d = os.path.join(crates_dir, crate)
        if not os.path.isdir(os.path.join(d, "src")):
            continue
        mods, edges = graph(d)
        for comp in cycles(edges):
            (inner if within_one_module(comp) is not None else found).append((crate, comp))
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
    if inner and "--check" not in args:
        print("loops inside one module's own files (not counted):")
        for crate, comp in inner:
            print("  " + " <-> ".join(name(crate, m) for m in comp))
    if found:
        print("cycles:")
        for crate, comp in found:
            print("  " + " <-> ".join(name(crate, m) for m in comp))
        return 1 if "--check" in args else 0
    print("no module cycles")
    return 0


FIXTURES = os.path.join(ROOT, "scripts", "module-graph-fixtures")


def self_test():
    """Runs `--check` on the fixture workspaces in FIXTURES and compares
    what it prints and its exit status with what each must give."""
    expected = {
        # controller -> sched (crate::), sched -> sched::queues (a child
        # path, `queues::RunQueues`), sched::queues -> controller (crate::):
        # the loop the runtime had, which crate::/super::/self:: alone miss.
        "child-path-cycle": (1, "cycles:\n  demo::controller <-> demo::sched <-> demo::sched::queues\n"),
        # The same modules with the dependency turned around, plus what
        # must not read as a cycle: a re-export at the root used through
        # `crate::`, a `#[macro_export]` macro, `super::` inside an inline
        # module, a child calling back into its parent, a path in a comment.
        "acyclic": (0, "no module cycles\n"),
        # A loop through the crate root is counted: the root lies above
        # every module, so "inside one module's files" cannot excuse it.
        "root-cycle": (1, "cycles:\n  demo <-> demo::worker\n"),
    }
    failed = 0
    for fixture, (rc, out) in sorted(expected.items()):
        run = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--check", "--root", os.path.join(FIXTURES, fixture)],
            capture_output=True,
            text=True,
        )
        if (run.returncode, run.stdout) != (rc, out):
            failed += 1
            print(f"module-graph self-test {fixture}: expected exit {rc} and\n{out}got exit {run.returncode} and\n{run.stdout}{run.stderr}")
    if not failed:
        print(f"module-graph self-test: {len(expected)} fixtures pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
