// Saving a page's charts as files (a run's page, sbpbench/outputs/page.py, and the overview,
// sbpbench/outputs/overview.py), inlined before page.js: a "download SVG" and a "download PDF"
// button in the caption of each static figure (figure[data-name]), and chartFiles.buttons for
// page.js's interactive chart.
// The SVG file is a copy of the chart with the charts' style (#chart-style) inside. The PDF file
// is drawn from that copy by the small writer below: one page of PDF 1.4, in vectors, its text in
// the standard Helvetica font (not embedded). It draws what svg_chart.py and page.js draw: rect,
// line, circle, path (M, L, H, V, C, Z and circular arcs A, absolute or relative), text (with its
// text-anchor), g (its clip-path a rectangle's clipPath) and the transforms translate, rotate and
// matrix, each element in the style the browser computes for it (fill, stroke, stroke-width,
// stroke-dasharray, opacity, fill-opacity, stroke-opacity, font-size). No library: a browser
// writes a PDF only by printing the page.

const chartFiles = (function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";

  // A chart as a file of its own: a copy with the charts' style inside, the zoom's selection left out.
  function chartCopy(node) {
    const copy = node.cloneNode(true);
    copy.setAttribute("xmlns", NS);
    copy.removeAttribute("style");
    const style = document.createElementNS(NS, "style");
    style.textContent = document.getElementById("chart-style").textContent;
    copy.insertBefore(style, copy.firstChild);
    copy.querySelectorAll(".selection").forEach((n) => n.remove());
    return copy;
  }

  // --- the PDF writer ---

  // a number as PDF writes it: at most `digits` decimals, never an exponent
  const f = (v, digits = 2) => String(Math.round(v * 10 ** digits) / 10 ** digits);

  // Helvetica's widths (thousandths of the font size) of the characters 32 to 126 (its AFM file),
  // to place a text by its anchor; other characters: those of WIDE (by WinAnsi code), else 556
  const WIDTHS = [278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667,
    722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722,
    667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556,
    222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334,
    260, 334, 584];
  const WIDE = { 130: 222, 132: 333, 133: 1000, 137: 1000, 140: 1000, 145: 222, 146: 222, 147: 333,
    148: 333, 149: 350, 151: 1000, 153: 1000, 156: 944, 176: 400, 177: 584, 183: 278, 215: 584 };
  // the characters WinAnsiEncoding (Windows-1252) places at 128 to 159, in order ("\0": none)
  const WIN_ANSI = "\u20ac\0\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\0\u017d\0"
    + "\0\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\0\u017e\u0178";
  // a character's code in WinAnsiEncoding: "?" for one it lacks
  function code(ch) {
    const c = ch.charCodeAt(0), k = ch === "\0" ? -1 : WIN_ANSI.indexOf(ch);
    return k >= 0 ? 128 + k : (c >= 32 && c <= 126) || (c >= 160 && c <= 255) ? c : 63;
  }
  const textWidth = (text) => Array.from(text).map(code)
    .reduce((w, c) => w + (c <= 126 ? WIDTHS[c - 32] : WIDE[c] || 556), 0) / 1000;
  // a text as a PDF string, one byte a character
  const pdfString = (text) => "(" + Array.from(text).map(code)
    .map((c) => (c === 40 || c === 41 || c === 92 ? "\\" : "") + String.fromCharCode(c)).join("") + ")";

  // a colour the browser computed ("rgb(31, 119, 180)") as PDF's three fractions; null for none
  function rgb(value) {
    const m = /rgba?\(([^)]*)\)/.exec(value || "");
    const p = m ? m[1].split(/[\s,/]+/).filter(Boolean).map(Number) : [];
    if (p.length < 3 || p[3] === 0) return null;
    return p.slice(0, 3).map((v) => f(v / 255, 3)).join(" ");
  }

  // the Bezier curves of a circular arc of radius r from (x1, y1) to (x2, y2), with SVG's flags
  function arc(x1, y1, r, large, sweep, x2, y2) {
    const mx = (x1 - x2) / 2, my = (y1 - y2) / 2, d2 = mx * mx + my * my;
    if (d2 === 0 || r === 0) return [];
    r = Math.max(Math.abs(r), Math.sqrt(d2));
    const k = (large === sweep ? -1 : 1) * Math.sqrt(Math.max(0, r * r - d2) / d2);
    const cx = (x1 + x2) / 2 + k * my, cy = (y1 + y2) / 2 - k * mx;
    const a1 = Math.atan2(y1 - cy, x1 - cx);
    let delta = Math.atan2(y2 - cy, x2 - cx) - a1;
    if (sweep && delta < 0) delta += 2 * Math.PI;
    if (!sweep && delta > 0) delta -= 2 * Math.PI;
    const n = Math.max(1, Math.ceil(Math.abs(delta) / (Math.PI / 2) - 1e-9)), t = delta / n;
    const kappa = 4 / 3 * Math.tan(t / 4), out = [];
    for (let i = 0; i < n; i++) {
      const a = a1 + i * t, b = a + t;
      const p = [cx + r * Math.cos(a) - kappa * r * Math.sin(a), cy + r * Math.sin(a) + kappa * r * Math.cos(a),
        cx + r * Math.cos(b) + kappa * r * Math.sin(b), cy + r * Math.sin(b) - kappa * r * Math.cos(b),
        cx + r * Math.cos(b), cy + r * Math.sin(b)];
      out.push(p.map((v) => f(v)).join(" ") + " c");
    }
    return out;
  }

  // an SVG path's data as PDF's path operators
  function pathOps(d) {
    const tokens = d.match(/[MmLlHhVvCcAaZz]|[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/g) || [];
    const out = [];
    let i = 0, cmd = "", x = 0, y = 0, x0 = 0, y0 = 0;
    const num = () => Number(tokens[i++]);
    const at = (px, py, op) => { x = px; y = py; out.push(f(x) + " " + f(y) + " " + op); };
    while (i < tokens.length) {
      if (/^[a-z]$/i.test(tokens[i])) cmd = tokens[i++];  // else the last command's numbers again
      const C = cmd.toUpperCase(), dx = cmd === C ? 0 : x, dy = cmd === C ? 0 : y;
      if (C === "Z") {
        out.push("h");
        [x, y, cmd] = [x0, y0, ""];
      } else if (C === "M") {
        at(num() + dx, num() + dy, "m");
        [x0, y0, cmd] = [x, y, cmd === C ? "L" : "l"];  // further pairs are lines
      } else if (C === "L") at(num() + dx, num() + dy, "l");
      else if (C === "H") at(num() + dx, y, "l");
      else if (C === "V") at(x, num() + dy, "l");
      else if (C === "C") {
        const p = [num() + dx, num() + dy, num() + dx, num() + dy, num() + dx, num() + dy];
        out.push(p.map((v) => f(v)).join(" ") + " c");
        [x, y] = [p[4], p[5]];
      } else if (C === "A") {
        const r = num();
        i += 2;  // the y radius and the rotation: only circular arcs are drawn
        const large = num(), sweep = num(), ex = num() + dx, ey = num() + dy;
        out.push(...arc(x, y, r, large, sweep, ex, ey));
        [x, y] = [ex, ey];
      } else break;  // a command this writer does not draw
    }
    return out.join(" ");
  }

  const attr = (node, name) => Number(node.getAttribute(name) || 0);

  // the outline of a shape as PDF's path operators; "" for an element that is not a shape
  function shape(node) {
    const a = (name) => attr(node, name);
    if (node.localName === "rect") return [a("x"), a("y"), a("width"), a("height")].map((v) => f(v)).join(" ") + " re";
    if (node.localName === "line") return f(a("x1")) + " " + f(a("y1")) + " m " + f(a("x2")) + " " + f(a("y2")) + " l";
    if (node.localName === "circle") {
      const r = a("r"), cx = a("cx"), cy = a("cy");
      return pathOps(`M${cx - r},${cy}A${r},${r} 0 1,0 ${cx + r},${cy}A${r},${r} 0 1,0 ${cx - r},${cy}Z`);
    }
    return node.localName === "path" ? pathOps(node.getAttribute("d") || "") : "";
  }

  // an element's transform attribute as PDF's cm operators
  function transform(value, out) {
    for (const [, name, args] of (value || "").matchAll(/(\w+)\s*\(([^)]*)\)/g)) {
      const v = args.split(/[\s,]+/).filter(Boolean).map(Number);
      const cm = (m) => out.push(m.map((n) => f(n, 4)).join(" ") + " cm");
      if (name === "matrix") cm(v);
      else if (name === "translate") cm([1, 0, 0, 1, v[0], v[1] || 0]);
      else if (name === "rotate") {
        const r = v[0] * Math.PI / 180, c = Math.cos(r), s = Math.sin(r), cx = v[1] || 0, cy = v[2] || 0;
        cm([c, s, -s, c, cx - c * cx + s * cy, cy - s * cx - c * cy]);
      }
    }
  }

  // A shape's outline filled and stroked in its computed style (a line has no inside to fill).
  function paint(outline, isLine, s, out, page) {
    const fill = isLine ? null : rgb(s.fill);
    const width = parseFloat(s.strokeWidth) || 0, stroke = width > 0 ? rgb(s.stroke) : null;
    const alpha = [Number(s.opacity) * Number(s.fillOpacity), Number(s.opacity) * Number(s.strokeOpacity)];
    if (alpha[0] < 1 || alpha[1] < 1) {  // a graphics state of the page's for each pair of opacities
      let k = page.alphas.findIndex((a) => a[0] === alpha[0] && a[1] === alpha[1]);
      if (k < 0) k = page.alphas.push(alpha) - 1;
      out.push("/GS" + k + " gs");
    }
    if (fill) out.push(fill + " rg");
    if (stroke) {
      const dash = s.strokeDasharray === "none" ? [] : s.strokeDasharray.split(/[\s,]+/).map(parseFloat);
      out.push(stroke + " RG " + f(width) + " w [" + dash.map((v) => f(v)).join(" ") + "] 0 d");
    }
    out.push(outline + " " + (fill ? (stroke ? "B" : "f") : (stroke ? "S" : "n")));
  }

  // One element, and a g's children, as PDF operators into `out`; `page` keeps the clip paths'
  // rectangles by id and the opacities used (the page's graphics states).
  function draw(node, s, out, page) {
    out.push("q");
    transform(node.getAttribute("transform"), out);
    const clip = /url\(["']?#([^"')]+)/.exec(node.getAttribute("clip-path") || "");
    if (clip && page.clips[clip[1]]) out.push(shape(page.clips[clip[1]]) + " W n");
    if (node.localName === "g") walk(node, out, page);
    else if (node.localName === "text") {
      const size = parseFloat(s.fontSize) || 12, text = node.textContent;
      const shift = { middle: 0.5, end: 1 }[s.textAnchor] || 0;
      out.push((rgb(s.fill) || "0 0 0") + " rg BT /F1 " + f(size) + " Tf 1 0 0 -1 "
        + f(attr(node, "x") - shift * size * textWidth(text)) + " " + f(attr(node, "y")) + " Tm "
        + pdfString(text) + " Tj ET");
    } else {
      const outline = shape(node);
      if (outline) paint(outline, node.localName === "line", s, out, page);
    }
    out.push("Q");
  }

  function walk(parent, out, page) {
    for (const node of parent.children) {
      const s = getComputedStyle(node);
      if (["style", "defs", "clipPath", "title"].includes(node.localName) || s.display === "none"
          || s.visibility === "hidden") continue;
      draw(node, s, out, page);
    }
  }

  // A chart (an svg element, such as chartCopy gives) as the bytes of a one-page PDF file of its
  // viewBox's size, one point a pixel. The chart is put in the page for a moment, for the browser
  // to compute its style.
  function pdf(svg) {
    const holder = document.createElement("div");
    holder.style.cssText = "position:absolute;left:-10000px;top:0";
    holder.appendChild(svg);
    document.body.appendChild(holder);
    const [, , w, h] = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
    const page = { clips: {}, alphas: [] };
    for (const c of svg.querySelectorAll("clipPath")) page.clips[c.id] = c.querySelector("rect");
    const out = ["1 0 0 -1 0 " + f(h) + " cm"];  // SVG's y axis points down, PDF's up
    try { walk(svg, out, page); } finally { holder.remove(); }
    const content = out.join("\n");
    const states = page.alphas.map((a, k) => "/GS" + k + " << /ca " + f(a[0], 3) + " /CA " + f(a[1], 3) + " >>");
    const objects = [
      "<< /Type /Catalog /Pages 2 0 R >>",
      "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
      "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 " + f(w) + " " + f(h) + "] /Contents 4 0 R "
        + "/Resources << /Font << /F1 5 0 R >> /ExtGState << " + states.join(" ") + " >> >> >>",
      "<< /Length " + content.length + " >>\nstream\n" + content + "\nendstream",
      "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ];
    let file = "%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n";  // the second line: bytes above 127, a binary file
    const offsets = objects.map((body, k) => {
      const at = file.length;
      file += (k + 1) + " 0 obj\n" + body + "\nendobj\n";
      return at;
    });
    const xref = file.length;
    file += "xref\n0 " + (objects.length + 1) + "\n0000000000 65535 f \n"
      + offsets.map((o) => String(o).padStart(10, "0") + " 00000 n \n").join("")
      + "trailer\n<< /Size " + (objects.length + 1) + " /Root 1 0 R >>\nstartxref\n" + xref + "\n%%EOF\n";
    return Uint8Array.from(file, (ch) => ch.charCodeAt(0));  // every character is one byte
  }

  // --- the buttons ---

  function offer(blob, name) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
  }

  // A "download SVG" and a "download PDF" button, appended to `parent`: name() gives the file's
  // name (without its extension), copy() the chart to save (chartCopy's, and more).
  function buttons(parent, name, copy) {
    for (const kind of ["SVG", "PDF"]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "download";
      b.textContent = "download " + kind;
      b.addEventListener("click", () => offer(kind === "SVG"
        ? new Blob([new XMLSerializer().serializeToString(copy())], { type: "image/svg+xml" })
        : new Blob([pdf(copy())], { type: "application/pdf" }), name() + "." + kind.toLowerCase()));
      parent.appendChild(b);
    }
  }

  for (const figure of document.querySelectorAll("figure[data-name]")) {
    buttons(figure.querySelector("figcaption"), () => figure.getAttribute("data-name"),
            () => chartCopy(figure.querySelector("svg")));
  }
  return { chartCopy: chartCopy, buttons: buttons, pdf: pdf };
})();
