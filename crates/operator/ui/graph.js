// The topology graph: switches, the links discovery found between them,
// and the hosts where the network saw them, drawn with cytoscape.js and
// brought up to date from each live snapshot (elements added, removed or
// restyled in place; the layout runs again only when nodes come or go).

import cytoscape from "./vendor/cytoscape.esm.min.mjs";

/** A datapath id without its leading zero bytes: 00:00:...:00:01 -> 00:01. */
export function shortDpid(dpid) {
  let s = dpid;
  while (s.startsWith("00:") && s.length > 5) s = s.slice(3);
  return s;
}

const STYLE = [
  {
    selector: "node.switch",
    style: {
      shape: "round-rectangle",
      width: 54,
      height: 30,
      "background-color": "#2f6fdf",
      label: "data(label)",
      color: "#fff",
      "font-size": 11,
      "text-valign": "center",
      "text-halign": "center",
    },
  },
  {
    selector: "node.switch.detached",
    style: { "background-color": "#9aa3b5" },
  },
  {
    selector: "node.host",
    style: {
      shape: "ellipse",
      width: 16,
      height: 16,
      "background-color": "#1f9d6b",
      label: "data(label)",
      color: "#1d2330",
      "font-size": 10,
      "text-valign": "bottom",
      "text-margin-y": 3,
    },
  },
  {
    selector: "edge",
    style: {
      width: 2.5,
      "line-color": "#59627a",
      "curve-style": "bezier",
      label: "data(label)",
      "font-size": 9,
      color: "#6b7383",
      "text-rotation": "autorotate",
      "text-background-color": "#fff",
      "text-background-opacity": 1,
      "text-background-padding": 1,
    },
  },
  { selector: "edge.oneway", style: { "line-style": "dashed", "line-color": "#c77700" } },
  { selector: "edge.attachment", style: { width: 1.2, "line-color": "#9fd8c0", label: "" } },
];

/** What the graph should show, as cytoscape elements keyed by id. */
export function elementsOf(live) {
  const want = new Map();
  const connected = new Set(live.switches.map((s) => s.dpid));
  const switches = new Set([...connected, ...live.topology.switches]);
  for (const dpid of switches) {
    want.set(`s:${dpid}`, {
      group: "nodes",
      data: { id: `s:${dpid}`, label: shortDpid(dpid), dpid },
      classes: connected.has(dpid) ? "switch" : "switch detached",
    });
  }
  // Links come in both directions; one edge per cable, dashed while only
  // one direction is known.
  const directions = new Map();
  for (const l of live.topology.links) {
    const a = `${l.src.dpid}/${l.src.port}`;
    const b = `${l.dst.dpid}/${l.dst.port}`;
    const key = a < b ? `${a}|${b}` : `${b}|${a}`;
    const seen = directions.get(key) || { count: 0, link: l };
    seen.count += 1;
    directions.set(key, seen);
  }
  for (const [key, { count, link }] of directions) {
    const [a, b] = key.split("|");
    const [da, pa] = a.split("/");
    const [db, pb] = b.split("/");
    if (!switches.has(da) || !switches.has(db)) continue;
    want.set(`l:${key}`, {
      group: "edges",
      data: { id: `l:${key}`, source: `s:${da}`, target: `s:${db}`, label: `${pa}–${pb}`, link },
      classes: count >= 2 ? "link" : "link oneway",
    });
  }
  for (const h of live.hosts.hosts) {
    const at = h.attachment.dpid;
    if (!switches.has(at)) continue;
    want.set(`h:${h.mac}`, {
      group: "nodes",
      data: { id: `h:${h.mac}`, label: h.ipv4[0] || h.mac, mac: h.mac },
      classes: "host",
    });
    want.set(`a:${h.mac}`, {
      group: "edges",
      data: { id: `a:${h.mac}`, source: `h:${h.mac}`, target: `s:${at}`, label: "" },
      classes: "attachment",
    });
  }
  return want;
}

export class TopologyGraph {
  constructor(container) {
    this.container = container;
    this.cy = cytoscape({
      container,
      style: STYLE,
      wheelSensitivity: 0.3,
      minZoom: 0.2,
      maxZoom: 3,
    });
    this.laidOut = false;
    new ResizeObserver(() => this.cy.resize()).observe(container);
  }

  /** Brings the graph to what `live` says; returns whether it changed. */
  update(live) {
    const want = elementsOf(live);
    const cy = this.cy;
    let nodesChanged = false;
    let changed = false;
    cy.batch(() => {
      cy.elements().forEach((el) => {
        if (!want.has(el.id())) {
          if (el.isNode()) nodesChanged = true;
          changed = true;
          cy.remove(el);
        }
      });
      const nodes = [];
      const edges = [];
      for (const [id, el] of want) {
        const have = cy.getElementById(id);
        if (have.nonempty()) {
          if (have.classes().join(" ") !== el.classes) {
            have.classes(el.classes);
            changed = true;
          }
          have.data("label", el.data.label);
        } else if (el.group === "nodes") {
          nodes.push(el);
        } else {
          edges.push(el);
        }
      }
      if (nodes.length) {
        cy.add(nodes);
        nodesChanged = true;
      }
      if (edges.length) cy.add(edges);
      changed = changed || nodes.length > 0 || edges.length > 0;
    });
    if (nodesChanged || !this.laidOut) this.layout();
    this.publish();
    return changed;
  }

  /** Lays the switches and links out (a force-directed layout, starting
   * from where they are once drawn), then puts each switch's hosts just
   * outside it, away from the middle of the network. */
  layout() {
    const cy = this.cy;
    const switches = cy.nodes(".switch");
    if (switches.empty()) return;
    switches.union(cy.edges(".link")).layout({
      name: "cose",
      animate: false,
      randomize: !this.laidOut,
      fit: false,
      nodeRepulsion: () => 60000,
      idealEdgeLength: () => 100,
      gravity: 0.5,
      numIter: 800,
    }).run();
    this.placeHosts(switches);
    cy.fit(undefined, 28);
    this.laidOut = true;
  }

  placeHosts(switches) {
    const n = switches.length;
    const c = switches.reduce((m, s) => ({ x: m.x + s.position("x") / n, y: m.y + s.position("y") / n }), { x: 0, y: 0 });
    switches.forEach((s) => {
      const hosts = s.neighborhood("node.host");
      if (hosts.empty()) return;
      const p = s.position();
      const away = Math.hypot(p.x - c.x, p.y - c.y) < 1 ? Math.PI / 2 : Math.atan2(p.y - c.y, p.x - c.x);
      const spread = Math.min(Math.PI * 0.6, 0.45 * (hosts.length - 1));
      hosts.forEach((h, i) => {
        const a = hosts.length === 1 ? away : away - spread / 2 + (spread * i) / (hosts.length - 1);
        h.position({ x: p.x + 60 * Math.cos(a), y: p.y + 60 * Math.sin(a) });
      });
    });
  }

  /** How many of each are drawn (also on the container's data-*
   * attributes, for tests and for anyone reading the page). */
  counts() {
    const cy = this.cy;
    return {
      switches: cy.nodes(".switch").length,
      hosts: cy.nodes(".host").length,
      links: cy.edges(".link").length,
      oneway: cy.edges(".oneway").length,
      attachments: cy.edges(".attachment").length,
    };
  }

  publish() {
    const c = this.counts();
    const d = this.container.dataset;
    d.switches = c.switches;
    d.hosts = c.hosts;
    d.links = c.links;
    d.oneway = c.oneway;
  }
}
