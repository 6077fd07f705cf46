#!/usr/bin/env python3
"""Converts the topologies CONTRACT's simulator reads (issue 26) from the
`topohub` package on PyPI (MIT licence; its data: the Internet Topology Zoo,
SNDlib and synthetic backbones) into crates/contract/topologies/NAME.json:

    {"name", "source", "licence", "nodes": [names], "links": [{"a", "b", "km"}]}

Run once; the outputs are committed. `pip install topohub==1.5.1` first (this
script does it into a private virtual environment when topohub is missing).
Duplicate links are merged; self-loops dropped; nodes keep topohub's order.
"""

import json
import os
import subprocess
import sys
import tempfile

TOPOLOGIES = {
    # The main results: about 80 nodes, the thesis used Rocketfuel's 79
    # (147 links). Uninett's is a tree-like research network (74 nodes,
    # 101 links), ta2 a meshed one (65 nodes, 108 links).
    "uninett2010": "topozoo/Uninett2010",
    "ta2": "sndlib/ta2",
    # The overhead study: the thesis used 161 and 315 nodes.
    "brain": "sndlib/brain",
    "north-america": "backbone/north_america_nosc",
    "south-america": "backbone/south_america",
}

SOURCES = {
    "topozoo": ("The Internet Topology Zoo (topology-zoo.org), S. Knight et al., IEEE JSAC 29(9), 2011", "Topology Zoo data: CC BY-SA 3.0"),
    "sndlib": ("SNDlib (sndlib.put.poznan.pl), S. Orlowski et al., Networks 55(3), 2010", "SNDlib data: free for research, cite the SNDlib paper"),
    "backbone": ("topohub's synthetic backbone topologies (P. Jurkiewicz)", "MIT"),
}

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "contract", "topologies")


def topohub_data():
    try:
        import topohub  # noqa: F401
    except ImportError:
        venv = os.path.join(tempfile.gettempdir(), "baton-topohub-venv")
        if not os.path.exists(venv):
            subprocess.check_call([sys.executable, "-m", "venv", venv])
            subprocess.check_call([os.path.join(venv, "bin", "pip"), "install", "-q", "topohub==1.5.1"])
        os.execv(os.path.join(venv, "bin", "python3"), [os.path.join(venv, "bin", "python3")] + sys.argv)
    import topohub
    return os.path.join(os.path.dirname(topohub.__file__), "data")


def main():
    data = topohub_data()
    os.makedirs(OUT, exist_ok=True)
    for name, path in TOPOLOGIES.items():
        with open(os.path.join(data, path + ".json")) as f:
            g = json.load(f)
        ids = [str(n["id"]) for n in g["nodes"]]
        index = {i: k for k, i in enumerate(ids)}
        names = [str(n.get("name", n["id"])) for n in g["nodes"]]
        seen = set()
        links = []
        for e in g.get("edges", g.get("links", [])):
            a, b = index[str(e["source"])], index[str(e["target"])]
            if a == b or (min(a, b), max(a, b)) in seen:
                continue
            seen.add((min(a, b), max(a, b)))
            links.append({"a": a, "b": b, "km": round(float(e.get("dist", 0.0)), 2)})
        source, licence = SOURCES[path.split("/")[0]]
        out = {
            "name": name,
            "source": f"topohub 1.5.1, {path}: {source}",
            "licence": licence,
            "nodes": names,
            "links": links,
        }
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(out, f, indent=0, ensure_ascii=False)
            f.write("\n")
        print(f"{name}: {len(names)} nodes, {len(links)} links")


if __name__ == "__main__":
    main()
