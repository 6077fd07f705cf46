// The topology graph: switches, the links discovery found between them,
// and the hosts where the network saw them, drawn with cytoscape.js and
// brought up to date from each live snapshot: elements are added, removed
// or restyled in place, and only nodes new to the graph are placed, so
// that what a person has looked at stays where it was.
//
// Placement keeps every node's box (its label included) GAP pixels clear
// of every other's:
// - switches: a force-directed layout (cose) over the switches and links
//   while the picture is young (every switch placed less than SETTLE_MS
//   ago and none dragged), since discovery finds links a probe interval
//   after their switches connect; afterwards a new switch goes beside
//   the switches it links to, and nothing else moves;
// - hosts: beside their switch, in the widest angle between its links,
//   at the first spot where neither the host nor its line to the switch
//   touches another node or link.
// A node that leaves and comes back (a switch reconnecting) returns to
// where it was if that spot is free. Dragging a switch takes its hosts
// along; "Lay out again" (`relayout`) places everything afresh.
//
// On a clustered instance (the snapshot's `cluster` is set) each switch
// is filled with its master's colour (`memberColours`), grey when no
// member masters it; a standalone instance's switches look as always.

import cytoscape from "./vendor/cytoscape.esm.min.mjs";

/** Pixels kept between any two nodes' boxes, labels included. */
export const GAP = 8;

/** How long a switch's place is provisional: discovery finds its links
 * within one probe interval (5 s by default) of its connecting, and
 * until then where a force layout put it says little. */
export const SETTLE_MS = 10000;

/** How many departed nodes' places are kept for their return. */
const REMEMBERED = 10000;

/** From a switch's centre to its hosts' first ring, pixels. */
const HOST_RING = 52;

/** The force layout for switches and links: long enough edges and strong
 * enough repulsion that hosts fit between switches. */
const COSE = {
  name: "cose",
  animate: false,
  fit: false,
  nodeDimensionsIncludeLabels: true,
  nodeOverlap: 40,
  nodeRepulsion: () => 600000,
  idealEdgeLength: () => 150,
  edgeElasticity: () => 100,
  gravity: 0.4,
  numIter: 1500,
  componentSpacing: 90,
};

/** A datapath id without its leading zero bytes: 00:00:...:00:01 -> 00:01. */
export function shortDpid(dpid) {
  let s = dpid;
  while (s.startsWith("00:") && s.length > 5) s = s.slice(3);
  return s;
}

/** The cluster members' colours, in the order of their names; the first
 * is a standalone switch's. */
export const MEMBER_COLOURS = ["#2f6fdf", "#d9480f", "#2b8a3e", "#ae3ec9", "#b08800", "#0c8599", "#c2255c", "#5f3dc4"];

/** A switch no member masters. */
export const NO_MASTER = "#9aa3b5";

/** Each cluster member's colour, by name (members, and masters not among
 * them, in name order); an empty map without a cluster. */
export function memberColours(cluster) {
  if (!cluster) return new Map();
  const names = new Set(cluster.members.map((m) => m.node));
  for (const m of cluster.masters) if (m.master) names.add(m.master);
  const sorted = [...names].sort();
  return new Map(sorted.map((n, i) => [n, MEMBER_COLOURS[i % MEMBER_COLOURS.length]]));
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
    selector: "node.switch.mastered",
    style: { "background-color": "data(colour)" },
  },
  {
    selector: "node.switch.masterless",
    style: { "background-color": NO_MASTER },
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
  const cluster = live.cluster || null;
  const colours = memberColours(cluster);
  const masters = new Map(cluster ? cluster.masters.map((m) => [m.dpid, m.master]) : []);
  for (const dpid of switches) {
    const data = { id: `s:${dpid}`, label: shortDpid(dpid), dpid };
    let classes = connected.has(dpid) ? "switch" : "switch detached";
    if (cluster) {
      const master = masters.get(dpid);
      if (master) {
        data.master = master;
        data.colour = colours.get(master);
        classes += " mastered";
      } else {
        classes += " masterless";
      }
    }
    want.set(`s:${dpid}`, { group: "nodes", data, classes });
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
    // The switch is in the id: a host that moves gets a new edge (an
    // edge's ends cannot change) and a new place.
    want.set(`a:${h.mac}@${at}`, {
      group: "edges",
      data: { id: `a:${h.mac}@${at}`, source: `h:${h.mac}`, target: `s:${at}`, label: "" },
      classes: "attachment",
    });
  }
  return want;
}

// ------------------------------------------------------------ geometry

/** A box grown by `pad` on every side. */
function grow(b, pad) {
  return { x1: b.x1 - pad, y1: b.y1 - pad, x2: b.x2 + pad, y2: b.y2 + pad };
}

/** How many links (not hosts) switch `s` has. */
function links(s) {
  return s.connectedEdges(".link").length;
}

/** Whether two boxes overlap. */
export function overlaps(a, b) {
  return a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;
}

/** Whether the segment from `p` to `q` passes through box `b`
 * (Liang–Barsky clipping). */
function crosses(p, q, b) {
  let t0 = 0;
  let t1 = 1;
  const dx = q.x - p.x;
  const dy = q.y - p.y;
  for (const [d, room] of [[-dx, p.x - b.x1], [dx, b.x2 - p.x], [-dy, p.y - b.y1], [dy, b.y2 - p.y]]) {
    if (d === 0) {
      if (room < 0) return false;
    } else {
      const t = room / d;
      if (d < 0) t0 = Math.max(t0, t);
      else t1 = Math.min(t1, t);
      if (t0 > t1) return false;
    }
  }
  return true;
}

/** A node's box (label included) relative to its position. */
function shape(n) {
  const b = n.boundingBox({ includeLabels: true, includeOverlays: false });
  const p = n.position();
  return { x1: b.x1 - p.x, y1: b.y1 - p.y, x2: b.x2 - p.x, y2: b.y2 - p.y };
}

/** `shape` placed at `p`. */
function at(s, p) {
  return { x1: p.x + s.x1, y1: p.y + s.y1, x2: p.x + s.x2, y2: p.y + s.y2 };
}

/** Angles around a circle in `steps` steps, nearest `toward` first. */
function anglesFrom(toward, steps) {
  const out = [toward];
  for (let k = 1; out.length < steps; k++) {
    out.push(toward + (2 * Math.PI * k) / steps);
    if (out.length < steps) out.push(toward - (2 * Math.PI * k) / steps);
  }
  return out;
}

/** The middle of the widest gap between `angles` (radians); `fallback`
 * when there are none. */
function widestGap(angles, fallback) {
  if (angles.length === 0) return fallback;
  const a = angles.map((x) => (x + 2 * Math.PI) % (2 * Math.PI)).sort((x, y) => x - y);
  let best = 0;
  let mid = a[0] + Math.PI;
  for (let i = 0; i < a.length; i++) {
    const next = i + 1 < a.length ? a[i + 1] : a[0] + 2 * Math.PI;
    if (next - a[i] > best) {
      best = next - a[i];
      mid = (a[i] + next) / 2;
    }
  }
  return mid;
}

/**
 * Room on the canvas: the boxes of the nodes already placed and the lines
 * between them, and where a node of a given shape fits among them.
 */
class Room {
  constructor() {
    this.boxes = [];
    this.lines = [];
  }

  take(box) {
    this.boxes.push(grow(box, GAP / 2));
  }

  /** The box around everything taken, or null. */
  bounds() {
    if (this.boxes.length === 0) return null;
    return this.boxes.reduce((m, b) => ({
      x1: Math.min(m.x1, b.x1), y1: Math.min(m.y1, b.y1), x2: Math.max(m.x2, b.x2), y2: Math.max(m.y2, b.y2),
    }));
  }

  /** Whether `box` fits: clear of every box and, with `lines`, of every
   * line; and the line from `from` to its centre, if given, crosses no
   * box but the one `from` is in. */
  fits(box, lines, from, centre) {
    const b = grow(box, GAP / 2);
    if (this.boxes.some((t) => overlaps(b, t))) return false;
    if (lines && this.lines.some(([p, q]) => crosses(p, q, box))) return false;
    if (from) {
      const inside = (t) => from.x >= t.x1 && from.x <= t.x2 && from.y >= t.y1 && from.y <= t.y2;
      if (this.boxes.some((t) => !inside(t) && crosses(from, centre, t))) return false;
    }
    return true;
  }

  /** The first spot for a node of shape `s` on rings around `centre`
   * (radius `first`, then `step` further each time), at angles nearest
   * `toward` first; `opts.lines` keeps it off lines, `opts.tether` keeps
   * the line from `centre` to it clear of other nodes. */
  spot(s, centre, toward, first, step, opts = {}) {
    for (let ring = 0; ring < 12; ring++) {
      const r = first + ring * step;
      const steps = r === 0 ? 1 : Math.max(12, Math.round((2 * Math.PI * r) / 18));
      for (const a of anglesFrom(toward, steps)) {
        const p = { x: centre.x + r * Math.cos(a), y: centre.y + r * Math.sin(a) };
        if (this.fits(at(s, p), opts.lines, opts.tether ? centre : null, p)) return p;
      }
    }
    // Nowhere free within reach: the outermost ring, nearest `toward`.
    const r = first + 12 * step;
    return { x: centre.x + r * Math.cos(toward), y: centre.y + r * Math.sin(toward) };
  }
}

// --------------------------------------------------------------- graph

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
    /** Per switch: when it was placed, its links then, whether a person
     * moved it. */
    this.placed = new Map();
    /** Where nodes that left the graph were, by id. */
    this.remembered = new Map();
    new ResizeObserver(() => this.cy.resize()).observe(container);
    this.followDrags();
  }

  /** Notes where node `n`, leaving the graph, was (the last
   * REMEMBERED of them). */
  forget(n) {
    this.remembered.delete(n.id());
    this.remembered.set(n.id(), { ...n.position() });
    if (this.remembered.size > REMEMBERED) this.remembered.delete(this.remembered.keys().next().value);
    this.placed.delete(n.id());
  }

  /** A dragged switch takes its hosts along, and keeps its new place. */
  followDrags() {
    let from = null;
    this.cy.on("grab", "node.switch", (e) => {
      from = { ...e.target.position() };
    });
    this.cy.on("drag", "node.switch", (e) => {
      const s = e.target;
      const p = s.position();
      if (!from) return;
      const d = { x: p.x - from.x, y: p.y - from.y };
      s.neighborhood("node.host").forEach((h) => {
        if (!h.grabbed()) h.shift(d);
      });
      from = { ...p };
    });
    this.cy.on("dragfree", "node.switch", (e) => {
      const p = this.placed.get(e.target.id());
      if (p) p.moved = true;
      from = null;
    });
  }

  /** Brings the graph to what `live` says; returns whether it changed. */
  update(live) {
    const want = elementsOf(live);
    const cy = this.cy;
    let changed = false;
    const fresh = [];
    cy.batch(() => {
      cy.elements().forEach((el) => {
        if (!want.has(el.id())) {
          if (el.isNode()) this.forget(el);
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
          if (el.data.colour && have.data("colour") !== el.data.colour) {
            have.data({ master: el.data.master, colour: el.data.colour });
            changed = true;
          }
        } else if (el.group === "nodes") {
          nodes.push(el);
        } else {
          edges.push(el);
        }
      }
      if (nodes.length) fresh.push(...cy.add(nodes).map((n) => n.id()));
      const added = edges.length ? cy.add(edges) : cy.collection();
      // A host whose attachment is new moved (or is new): place it again.
      added.filter(".attachment").forEach((a) => fresh.push(a.source().id()));
      changed = changed || nodes.length > 0 || edges.length > 0;
    });
    this.place(new Set(fresh));
    this.publish();
    return changed;
  }

  /** Places the nodes `fresh` names (new, or hosts that moved) and the
   * switches whose place is still provisional and that gained links. */
  place(fresh) {
    const cy = this.cy;
    const now = performance.now();
    const switches = cy.nodes(".switch");
    const young = (s) => {
      const p = this.placed.get(s.id());
      return !p || (!p.moved && now - p.at < SETTLE_MS);
    };
    const newSwitches = switches.filter((s) => fresh.has(s.id()));
    const grew = switches.filter((s) => {
      const p = this.placed.get(s.id());
      return p && young(s) && links(s) > p.links;
    });
    const moving = newSwitches.union(grew);
    const newHosts = cy.nodes(".host").filter((h) => fresh.has(h.id()));
    if (moving.empty()) {
      this.placeHosts(newHosts);
      if (newHosts.nonempty()) this.fitIfOutside();
      return;
    }
    const hosts = moving.neighborhood("node.host").union(newHosts);
    const room = this.room(cy.nodes().difference(moving).difference(hosts));
    if (switches.every(young)) {
      // A young picture: lay it all out again from where it is, the new
      // switches first put beside their neighbours (the first time, from
      // scattered places).
      const first = this.placed.size === 0;
      if (!first) newSwitches.forEach((s) => this.placeSwitch(s, room, now));
      this.layoutAll(first);
      return;
    }
    moving.forEach((s) => this.placeSwitch(s, room, now));
    this.placeHosts(hosts);
    this.fitIfOutside();
  }

  /** Lays out every switch with the force layout (scattered first when
   * `scatter`), keeps them apart, puts every host beside its switch and
   * fits the view. */
  layoutAll(scatter) {
    const cy = this.cy;
    const switches = cy.nodes(".switch");
    if (switches.nonempty()) {
      switches.union(cy.edges(".link")).layout({ ...COSE, randomize: scatter }).run();
    }
    const now = performance.now();
    const room = new Room();
    switches.forEach((s) => {
      // The force layout leaves nodes close, seldom on top of each other:
      // each goes to the nearest free spot from where it was put.
      const s0 = shape(s);
      const p = room.spot(s0, s.position(), 0, 0, 24);
      s.position(p);
      room.take(at(s0, p));
      const before = this.placed.get(s.id());
      this.placed.set(s.id(), { at: before ? before.at : now, links: links(s), moved: false });
    });
    this.placeHosts(cy.nodes(".host"));
    if (cy.nodes().nonempty()) cy.fit(undefined, 28);
  }

  /** Places switch `s` where it was before it left if that is free, else
   * beside the switches it links to (or right of the drawing). */
  placeSwitch(s, room, now) {
    const s0 = shape(s);
    const before = this.remembered.get(s.id());
    let p;
    if (before && room.fits(at(s0, before))) {
      p = before;
    } else {
      const ends = s.neighborhood("node.switch").filter((n) => n.id() !== s.id() && this.placed.has(n.id()));
      if (ends.length === 1) {
        // Out from its one neighbour, where that one has most room.
        const c = ends[0].position();
        const around = ends[0]
          .neighborhood("node")
          .filter((n) => n.id() !== s.id())
          .map((n) => Math.atan2(n.position("y") - c.y, n.position("x") - c.x));
        p = room.spot(s0, c, widestGap(around, 0), COSE.idealEdgeLength(), 40);
      } else if (ends.nonempty()) {
        const n = ends.length;
        const c = ends.reduce((m, e) => ({ x: m.x + e.position("x") / n, y: m.y + e.position("y") / n }), { x: 0, y: 0 });
        p = room.spot(s0, c, 0, 0, 40);
      } else {
        // Linked to nothing placed: right of the drawing.
        const bb = room.bounds();
        const c = bb ? { x: bb.x2 + 80, y: (bb.y1 + bb.y2) / 2 } : { x: 0, y: 0 };
        p = room.spot(s0, c, Math.PI / 2, 0, 40);
      }
    }
    s.position(p);
    room.take(at(s0, p));
    const had = this.placed.get(s.id());
    this.placed.set(s.id(), { at: had ? had.at : now, links: links(s), moved: false });
  }

  /** Puts each of `hosts` beside its switch: where it was, if it left
   * and that spot is still free, else in the widest angle between the
   * switch's links and hosts, off every node and line. */
  placeHosts(hosts) {
    if (hosts.empty()) return;
    const cy = this.cy;
    const room = this.room(cy.nodes().difference(hosts));
    cy.edges().forEach((e) => {
      if (hosts.contains(e.source()) || hosts.contains(e.target())) return;
      room.lines.push([{ ...e.source().position() }, { ...e.target().position() }]);
    });
    const done = new Set();
    hosts.forEach((h) => {
      const sw = h.neighborhood("node.switch");
      if (sw.empty()) return;
      const c = sw[0].position();
      const h0 = shape(h);
      const before = this.remembered.get(h.id());
      let p;
      if (before && Math.hypot(before.x - c.x, before.y - c.y) < 3 * HOST_RING && room.fits(at(h0, before), true, c, before)) {
        p = before;
      } else {
        const around = sw[0]
          .neighborhood("node")
          .filter((n) => n.id() !== h.id() && (!hosts.contains(n) || done.has(n.id())))
          .map((n) => Math.atan2(n.position("y") - c.y, n.position("x") - c.x));
        p = room.spot(h0, c, widestGap(around, Math.PI / 2), HOST_RING, 22, { lines: true, tether: true });
      }
      h.position(p);
      room.take(at(h0, p));
      room.lines.push([{ ...c }, { ...p }]);
      done.add(h.id());
    });
  }

  /** The room left by `nodes` (already placed) and the lines between
   * them. */
  room(nodes) {
    const room = new Room();
    nodes.forEach((n) => room.take(n.boundingBox({ includeLabels: true, includeOverlays: false })));
    return room;
  }

  /** Fits the view when a node lies outside it; otherwise the view (and
   * a person's zoom) stays. */
  fitIfOutside() {
    const cy = this.cy;
    const bb = cy.nodes().boundingBox({ includeLabels: true });
    const v = cy.extent();
    if (bb.x1 < v.x1 || bb.y1 < v.y1 || bb.x2 > v.x2 || bb.y2 > v.y2) cy.fit(undefined, 28);
  }

  /** "Lay out again": everything placed afresh. */
  relayout() {
    this.remembered.clear();
    this.placed.clear();
    this.layoutAll(true);
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
