// The interactive plot of a run's page (sbpbench/outputs/page.py), inlined into the page.
// It reads the curves embedded as JSON (#sbpbench-data) and draws them as SVG into #chart:
// x and y axes chosen in #x-axis and #y-axis, a solver hidden or shown by clicking its legend
// entry, zoom by dragging a rectangle or turning the wheel, #reset back to the full extent;
// the buttons in #downloads save the chart as shown as an SVG or a PDF file (chart_files.js,
// inlined before this script, which also gives each static figure its buttons).
// The current view is written to the chart's data-x-domain and data-y-domain attributes.
// Labels are only ever set as text (textContent), never parsed as HTML.
// sbpbench/outputs/svg_chart.py draws the page's static figures as draw() does before any zoom
// (tests/test_page_figures.py compares the two): change both together.

(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("sbpbench-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const W = 760, H = 440, LEFT = 72, RIGHT = 16, TOP = 14, BOTTOM = 46;
  // about how many markers a line carries and the legend's layout (svg_chart.py's constants); each
  // solver's look (colour, line style, marker) comes with the data (svg_chart.py's styles)
  const MARKS_PER_LINE = 8, SAMPLE = 26, LEGEND_ROW = 18, COLUMN_MIN = 150, LEGEND_COLUMNS = 3, CHAR_WIDTH = 7;
  const svg = document.getElementById("chart");
  const xSelect = document.getElementById("x-axis");
  const ySelect = document.getElementById("y-axis");
  const legend = document.getElementById("legend");
  const notes = document.getElementById("notes");
  const hidden = new Set();
  let view = null;  // {x: [lo, hi], y: [lo, hi]} in axis units (log10 on a log axis), or null: everything

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function option(select, name, axis) {
    const o = document.createElement("option");
    o.value = name;
    o.textContent = axis.label;
    select.appendChild(o);
  }

  const key = () => xSelect.value + "|" + ySelect.value;
  const xAxis = () => data.x[xSelect.value];
  const yAxis = () => data.y[ySelect.value];
  // a value in axis units: log10 on a log axis; NaN where a log axis has no place for it
  const unit = (v, log) => (log ? (v > 0 ? Math.log10(v) : NaN) : v);
  const value = (u, log) => (log ? Math.pow(10, u) : u);

  // the SVG path of a marker centred at (px, py), as svg_chart.py's marker_path writes it
  function markerPath(kind, px, py) {
    const n = (v) => v.toFixed(1);
    if (kind === "circle") return "M" + n(px - 3.5) + "," + n(py) + "a3.5,3.5 0 1,0 7,0a3.5,3.5 0 1,0 -7,0Z";
    if (kind === "square") return "M" + n(px - 3) + "," + n(py - 3) + "h6v6h-6Z";
    if (kind === "triangle") {
      return "M" + n(px) + "," + n(py - 4) + "L" + n(px + 4) + "," + n(py + 3) + "L" + n(px - 4) + "," + n(py + 3) + "Z";
    }
    if (kind === "diamond") {
      return "M" + n(px) + "," + n(py - 4.5) + "L" + n(px + 4.5) + "," + n(py) + "L" + n(px) + "," + n(py + 4.5)
        + "L" + n(px - 4.5) + "," + n(py) + "Z";
    }
    return "";
  }

  // the solvers with curves on the current axes, each with its look
  function drawn() {
    const k = key();
    return data.solvers.map((s, i) => ({ s: s, i: i, c: s.curves[k] })).filter((e) => e.c)
      .map((e) => Object.assign(e, { style: e.s.style, color: e.s.style.color }));
  }
  const shown = () => drawn().filter((e) => !hidden.has(e.i));

  // a curve's standard error at point j: 0 where fewer than two runs cover it (no band there)
  const spread = (c, j) => (c.se[j] === null ? 0 : c.se[j]);

  function extent(entries) {
    const lx = xAxis().log, ly = yAxis().log;
    let x = [Infinity, -Infinity], y = [Infinity, -Infinity];
    const grow = (r, u) => { if (isFinite(u)) { r[0] = Math.min(r[0], u); r[1] = Math.max(r[1], u); } };
    for (const e of entries) {
      e.c.x.forEach((v, j) => {
        grow(x, unit(v, lx));
        grow(y, unit(e.c.mean[j] - spread(e.c, j), ly));
        grow(y, unit(e.c.mean[j] + spread(e.c, j), ly));
      });
    }
    if (!(x[0] <= x[1])) x = [0, 1];
    if (!(y[0] <= y[1])) y = [0, 1];
    const pad = (r) => {
      const d = r[1] - r[0] || Math.abs(r[0]) * 0.1 || 1;
      return [r[0] - 0.04 * d, r[1] + 0.04 * d];
    };
    return { x: pad(x), y: pad(y) };
  }

  function ticks(r, log) {
    let out = [];
    if (log) {
      for (let k = Math.ceil(r[0]); k <= Math.floor(r[1]); k++) out.push(k);
      if (out.length < 3) {  // a narrow log axis: 1, 2 and 5 times the powers of ten
        out = [];
        for (let k = Math.floor(r[0]); k <= Math.ceil(r[1]); k++) {
          for (const m of [1, 2, 5]) {
            const u = k + Math.log10(m);
            if (u >= r[0] && u <= r[1]) out.push(u);
          }
        }
      }
      if (out.length >= 3) return out;
      out = [];  // fewer still: evenly spaced ticks, in log10
    }
    const span = r[1] - r[0], raw = span / 6, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
    for (let t = Math.ceil(r[0] / step) * step; t <= r[1] + step * 1e-9; t += step) out.push(t);
    return out;
  }

  // The tick labels of one axis, in one notation (the tables' rule, notation.py's tick_labels, which
  // labels the static figures): with an exponent (1e3, 1e4, 2.5e-4) when some tick is at or above
  // 1e5 or below 1e-3, else plain, all with the decimals of the finest tick (0.0, 0.5, 1.0); at most
  // 4 significant digits.
  function labels(us, log) {
    const vs = us.map((u) => Number(value(u, log).toPrecision(4)));
    const exponent = (v) => v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3);
    if (vs.some(exponent)) {
      return vs.map((v) => {
        if (v === 0) return "0";
        const [m, e] = v.toExponential(3).split("e");
        return String(Number(m)) + "e" + Number(e);
      });
    }
    const decimals = Math.max(0, ...vs.map((v) => (String(v).split(".")[1] || "").length));
    return vs.map((v) => v.toFixed(decimals));
  }

  function draw() {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const xa = xAxis(), ya = yAxis();
    const entries = shown();
    const v = view || extent(entries);
    const sx = (u) => LEFT + (u - v.x[0]) / (v.x[1] - v.x[0]) * (W - LEFT - RIGHT);
    const sy = (u) => H - BOTTOM - (u - v.y[0]) / (v.y[1] - v.y[0]) * (H - TOP - BOTTOM);
    svg.setAttribute("data-x-domain", v.x.map((u) => value(u, xa.log)).join(" "));
    svg.setAttribute("data-y-domain", v.y.map((u) => value(u, ya.log)).join(" "));
    const clip = el("clipPath", { id: "plot-clip" }, el("defs", {}, svg));
    el("rect", { x: LEFT, y: TOP, width: W - LEFT - RIGHT, height: H - TOP - BOTTOM }, clip);
    el("rect", { class: "plot-area", x: LEFT, y: TOP, width: W - LEFT - RIGHT, height: H - TOP - BOTTOM }, svg);
    const xTicks = ticks(v.x, xa.log), xLabels = labels(xTicks, xa.log);
    xTicks.forEach((t, i) => {
      el("line", { class: "grid", x1: sx(t), x2: sx(t), y1: TOP, y2: H - BOTTOM }, svg);
      el("text", { class: "tick", x: sx(t), y: H - BOTTOM + 16, "text-anchor": "middle" }, svg)
        .textContent = xLabels[i];
    });
    const yTicks = ticks(v.y, ya.log), yLabels = labels(yTicks, ya.log);
    yTicks.forEach((t, i) => {
      el("line", { class: "grid", x1: LEFT, x2: W - RIGHT, y1: sy(t), y2: sy(t) }, svg);
      el("text", { class: "tick", x: LEFT - 6, y: sy(t) + 4, "text-anchor": "end" }, svg)
        .textContent = yLabels[i];
    });
    el("text", { id: "x-label", class: "axis-label", x: (LEFT + W - RIGHT) / 2, y: H - 8,
                 "text-anchor": "middle" }, svg).textContent = xa.label;
    el("text", { id: "y-label", class: "axis-label", transform: "rotate(-90)", x: -(TOP + H - BOTTOM) / 2,
                 y: 16, "text-anchor": "middle" }, svg).textContent = ya.label;
    const plot = el("g", { "clip-path": "url(#plot-clip)" }, svg);
    for (const e of entries) {
      const color = e.color, c = e.c, style = e.style;
      const pt = (x, y) => [sx(unit(x, xa.log)), sy(unit(y, ya.log))];
      const path = (points) => {  // breaks where a log axis has no place for a point
        let d = "", pen = "M";
        for (const [px, py] of points) {
          if (isFinite(px) && isFinite(py)) { d += pen + px.toFixed(1) + "," + py.toFixed(1); pen = "L"; }
          else pen = "M";
        }
        return d;
      };
      const floor = (y) => (ya.log ? Math.max(y, 1e-12) : y);
      // one band per stretch where at least two runs cover the points (a standard error there)
      let stretch = [];
      const closeBand = () => {
        const upper = stretch.map((j) => pt(c.x[j], c.mean[j] + c.se[j]));
        const lower = stretch.map((j) => pt(c.x[j], floor(c.mean[j] - c.se[j]))).reverse();
        const band = stretch.length > 1 ? path(upper.concat(lower)) : "";
        if (band) el("path", { class: "band", d: band + "Z", fill: color }, plot);
        stretch = [];
      };
      c.x.forEach((x, j) => { if (c.se[j] === null) closeBand(); else stretch.push(j); });
      closeBand();
      const mean = c.x.map((x, j) => [x, c.mean[j]]);
      let solid = mean, dashed = [];
      if (c.dashed_from !== null) {  // the Perceptron: dashed after its first epoch
        solid = mean.filter((p) => p[0] <= c.dashed_from);
        dashed = mean.filter((p) => p[0] >= c.dashed_from);
        if (solid.length && dashed.length) dashed.unshift(solid[solid.length - 1]);
      }
      const line = el("path", { class: "line", d: path(solid.map((p) => pt(p[0], p[1]))), stroke: color }, plot);
      if (style.dash) line.setAttribute("stroke-dasharray", style.dash);
      line.setAttribute("data-solver", e.s.label);
      if (dashed.length > 1) {
        el("path", { class: "line dashed", d: path(dashed.map((p) => pt(p[0], p[1]))), stroke: color }, plot);
      }
      if (c.fits) {  // each checkpoint a fit of its own (LIBSVM, LIBLINEAR, Fourier features): a point each
        for (const [px, py] of mean.map((p) => pt(p[0], p[1]))) {
          if (isFinite(px) && isFinite(py)) {
            el("circle", { class: "point", cx: px.toFixed(1), cy: py.toFixed(1), r: 3, fill: color }, plot);
          }
        }
      }
      // a marker at every k-th point, MARKS_PER_LINE in all
      const step = Math.max(1, Math.ceil(mean.length / MARKS_PER_LINE));
      let marks = "";
      mean.forEach((p, j) => {
        const [px, py] = pt(p[0], p[1]);
        if (j % step === 0 && isFinite(px) && isFinite(py)) marks += markerPath(style.marker, px, py);
      });
      if (marks) el("path", { class: "marker", d: marks, fill: color }, plot);
    }
    drawLegend();
  }

  // a legend's sample of a solver's look: its line style and marker, in its colour
  function sample(style) {
    const box = el("svg", { class: "sample", width: SAMPLE, height: 12, viewBox: "0 0 " + SAMPLE + " 12" });
    const line = el("line", { class: "line", x1: 0, x2: SAMPLE, y1: 6, y2: 6, stroke: style.color }, box);
    if (style.dash) line.setAttribute("stroke-dasharray", style.dash);
    const mark = markerPath(style.marker, SAMPLE / 2, 6);
    if (mark) el("path", { class: "marker", d: mark, fill: style.color }, box);
    return box;
  }

  function drawLegend() {
    legend.textContent = "";
    const k = key();
    for (const { s, i, c, style } of drawn()) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = hidden.has(i) ? "entry off" : "entry";
      b.setAttribute("aria-pressed", String(!hidden.has(i)));
      b.appendChild(sample(style));
      b.appendChild(document.createTextNode(s.label + " (" + c.runs + " runs)"));
      b.addEventListener("click", () => {
        if (hidden.has(i)) hidden.delete(i); else hidden.add(i);
        draw();
      });
      legend.appendChild(b);
    }
    notes.textContent = (data.notes[k] || []).length ? "Not drawn: " + data.notes[k].join("; ") + "." : "";
    if (!drawn().length) notes.textContent = "No solver has " + xAxis().label + " with "
      + yAxis().label + ". " + notes.textContent;
  }

  // zoom: drag a rectangle, or turn the wheel (around the pointer)
  function local(event) {
    const box = svg.getBoundingClientRect();
    return [(event.clientX - box.left) * W / box.width, (event.clientY - box.top) * H / box.height];
  }
  function toUnits(p) {
    const v = view || extent(shown());
    return [v.x[0] + (p[0] - LEFT) / (W - LEFT - RIGHT) * (v.x[1] - v.x[0]),
            v.y[0] + (H - BOTTOM - p[1]) / (H - TOP - BOTTOM) * (v.y[1] - v.y[0])];
  }
  let start = null, band = null;
  svg.addEventListener("mousedown", (event) => {
    if (event.button !== 0) return;
    start = local(event);
    band = el("rect", { class: "selection", x: start[0], y: start[1], width: 0, height: 0 }, svg);
    event.preventDefault();
  });
  window.addEventListener("mousemove", (event) => {
    if (!start) return;
    const p = local(event);
    band.setAttribute("x", Math.min(p[0], start[0]));
    band.setAttribute("y", Math.min(p[1], start[1]));
    band.setAttribute("width", Math.abs(p[0] - start[0]));
    band.setAttribute("height", Math.abs(p[1] - start[1]));
  });
  window.addEventListener("mouseup", (event) => {
    if (!start) return;
    const p = local(event), a = toUnits(start), b = toUnits(p);
    const wide = Math.abs(p[0] - start[0]) > 4 && Math.abs(p[1] - start[1]) > 4;
    start = null;
    if (wide) view = { x: [Math.min(a[0], b[0]), Math.max(a[0], b[0])], y: [Math.min(a[1], b[1]), Math.max(a[1], b[1])] };
    draw();
  });
  svg.addEventListener("wheel", (event) => {
    event.preventDefault();
    const c = toUnits(local(event)), v = view || extent(shown());
    const f = event.deltaY < 0 ? 0.8 : 1.25;
    view = { x: v.x.map((u) => c[0] + (u - c[0]) * f), y: v.y.map((u) => c[1] + (u - c[1]) * f) };
    draw();
  }, { passive: false });

  // The chart saved (as an SVG or a PDF file): a copy with a legend of the solvers shown, laid
  // out as svg_chart.py lays out the static figures'.
  function legendInto(copy) {
    const entries = shown(), texts = entries.map((e) => e.s.label + " (" + e.c.runs + " runs)");
    const widest = Math.max(0, ...texts.map((t) => t.length));
    const width = Math.max(COLUMN_MIN, SAMPLE + 12 + CHAR_WIDTH * widest);
    const columns = Math.max(1, Math.min(LEGEND_COLUMNS, texts.length, Math.floor((W - LEFT) / width)));
    const rows = Math.ceil(texts.length / columns), columnWidth = (W - LEFT) / columns;
    const total = H + LEGEND_ROW * rows + 6;
    copy.setAttribute("viewBox", "0 0 " + W + " " + total);
    copy.setAttribute("height", total);
    const g = el("g", { class: "legend" }, copy);
    entries.forEach((e, n) => {
      const x = LEFT + columnWidth * Math.floor(n / rows), y = H + 11 + 18 * (n % rows);
      const line = el("line", { class: "line", x1: x, x2: x + SAMPLE, y1: y, y2: y, stroke: e.style.color }, g);
      if (e.style.dash) line.setAttribute("stroke-dasharray", e.style.dash);
      const mark = markerPath(e.style.marker, x + SAMPLE / 2, y);
      if (mark) el("path", { class: "marker", d: mark, fill: e.style.color }, g);
      el("text", { x: x + SAMPLE + 6, y: y + 4 }, g).textContent = texts[n];
    });
  }
  chartFiles.buttons(document.getElementById("downloads"), () => key().replace("|", "-"), () => {
    const copy = chartFiles.chartCopy(svg);
    legendInto(copy);
    return copy;
  });

  for (const name in data.x) option(xSelect, name, data.x[name]);
  for (const name in data.y) option(ySelect, name, data.y[name]);
  xSelect.value = data.initial[0];
  ySelect.value = data.initial[1];
  for (const s of [xSelect, ySelect]) s.addEventListener("change", () => { view = null; draw(); });
  document.getElementById("reset").addEventListener("click", () => { view = null; draw(); });
  document.getElementById("explorer").hidden = false;
  draw();
})();
