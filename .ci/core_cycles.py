"""load-core's modules import each other without a cycle.

Reads `core/src`: for each top-level module (a file or a directory under it), the modules
its code names through `crate::` (directly, or through a name the crate root re-exports
from a module); doc comments and `#[cfg(test)] mod tests` are left out, since neither is an
import. Prints each cycle (a strongly connected set of modules) and exits 1 if there is one.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "core", "src")


def code_of(path):
    text = open(path, encoding="utf-8").read()
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))


def modules():
    refs = {}
    for directory, _, files in os.walk(ROOT):
        for name in files:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, ROOT)
            if not name.endswith(".rs") or relative == "lib.rs" or name.endswith("tests.rs"):
                continue
            top = relative.split(os.sep)[0].removesuffix(".rs")
            text = code_of(path)
            named = refs.setdefault(top, set())
            named.update(re.findall(r"crate::(\w+)", text))
            for group in re.findall(r"crate::\{([^}]*)\}", text, re.S):
                named.update(re.findall(r"\w+", group))
    return refs


def reexports():
    lib = open(os.path.join(ROOT, "lib.rs"), encoding="utf-8").read()
    owner = {}
    for module, names in re.findall(r"pub use (\w+)::\{([^}]*)\}", lib, re.S):
        for name in re.findall(r"\w+", names):
            owner[name] = module
    for module, name in re.findall(r"pub use (\w+)::(\w+);", lib):
        owner[name] = module
    return owner


def cycles(graph):
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def main():
    refs = modules()
    owner = reexports()
    graph = {
        module: {
            target
            for name in names
            for target in [name if name in refs else owner.get(name)]
            if target and target != module
        }
        for module, names in refs.items()
    }
    found = cycles(graph)
    for component in found:
        edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
        print(f"load-core: a module cycle: {', '.join(edges)}")
    if found:
        sys.exit(1)
    print(f"load-core: {len(graph)} modules, no import cycle")


if __name__ == "__main__":
    main()
