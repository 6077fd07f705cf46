// Charts over time of what the scheduler does (uPlot): throughput in and
// out, Jain's fairness across switches, and each worker's input batching
// threshold (Maestro §3.3) and mean batch. One point per one-second sample
// of the live feed, the last HISTORY of them kept.

import uPlot from "./vendor/uPlot.esm.js";

/** Points kept per series: five minutes of one-second samples. */
export const HISTORY = 300;

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

  /** Adds the snapshot's sample, once per sample (an event sent because
   * something changed repeats the last one). */
  update(live) {
    if (live.sample === this.lastSample) return;
    this.lastSample = live.sample;
    // Built with the first snapshot, so the page does not move under the
    // reader's mouse a second later.
    if (live.workers.length !== this.workers) this.build(live.workers.length);
    if (live.interval_secs === 0) return; // a feed's first: no rates yet
    const t = Date.now() / 1000;
    const w = live.workers;
    this.throughput.push(t, [live.rx_per_sec, live.tx_per_sec, ...w.map((x) => x.msg_per_sec)]);
    const fair = live.scheduler.fairness;
    this.fairness.push(t, [fair ? fair.jain : null]);
    this.ibt.push(t, w.map((x) => x.ibt));
    this.batch.push(t, w.map((x) => x.batch));
    this.points += 1;
    this.root.dataset.points = this.points;
  }
}
