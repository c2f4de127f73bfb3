// RenderReport: the page around a report's data (app/report.h says why it is built so).
#include <string>

#include "app/report.h"

namespace kforge {
namespace {

constexpr const char kHead[] = R"page(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>kforge report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1180px;color:#1d232b;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d8dde3;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px}.muted{color:#68717c}.pass{color:#17733a;font-weight:600}.fail{color:#b42318;font-weight:600}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0}dl.kv dt{color:#68717c}dl.kv dd{margin:0}
table{border-collapse:collapse}td,th{padding:3px 7px;border:1px solid #e3e7eb;text-align:left;vertical-align:top}
th{background:#f5f7f9;font-weight:600}table.grid td.cell{min-width:64px;text-align:center;font:12px ui-monospace,monospace}
.legend span{display:inline-block;padding:1px 8px;margin-right:6px;border-radius:3px;font-size:12px}
.round{border:1px solid #e3e7eb;border-radius:6px;padding:8px 12px;margin:10px 0;background:#fcfcfd}
pre{background:#f5f7f9;padding:8px;overflow:auto;font:12px/1.4 ui-monospace,monospace;max-height:420px;margin:4px 0}
pre .add{color:#17733a;background:#e9f7ee;display:block}pre .del{color:#b42318;background:#fdecea;display:block}
pre .hunk{color:#5b4ab5;display:block}summary{cursor:pointer}.guard{font:12px ui-monospace,monospace}
#kforge-errors{color:#b42318;white-space:pre-wrap}svg text{font:11px system-ui,sans-serif}
</style></head>
<body>
<pre id="kforge-errors" hidden></pre>
<main id="report"></main>
<script type="application/json" id="kforge-data">)page";

constexpr const char kTail[] = R"page(</script>
<script>
(function () {
  "use strict";
  var errors = document.getElementById("kforge-errors");
  function fail(text) { errors.textContent += text + "\n"; errors.hidden = false; }
  window.addEventListener("error", function (e) { fail(e.message || "script error"); });
  function el(tag, attrs) {
    var n = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === "text") n.textContent = attrs[k];
      else if (k === "class") n.className = attrs[k];
      else n.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) if (arguments[i] != null) n.append(arguments[i]);
    return n;
  }
  function kv(obj) {
    var dl = el("dl", {class: "kv"});
    Object.keys(obj).forEach(function (k) {
      var v = obj[k];
      if (v === null || v === undefined || (typeof v === "object" && !Array.isArray(v))) return;
      dl.append(el("dt", {text: k.replace(/_/g, " ")}), el("dd", {text: Array.isArray(v) ? v.join(", ") : String(v)}));
    });
    return dl;
  }
  function short(h) { return h ? String(h).slice(0, 10) : "-"; }
  function ratioOf(c) {
    var r = 0;
    (c.outputs || []).forEach(function (o) { r = Math.max(r, Number(o.worst_tolerance_ratio) || 0); });
    return r;
  }
  var NUMERIC = {wrong_result: 1, precision: 1, nan_inf: 1, unwritten_output: 1};
  function cellColour(c) {
    var r = ratioOf(c);
    if (!c.failure_class) return "hsl(140,55%," + (94 - 22 * Math.min(r, 1)) + "%)";
    if (NUMERIC[c.failure_class]) return "hsl(4,75%," + Math.max(48, 88 - 10 * Math.log10(1 + r)) + "%)";
    return "hsl(275,45%,80%)";
  }

  function verdictSection(root, v, label) {
    root.append(el("h2", {text: "Verdict: " + (label || "")}));
    var passed = !!v.passed;
    root.append(el("p", {}, el("span", {class: passed ? "pass" : "fail", text: passed ? "PASS" : "FAIL"}),
                   " level " + (v.level || "-") + (v.failure_class ? ", " + v.failure_class : "") +
                   (v.message ? ": " + v.message : "")));
    var c = v.candidate || {}, t = v.task || {};
    root.append(kv({task: t.name, candidate: c.path, candidate_sha256: short(c.sha256), backend: v.backend,
                    seed: v.seed, sandbox: v.sandbox}));
    var cases = v.cases || [];
    if (!cases.length) return;
    var dists = [], rows = [], byKey = {};
    cases.forEach(function (k) {
      var row = (k.set || "") + " " + (k.name || "");
      if (dists.indexOf(k.distribution) < 0) dists.push(k.distribution);
      if (rows.indexOf(row) < 0) rows.push(row);
      byKey[row + "\u0000" + k.distribution] = k;
    });
    root.append(el("h3", {text: "Cases: shape \u00d7 input distribution (" + cases.length + " trials)"}));
    var table = el("table", {class: "grid", id: "verdict-grid"});
    var head = el("tr", {}, el("th", {text: "set / shape"}));
    dists.forEach(function (d) { head.append(el("th", {text: d})); });
    table.append(head);
    rows.forEach(function (row) {
      var tr = el("tr", {}, el("th", {text: row}));
      dists.forEach(function (d) {
        var k = byKey[row + "\u0000" + d];
        if (!k) { tr.append(el("td", {class: "empty"})); return; }
        var r = ratioOf(k);
        var td = el("td", {class: "cell " + (k.failure_class ? "fail" : "pass"), "data-failure": k.failure_class || "none",
                           title: (k.message || "passed") + " | worst |error| / allowed = " + r.toPrecision(3) +
                                  " | params " + JSON.stringify(k.params || {})});
        td.style.background = cellColour(k);
        td.textContent = k.failure_class && !NUMERIC[k.failure_class] ? k.failure_class : r === 0 ? "0" : r.toPrecision(2);
        tr.append(td);
      });
      table.append(tr);
    });
    root.append(el("div", {style: "overflow-x:auto"}, table));
    root.append(el("p", {class: "legend muted"}, "cell: worst |error| / allowed over the outputs; ",
                   el("span", {text: "pass", style: "background:hsl(140,55%,80%)"}),
                   el("span", {text: "numeric failure (darker: larger error)", style: "background:hsl(4,75%,70%)"}),
                   el("span", {text: "crash, timeout, integrity", style: "background:hsl(275,45%,80%)"})));
    if ((v.integrity || []).length) {
      root.append(el("h3", {text: "Integrity findings"}));
      var ul = el("ul", {id: "integrity"});
      v.integrity.forEach(function (f) {
        ul.append(el("li", {text: f.check + (f.line ? " (line " + f.line + ")" : "") + ": " + f.detail}));
      });
      root.append(ul);
    }
  }

  function forensicsSection(root, f) {
    root.append(el("h2", {text: "Forensics"}));
    var box = el("div", {id: "forensics"});
    ["symptoms", "notes", "failing_distributions", "passing_distributions", "patterns"].forEach(function (k) {
      if (!Array.isArray(f[k]) || !f[k].length) return;
      box.append(el("h3", {text: k.replace(/_/g, " ")}));
      var ul = el("ul");
      f[k].forEach(function (x) { ul.append(el("li", {text: typeof x === "string" ? x : JSON.stringify(x)})); });
      box.append(ul);
    });
    box.append(kv(f));
    root.append(box);
  }

  function diffBlock(text) {
    var pre = el("pre", {class: "diff"});
    String(text).split("\n").forEach(function (line) {
      var cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
      pre.append(el("span", {class: cls, text: line + "\n"}));
    });
    return pre;
  }

  function timelineSection(root, timeline) {
    var rounds = timeline.filter(function (r) { return r.round > 0; }).length;
    root.append(el("h2", {text: "Repair timeline (" + rounds + (rounds === 1 ? " round)" : " rounds)")}));
    var box = el("div", {id: "timeline"});
    timeline.forEach(function (r) {
      var div = el("div", {class: "round", "data-round": r.round});
      div.append(el("h3", {text: r.round === 0 ? "Initial candidate" : "Round " + r.round +
                                                    (r.attempt ? " (attempt " + r.attempt + ")" : "")}));
      if (r.requested && r.requested.suggestion) div.append(el("p", {class: "muted", text: "asked: " + r.requested.suggestion}));
      if (r.turn_error) div.append(el("p", {class: "fail", text: "the repairer's turn failed: " + r.turn_error}));
      (r.proposals || []).forEach(function (p) {
        var d = el("details", {class: "proposal"});
        d.append(el("summary", {text: "proposal " + short(p.candidate) + " by " + (p.origin || "?") +
                                      (p.description ? ": " + p.description : "")}));
        d.append(p.diff ? diffBlock(p.diff) : el("p", {class: "muted", text: "identical to the previous candidate"}));
        div.append(d);
      });
      if ((r.validations || []).length) {
        var t = el("table", {class: "validations"}, el("tr", {}, el("th", {text: "candidate"}), el("th", {text: "verdict"}),
                   el("th", {text: "level"}), el("th", {text: "score"}), el("th", {text: "from"}), el("th", {text: "message"})));
        r.validations.forEach(function (v) {
          t.append(el("tr", {}, el("td", {text: short(v.candidate)}),
                      el("td", {class: v.passed ? "pass" : "fail", text: v.passed ? "pass" : v.failure}),
                      el("td", {text: v.level}), el("td", {text: Number(v.score).toFixed(2)}),
                      el("td", {text: v.origin || ""}), el("td", {text: v.message || ""})));
        });
        div.append(t);
      }
      var dec = r.decision;
      if (dec) {
        var ul = el("ul", {class: "decision"});
        if (dec.adopted) ul.append(el("li", {text: "adopted " + short(dec.adopted)}));
        if (dec.rollback) ul.append(el("li", {class: "rollback", text: "rolled back to the best snapshot"}));
        (dec.guards || []).forEach(function (g) {
          ul.append(el("li", {class: "guard", text: (g.guard || "") + ": " + (g.action || "") + (g.reason ? " (" + g.reason + ")" : "")}));
        });
        if (dec.stop) ul.append(el("li", {text: "stopped: " + dec.stop + (dec.stop_message ? " (" + dec.stop_message + ")" : "")}));
        div.append(ul);
      }
      box.append(div);
    });
    root.append(box);
  }

  function rooflineSection(root, b) {
    var rl = b.roofline;
    root.append(el("h2", {text: "Roofline"}));
    if (!rl || !rl.ceilings || !(b.flops > 0) || !(b.bytes > 0) || !b.candidate) {
      root.append(el("p", {class: "muted", text: "no ceilings measured for this device (kforge device --calibrate)"}));
      return;
    }
    var bw = rl.ceilings.copy_bytes_per_s, peak = rl.ceilings.fp32_flops_per_s;
    var ai = b.flops / b.bytes, ridge = peak / bw;
    var points = [{label: "candidate", ai: ai, perf: b.flops / (b.candidate.median_us * 1e-6), colour: "#b42318"}];
    if (b.baseline && b.baseline.median_us > 0)
      points.push({label: "baseline", ai: ai, perf: b.flops / (b.baseline.median_us * 1e-6), colour: "#1f5fbf"});
    var x0 = Math.min(ai, ridge) / 30, x1 = Math.max(ai, ridge) * 30;
    var y1 = peak * 3, y0 = Math.min(bw * x0, points.reduce(function (m, p) { return Math.min(m, p.perf); }, peak)) / 3;
    var W = 640, H = 380, L = 70, B = 40, T = 14, R = 16;
    function sx(x) { return L + (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) * (W - L - R); }
    function sy(y) { return H - B - (Math.log10(y) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0)) * (H - T - B); }
    var NS = "http://www.w3.org/2000/svg";
    function s(tag, attrs, text) {
      var n = document.createElementNS(NS, tag);
      for (var k in attrs) n.setAttribute(k, attrs[k]);
      if (text != null) n.textContent = text;
      return n;
    }
    var svg = s("svg", {width: W, height: H, id: "roofline", viewBox: "0 0 " + W + " " + H});
    svg.append(s("rect", {x: L, y: T, width: W - L - R, height: H - T - B, fill: "#fcfcfd", stroke: "#d8dde3"}));
    var path = "";
    for (var i = 0; i <= 60; i++) {
      var x = Math.pow(10, Math.log10(x0) + i / 60 * (Math.log10(x1) - Math.log10(x0)));
      path += (i ? "L" : "M") + sx(x).toFixed(1) + "," + sy(Math.min(peak, bw * x)).toFixed(1);
    }
    svg.append(s("path", {d: path, fill: "none", stroke: "#1d232b", "stroke-width": 2, class: "ceiling"}));
    svg.append(s("text", {x: sx(x0) + 6, y: sy(bw * x0 * 1.6) - 4}, "memory " + (bw / 1e12).toFixed(2) + " TB/s"));
    svg.append(s("text", {x: sx(ridge) + 6, y: sy(peak) - 5}, "fp32 " + (peak / 1e12).toFixed(1) + " TFLOP/s"));
    points.forEach(function (p, i) {
      svg.append(s("circle", {cx: sx(p.ai), cy: sy(p.perf), r: 5, fill: p.colour, class: "point", "data-label": p.label}));
      // The candidate's label above its point, the baseline's below: they often nearly coincide.
      svg.append(s("text", {x: sx(p.ai) + 8, y: sy(p.perf) + (i === 0 ? -6 : 16), fill: p.colour},
                   p.label + " " + (p.perf / 1e9).toFixed(1) + " GFLOP/s"));
    });
    svg.append(s("text", {x: L + (W - L - R) / 2 - 90, y: H - 8}, "arithmetic intensity (FLOP/byte, log)"));
    svg.append(s("text", {x: 12, y: T + 10}, "FLOP/s (log)"));
    root.append(svg);
    root.append(kv({bound: rl.bound, fraction_of_roofline: (100 * rl.fraction).toFixed(1) + "%",
                    baseline_fraction: (100 * rl.baseline_fraction).toFixed(1) + "%",
                    candidate_median_us: b.candidate.median_us, speedup_over_baseline: b.speedup}));
  }

  try {
    var data = JSON.parse(document.getElementById("kforge-data").textContent);
    var root = document.getElementById("report");
    document.title = data.title;
    root.append(el("h1", {text: data.title}), el("p", {class: "muted", text: "written by " + data.generator}));
    var sum = el("section", {id: "summary"});
    sum.append(kv(data.summary || {}));
    root.append(sum);
    if (data.verdict) verdictSection(root, data.verdict, data.verdict_label);
    if (data.forensics) forensicsSection(root, data.forensics);
    if (data.kind === "run") timelineSection(root, data.timeline || []);
    if (data.bench) rooflineSection(root, data.bench);
    document.body.setAttribute("data-rendered", "ok");
  } catch (e) {
    fail(String(e && e.stack || e));
  }
})();
</script>
</body></html>
)page";

}  // namespace

namespace {

/// Integers a browser's numbers cannot hold exactly (seeds are 64-bit) become strings.
nlohmann::json ExactInBrowser(nlohmann::json j) {
  constexpr uint64_t kMaxSafe = (uint64_t{1} << 53) - 1;
  if (j.is_structured()) {
    for (auto& v : j) v = ExactInBrowser(std::move(v));
  } else if (j.is_number_unsigned() && j.get<uint64_t>() > kMaxSafe) {
    return std::to_string(j.get<uint64_t>());
  } else if (j.is_number_integer() && !j.is_number_unsigned() &&
             (j.get<int64_t>() > static_cast<int64_t>(kMaxSafe) ||
              j.get<int64_t>() < -static_cast<int64_t>(kMaxSafe))) {
    return std::to_string(j.get<int64_t>());
  }
  return j;
}

}  // namespace

std::string RenderReport(const nlohmann::json& data) {
  const std::string json = ExactInBrowser(data).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(json.size() + 64);
  for (char c : json) {  // only inside JSON strings: the block cannot be ended or turned into markup
    if (c == '<')
      safe += "\\u003c";
    else if (c == '>')
      safe += "\\u003e";
    else if (c == '&')
      safe += "\\u0026";
    else
      safe += c;
  }
  return kHead + safe + kTail;
}

}  // namespace kforge
