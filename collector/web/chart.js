// edgebench charts: small SVG line and bar charts, no dependencies.
// Every element with a data-chart attribute holding a JSON spec becomes a
// chart:
//   {"type":"line","title":"...","unit":"...","x":[...],"series":[{"name":"...","values":[...]}]}
//   {"type":"bar","title":"...","unit":"...","bars":[{"label":"...","value":1,"lo":0.9,"hi":1.1,"color":"#1f77b4"}]}
// null values are gaps (a line breaks there; a bar without lo and hi has no
// error bar). Axes begin and end on round ticks. After drawing, the
// element gets data-rendered set to the number of data points drawn.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var W = 640, H = 240, L = 56, R = 12, T = 28, B = 36;
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = el("text", Object.assign({ x: x, y: y, "font-size": 11, fill: "#333" }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function finite(v) { return typeof v === "number" && isFinite(v); }
  // niceTicks picks about n round values, a step of 1, 2 or 5 times a
  // power of ten apart, from the last at or below lo to the first at or
  // above hi, so the axis begins and ends on a tick.
  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; }
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
    var err = (hi - lo) / n / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var first = Math.floor(lo / step + 1e-9), last = Math.ceil(hi / step - 1e-9), ticks = [];
    for (var i = first; i <= last; i++) ticks.push(+(i * step).toPrecision(12));
    ticks.step = step;
    return ticks;
  }
  // decimals is how many decimals a multiple of step needs.
  function decimals(step) { return Math.max(0, -Math.floor(Math.log10(step) + 1e-9)); }
  // tickLabel writes tick v of an axis with this step exactly: 12500 is
  // "12.5k", never "13k".
  function tickLabel(v, step) {
    var a = Math.abs(v);
    if (a >= 1e6 && step >= 1e5) return (v / 1e6).toFixed(decimals(step / 1e6)) + "M";
    if (a >= 1e4 && step >= 1e3) return (v / 1e3).toFixed(decimals(step / 1e3)) + "k";
    return v.toFixed(decimals(step));
  }
  // fmt writes a data value for a tooltip.
  function fmt(v) {
    var a = Math.abs(v);
    if (a >= 1e6) return (v / 1e6).toFixed(2) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
    if (a >= 100 || v === Math.round(v)) return v.toFixed(0);
    return v.toPrecision(3);
  }
  function frame(node, spec) {
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, width: "100%", "class": "chart-svg", role: "img" });
    node.appendChild(svg);
    text(svg, L, 16, spec.title + (spec.unit ? " (" + spec.unit + ")" : ""), { "font-size": 13, "font-weight": "bold" });
    return svg;
  }
  function yAxis(svg, lo, hi) {
    var ticks = niceTicks(lo, hi, 5);
    lo = ticks[0]; hi = ticks[ticks.length - 1];
    var y = function (v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo)); };
    ticks.forEach(function (t) {
      el("line", { x1: L, x2: W - R, y1: y(t), y2: y(t), stroke: "#e5e5e5" }, svg);
      text(svg, L - 6, y(t) + 4, tickLabel(t, ticks.step), { "text-anchor": "end", "class": "tick y", "data-value": t });
    });
    return y;
  }

  function lineChart(node, spec) {
    var svg = frame(node, spec), xs = spec.x || [], n = 0;
    var lo = Infinity, hi = -Infinity;
    spec.series.forEach(function (s) { s.values.forEach(function (v) { if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }); });
    if (!isFinite(lo)) { text(svg, W / 2, H / 2, "no data", { "text-anchor": "middle" }); return 0; }
    lo = Math.min(0, lo);
    var y = yAxis(svg, lo, hi);
    // Time runs from the start of the window (0) to a round value.
    var xt = niceTicks(Math.min(0, xs.length ? xs[0] : 0), xs.length ? xs[xs.length - 1] : 1, 6);
    var x0 = xt[0], x1 = xt[xt.length - 1];
    var x = function (v) { return L + (W - L - R) * (v - x0) / (x1 - x0); };
    xt.forEach(function (t) {
      text(svg, x(t), H - B + 16, tickLabel(t, xt.step), { "text-anchor": "middle", "class": "tick x", "data-value": t });
    });
    if (spec.xunit) text(svg, W - R, H - 6, spec.xunit, { "text-anchor": "end" });
    spec.series.forEach(function (s, si) {
      var color = COLORS[si % COLORS.length], d = "", pen = false, g = el("g", { "class": "series", "data-name": s.name }, svg);
      s.values.forEach(function (v, i) {
        if (!finite(v)) { pen = false; return; }
        d += (pen ? "L" : "M") + x(xs[i]).toFixed(1) + " " + y(v).toFixed(1);
        pen = true; n++;
      });
      el("path", { d: d, fill: "none", stroke: color, "stroke-width": 1.5, "class": "line" }, g);
      if (s.values.length <= 300) {
        s.values.forEach(function (v, i) {
          if (finite(v)) {
            var c = el("circle", { cx: x(xs[i]), cy: y(v), r: 2, fill: color, "class": "pt" }, g);
            el("title", {}, c).textContent = s.name + " " + fmt(xs[i]) + ": " + fmt(v);
          }
        });
      }
      el("rect", { x: L + 8 + si * 110, y: H - 12, width: 10, height: 3, fill: color }, svg);
      text(svg, L + 22 + si * 110, H - 8, s.name);
    });
    return n;
  }

  function barChart(node, spec) {
    var svg = frame(node, spec), bars = spec.bars || [];
    var hi = -Infinity;
    bars.forEach(function (b) { [b.value, b.hi].forEach(function (v) { if (finite(v)) hi = Math.max(hi, v); }); });
    if (!isFinite(hi)) { text(svg, W / 2, H / 2, "no data", { "text-anchor": "middle" }); return 0; }
    var y = yAxis(svg, 0, hi), n = 0;
    var slot = (W - L - R) / bars.length, bw = Math.min(60, slot * 0.6);
    bars.forEach(function (b, i) {
      var cx = L + slot * (i + 0.5);
      text(svg, cx, H - B + 16, b.label, { "text-anchor": "middle" });
      if (!finite(b.value)) return;
      var r = el("rect", { x: cx - bw / 2, y: y(b.value), width: bw, height: Math.max(0, y(0) - y(b.value)),
        fill: b.color || COLORS[i % COLORS.length], "class": "bar", "data-value": b.value, "data-label": b.label }, svg);
      el("title", {}, r).textContent = b.label + ": " + fmt(b.value) + (finite(b.lo) ? " [" + fmt(b.lo) + ", " + fmt(b.hi) + "]" : "");
      n++;
      if (finite(b.lo) && finite(b.hi)) {
        var g = el("g", { "class": "err", stroke: "#222", "stroke-width": 1.2, "data-lo": b.lo, "data-hi": b.hi }, svg);
        el("line", { x1: cx, x2: cx, y1: y(b.lo), y2: y(b.hi) }, g);
        el("line", { x1: cx - 6, x2: cx + 6, y1: y(b.lo), y2: y(b.lo) }, g);
        el("line", { x1: cx - 6, x2: cx + 6, y1: y(b.hi), y2: y(b.hi) }, g);
      }
      if (b.note) text(svg, cx, y(finite(b.hi) ? b.hi : b.value) - 4, b.note, { "text-anchor": "middle", "font-weight": "bold" });
    });
    return n;
  }

  function render(node) {
    var spec;
    try { spec = JSON.parse(node.getAttribute("data-chart")); } catch (e) { node.textContent = "bad chart data"; return; }
    var n = spec.type === "bar" ? barChart(node, spec) : lineChart(node, spec);
    node.setAttribute("data-rendered", String(n));
  }
  document.querySelectorAll("[data-chart]").forEach(render);
})();
