// Charts over time of what the scheduler does (uPlot): throughput in and
// out, Jain's fairness across switches, and each worker's input batching
// threshold (Maestro §3.3) and mean batch. One point per one-second sample
// of the live feed, the last HISTORY of them kept.
//
// Throughput and batches are rates over the last WINDOW_SECS, which the
// page works out from the cumulative counters every snapshot carries
// (`WindowedRates`). The window is the page's choice, not the server's:
// the API's one-second rates are what `GET /api/v1/switches`, Jain's
// index over the sampling interval and `/metrics` report, and a longer
// window there would change what they mean for every other client
// (Prometheus takes its own windows, from the counters); how smooth a
// chart should look is a matter for the chart.

import uPlot from "./vendor/uPlot.esm.js";

/** Points kept per series: five minutes of one-second samples. */
export const HISTORY = 300;

/** Seconds the page's rates are taken over: traffic that comes in bursts
 * (discovery's LLDP probes, every 5 s by default) reads as the steady
 * rate it is, not as a spike and four zeros, and a change of load shows
 * in full within this long. */
export const WINDOW_SECS = 5;

/** What a counter gained from `then` to `now`; one that went back (a
 * switch reconnected, its counters anew) counts from zero. */
function gained(now, then) {
  return now >= then ? now - then : now;
}

/**
 * Rates over the last WINDOW_SECS from the cumulative counters of the
 * live feed's samples (each switch's messages in and out, each worker's
 * messages and batches), timed by the controller's clock (`at_ms`).
 */
export class WindowedRates {
  constructor(windowSecs = WINDOW_SECS) {
    this.window = windowSecs * 1000;
    this.samples = [];
  }

  /** Adds a snapshot's counters (one per sample: a snapshot sent because
   * something changed repeats the workers' figures). */
  push(live) {
    const sample = {
      at: live.at_ms,
      switches: new Map(live.switches.map((s) => [s.dpid, [s.rx_msgs, s.tx_msgs]])),
      workers: live.scheduler.workers.map((w) => [w.messages, w.batches]),
    };
    this.samples.push(sample);
    // Keep the newest sample at least a window older than this one, and
    // those after it.
    while (this.samples.length > 2 && this.samples[1].at <= sample.at - this.window) this.samples.shift();
  }

  /** Messages per second in and out (in all and per switch, by datapath
   * id) and each worker's throughput and mean batch, from the oldest
   * sample kept to the newest; null before two samples. A switch not in
   * the oldest sample counts from zero. */
  rates() {
    if (this.samples.length < 2) return null;
    const a = this.samples[0];
    const b = this.samples[this.samples.length - 1];
    const secs = (b.at - a.at) / 1000;
    if (!(secs > 0)) return null;
    const switches = new Map();
    let rx = 0;
    let tx = 0;
    for (const [dpid, [r, t]] of b.switches) {
      const [r0, t0] = a.switches.get(dpid) || [0, 0];
      const s = { rx: gained(r, r0) / secs, tx: gained(t, t0) / secs };
      switches.set(dpid, s);
      rx += s.rx;
      tx += s.tx;
    }
    const workers = b.workers.map(([m, n], i) => {
      const [m0, n0] = a.workers[i] || [0, 0];
      const dm = gained(m, m0);
      const dn = gained(n, n0);
      return { msgPerSec: dm / secs, batch: dn === 0 ? 0 : dm / dn };
    });
    return { secs, rx, tx, switches, workers };
  }
}

const COLOURS = ["#2f6fdf", "#1f9d6b", "#c77700", "#9b3fc4", "#c4302b", "#0f8fa8", "#6b7383", "#b5860b"];

function colour(i) {
  return COLOURS[i % COLOURS.length];
}

/** One chart: a time axis and named series, fed a row at a time. */
class Chart {
  constructor(el, series, range) {
    this.el = el;
    this.data = [[], ...series.map(() => [])];
    const opts = {
      width: Math.max(el.clientWidth, 280),
      height: 170,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: range ? { range } : { range: (u, min, max) => [0, Math.max(max, 1) * 1.1] } },
      axes: [{}, { size: 56 }],
      series: [{}, ...series.map((label, i) => ({ label, stroke: colour(i), width: 1.6, points: { show: false } }))],
    };
    this.plot = new uPlot(opts, this.data, el);
    new ResizeObserver(() => {
      const w = Math.max(el.clientWidth, 280);
      if (w !== this.plot.width) this.plot.setSize({ width: w, height: 170 });
    }).observe(el);
  }

  push(t, values) {
    this.data[0].push(t);
    values.forEach((v, i) => this.data[i + 1].push(v));
    if (this.data[0].length > HISTORY) this.data.forEach((s) => s.shift());
    this.plot.setData(this.data);
  }
}

export class SchedulerCharts {
  constructor(root) {
    this.root = root;
    this.workers = -1;
    this.lastSample = -1;
    this.points = 0;
  }

  /** Builds the charts for `n` workers (again if the count changes). */
  build(n) {
    for (const id of ["throughput", "fairness", "ibt", "batch"]) {
      this.root.querySelector(`#chart-${id}`).replaceChildren();
    }
    const names = Array.from({ length: n }, (_, i) => `worker ${i}`);
    this.throughput = new Chart(this.root.querySelector("#chart-throughput"), ["in", "out", ...names.map((w) => `${w} processed`)]);
    this.fairness = new Chart(this.root.querySelector("#chart-fairness"), ["Jain index"], [0, 1.05]);
    this.ibt = new Chart(this.root.querySelector("#chart-ibt"), names);
    this.batch = new Chart(this.root.querySelector("#chart-batch"), names);
    this.workers = n;
    this.points = 0;
  }

  /** Adds the snapshot's sample with the `rates` (`WindowedRates`) up to
   * it, once per sample (an event sent because something changed repeats
   * the last one). */
  update(live, rates) {
    if (live.sample === this.lastSample) return;
    this.lastSample = live.sample;
    // Built with the first snapshot, so the page does not move under the
    // reader's mouse a second later.
    if (live.workers.length !== this.workers) this.build(live.workers.length);
    if (!rates) return; // a feed's first sample: no rates yet
    const t = Date.now() / 1000;
    const w = rates.workers;
    this.throughput.push(t, [rates.rx, rates.tx, ...w.map((x) => x.msgPerSec)]);
    const fair = live.scheduler.fairness;
    this.fairness.push(t, [fair ? fair.jain : null]);
    this.ibt.push(t, live.workers.map((x) => x.ibt));
    this.batch.push(t, w.map((x) => x.batch));
    this.points += 1;
    this.root.dataset.points = this.points;
  }
}
