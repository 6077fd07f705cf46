// baton's web UI: one live feed (GET /api/v1/events, server-sent events)
// drives the topology graph, the scheduler's charts and the tables; the
// applications' buttons call the REST API (POST /api/v1/apps/{name}/stop
// and /start). Everything it loads comes from the controller itself.
// On a clustered instance the feed carries the cluster (as
// GET /api/v1/cluster has it) and the graph colours each switch by its
// master.
//
// For tests and for the curious, `window.baton` holds the last snapshot,
// the cytoscape instance and `counts()` of what the graph draws.

import { TopologyGraph, shortDpid, memberColours, NO_MASTER } from "./graph.js";
import { SchedulerCharts, WindowedRates, WINDOW_SECS } from "./charts.js";

const $ = (sel) => document.querySelector(sel);

/** Builds an element: el("td", {class: "num"}, "42"). */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

function rate(x) {
  if (x >= 1e6) return `${(x / 1e6).toFixed(2)} M`;
  if (x >= 1e4) return `${(x / 1e3).toFixed(1)} k`;
  return x >= 10 ? x.toFixed(0) : x.toFixed(1);
}

function age(secs) {
  if (secs < 60) return `${secs.toFixed(0)} s`;
  if (secs < 3600) return `${(secs / 60).toFixed(0)} min`;
  if (secs < 86400) return `${(secs / 3600).toFixed(1)} h`;
  return `${(secs / 86400).toFixed(1)} d`;
}

// ------------------------------------------------------------- notices

let noticeTimer = null;

function notice(text) {
  const n = $("#notice");
  n.textContent = text;
  n.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => (n.hidden = true), 8000);
}

// ---------------------------------------------------------------- tables

/** A load bar filled to `percent`. */
function bar(percent) {
  const fill = el("span");
  fill.style.width = `${percent}%`;
  return fill;
}

/** The switches' table, with each switch's rates over the page's window
 * (`rates`, null before two samples). */
function renderSwitches(live, rates) {
  const of = (s) => (rates && rates.switches.get(s.dpid)) || { rx: null, tx: null };
  const max = Math.max(1, ...live.switches.map((s) => of(s).rx || 0));
  const rows = live.switches.map((s) => {
    const { rx, tx } = of(s);
    return el("tr", { dataset: { dpid: s.dpid } },
      el("td", { class: "mono", title: s.dpid }, shortDpid(s.dpid)),
      el("td", {}, s.version),
      el("td", { class: "mono" }, s.peer || "–"),
      el("td", {}, age(s.connected_secs)),
      el("td", { class: "num" }, rx === null ? "–" : rate(rx)),
      el("td", { class: "num" }, tx === null ? "–" : rate(tx)),
      el("td", { title: rx === null ? "not sampled yet" : `${rate(rx)} messages/s in` },
        el("div", { class: "bar" }, bar((100 * (rx || 0)) / max))),
      el("td", { class: "num" }, String(s.weight)),
      el("td", { class: "num" }, `${s.live_ports}/${s.ports}`));
  });
  $("#switches tbody").replaceChildren(...rows);
}

function renderHosts(live) {
  const rows = live.hosts.hosts.map((h) =>
    el("tr", { dataset: { mac: h.mac } },
      el("td", { class: "mono" }, h.mac),
      el("td", { class: "mono" }, h.ipv4.join(", ") || "–"),
      el("td", { class: "mono" }, `${shortDpid(h.attachment.dpid)} port ${h.attachment.port}`),
      el("td", { class: "num" }, `${age(h.last_seen_secs_ago)} ago`)));
  $("#hosts tbody").replaceChildren(...rows);
}

function counters(app) {
  return Object.entries(app.counters)
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => `${k.replaceAll("_", " ")} ${v}`)
    .join(" · ") || "–";
}

/**
 * The applications' table. Rows and buttons are updated in place, not
 * rebuilt: the feed re-renders every snapshot, and a button replaced
 * between a mouse press and its release would lose the click.
 */
function renderApps(apps) {
  const tbody = $("#apps tbody");
  const rows = apps.map((a) => {
    const row = tbody.querySelector(`tr[data-app="${CSS.escape(a.name)}"]`) || appRow(a.name);
    const running = a.state === "running";
    const action = running ? "stop" : "start";
    row.dataset.state = a.state;
    const failure = a.error ? el("div", { class: "error" }, `panicked: ${a.error}`) : null;
    const panics = a.panics > 0 && !a.error ? el("div", { class: "error" }, `${a.panics} panic(s) before`) : null;
    row.cells[1].replaceChildren(
      ...[el("span", { class: `state ${a.state}` }, a.state), failure, panics].filter((c) => c));
    setText(row.cells[2], counters(a));
    const button = row.querySelector("button");
    button.dataset.action = action;
    setText(button, running ? "Stop" : "Start");
    return row;
  });
  const inOrder = rows.length === tbody.children.length && rows.every((r, i) => tbody.children[i] === r);
  if (!inOrder) tbody.replaceChildren(...rows);
}

/** The DAGs' table, shown when there are DAGs. */
function renderDags(dags) {
  $("#dags").hidden = dags.length === 0;
  const rows = dags.map((d) => el("tr", {},
    el("td", {}, el("strong", {}, d.name)),
    el("td", {}, d.stages.map((s) => s.join(" + ")).join(" → ")),
    el("td", {}, d.trigger),
    el("td", {}, `${d.reads.join(", ") || "–"} → ${d.writes.join(", ") || "–"}`),
    el("td", { class: "num" }, String(d.commits)),
    el("td", { class: "num" }, String(d.conflicts)),
    el("td", { class: "num" }, String(d.reruns)),
    el("td", { class: "num" }, String(d.late_commits)),
    el("td", { class: "num" }, String(d.aborts)),
    el("td", { class: "num" }, d.commits > 0 ? `${d.last_run_us} µs` : "–")));
  $("#dags tbody").replaceChildren(...rows);
}

/** Each link's reserved share of its capacity, shown when the bandwidth
 * application is in the pipeline (`bw` is null otherwise). */
function renderReservations(bw) {
  $("#reservations").hidden = !bw;
  if (!bw) return;
  const end = (e) => `${shortDpid(e.dpid)} port ${e.port}`;
  const rows = bw.links.map((l) => {
    const percent = l.capacity_kbps > 0 ? (100 * l.reserved_kbps) / l.capacity_kbps : 0;
    return el("tr", {},
      el("td", { class: "mono" }, `${end(l.link.src)} – ${end(l.link.dst)}`),
      el("td", { class: "num" }, `${l.reserved_kbps}/${l.capacity_kbps} kbit/s`),
      el("td", {}, el("div", { class: percent >= 100 ? "bar full" : "bar" }, bar(Math.min(100, percent)))),
      el("td", { class: "num" }, `${percent.toFixed(0)}%`));
  });
  $("#reservations tbody").replaceChildren(...rows);
  setText($("#reservations-note"), `${bw.reservations} reservation${bw.reservations === 1 ? "" : "s"}`);
}

/** On a clustered instance, the legend of the switches' colours: one
 * per member, and grey for no master; hidden on a standalone one. */
function renderCluster(cluster) {
  const legend = $("#cluster-legend");
  legend.hidden = !cluster;
  if (!cluster) return;
  const key = (colour, text) => [el("span", { class: "key switch", style: `background: ${colour}` }), text];
  const items = [...memberColours(cluster)].flatMap(([name, colour]) =>
    key(colour, name === cluster.node ? `${name} (this one)` : name));
  legend.replaceChildren("masters:", ...items, ...key(NO_MASTER, "none"));
}

/** A new row for application `name`; its button acts on its current state. */
function appRow(name) {
  const button = el("button", { type: "button", dataset: { app: name } });
  button.addEventListener("click", () => lifecycle(name, button.dataset.action));
  return el("tr", { dataset: { app: name } },
    el("td", {}, el("strong", {}, name)),
    el("td", {}),
    el("td", { class: "counters" }),
    el("td", {}, button));
}

/** Sets an element's text only when it changed. */
function setText(e, text) {
  if (e.textContent !== text) e.textContent = text;
}

// -------------------------------------------------------------- actions

function headers() {
  const h = { Accept: "application/json" };
  const token = sessionStorage.getItem("baton-token");
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

/** Why a call failed, from the API's JSON error body if there is one. */
async function failure(resp) {
  try {
    const body = await resp.json();
    if (body && body.error) return `${resp.status}: ${body.error}`;
  } catch (_) { /* not JSON */ }
  return `${resp.status} ${resp.statusText}`;
}

async function lifecycle(name, action) {
  for (const b of document.querySelectorAll(`button[data-app="${CSS.escape(name)}"]`)) b.disabled = true;
  try {
    const resp = await fetch(`/api/v1/apps/${encodeURIComponent(name)}/${action}`, { method: "POST", headers: headers() });
    if (!resp.ok) {
      notice(`${action} ${name}: ${await failure(resp)}`);
    }
    const apps = await fetch("/api/v1/apps", { headers: headers() });
    if (apps.ok) renderApps(await apps.json());
  } catch (e) {
    notice(`${action} ${name}: ${e}`);
  } finally {
    for (const b of document.querySelectorAll(`button[data-app="${CSS.escape(name)}"]`)) b.disabled = false;
  }
}

// ----------------------------------------------------------------- feed

const graph = new TopologyGraph($("#graph"));
const charts = new SchedulerCharts($("#scheduler"));
const windowed = new WindowedRates();
let sample = -1;
let rates = null;
$("#relayout").addEventListener("click", () => graph.relayout());
for (const e of document.querySelectorAll("[data-window]")) e.textContent = `${WINDOW_SECS} s`;

window.baton = {
  live: null,
  snapshots: 0,
  cy: graph.cy,
  counts: () => graph.counts(),
};

function render(live) {
  window.baton.live = live;
  window.baton.snapshots += 1;
  if (live.sample !== sample) {
    sample = live.sample;
    windowed.push(live);
    rates = windowed.rates();
  }
  graph.update(live);
  charts.update(live, rates);
  renderSwitches(live, rates);
  renderHosts(live);
  renderApps(live.apps);
  renderDags(live.dags);
  renderReservations(live.reservations);
  renderCluster(live.cluster);
  const c = graph.counts();
  $("#summary").textContent = [
    `${live.switches.length} switches`,
    `${c.links} links`,
    `${live.hosts.hosts.length} hosts`,
    rates ? `${rate(rates.rx)} msg/s in` : null,
  ].filter((x) => x).join(" · ");
  const sched = live.scheduler;
  const fair = sched.fairness;
  // The BDU as the file, the flag and the API write it: bdu_us, µs.
  $("#scheduler-note").textContent =
    `${sched.scheduler}, ${sched.batching} batching, BDU ${sched.bdu_us} µs, ` +
    `${live.workers.length} worker${live.workers.length === 1 ? "" : "s"}, ` +
    `IBT ${live.workers.map((x) => x.ibt).join(" / ")}` +
    (fair ? `, fairness ${fair.jain.toFixed(3)} over ${fair.switches} switch${fair.switches === 1 ? "" : "es"}` : "");
}

function connect() {
  const feed = $("#feed");
  const source = new EventSource("/api/v1/events");
  source.addEventListener("snapshot", (e) => {
    feed.dataset.state = "live";
    feed.textContent = "live";
    render(JSON.parse(e.data));
  });
  source.addEventListener("error", () => {
    // EventSource reconnects by itself (the server asks for 1 s).
    feed.dataset.state = "lost";
    feed.textContent = "reconnecting…";
  });
}

const token = $("#token");
token.value = sessionStorage.getItem("baton-token") || "";
token.addEventListener("change", () => sessionStorage.setItem("baton-token", token.value));

connect();
