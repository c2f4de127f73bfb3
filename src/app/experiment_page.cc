#include "app/experiment_page.h"

#include <fmt/format.h>

#include <algorithm>

namespace kforge {
namespace {

std::string Esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

constexpr const char* kColours[] = {"#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#be185d"};

/// Pass@k against k, one line per arm.
std::string PassAtKChart(const ExperimentReport& r) {
  size_t max_k = 0;
  for (const auto& a : r.arms) max_k = std::max(max_k, a.pass_at_k.size());
  if (max_k == 0) return "<p class=muted>No finished runs yet.</p>";
  const int w = 420, h = 220, left = 40, bottom = 30;
  auto x = [&](size_t k) { return left + (max_k == 1 ? 0.0 : double(k - 1) / (max_k - 1) * (w - left - 20)); };
  auto y = [&](double v) { return (h - bottom) - v * (h - bottom - 10); };
  std::string svg = fmt::format("<svg width={} height={} role=img aria-label=\"pass@k\">", w, h);
  svg += fmt::format("<line x1={} y1={} x2={} y2={} stroke=#999 />", left, y(0), w - 10, y(0));
  svg += fmt::format("<line x1={} y1={} x2={} y2={} stroke=#999 />", left, y(0), left, y(1));
  for (double v : {0.0, 0.5, 1.0}) svg += fmt::format("<text x=4 y={:.0f}>{:.1f}</text>", y(v) + 4, v);
  for (size_t k = 1; k <= max_k; ++k) svg += fmt::format("<text x={:.0f} y={}>k={}</text>", x(k) - 8, h - 8, k);
  for (size_t a = 0; a < r.arms.size(); ++a) {
    const auto& arm = r.arms[a];
    std::string points;
    for (size_t k = 1; k <= arm.pass_at_k.size(); ++k)
      points += fmt::format("{:.1f},{:.1f} ", x(k), y(arm.pass_at_k[k - 1]));
    const char* colour = kColours[a % std::size(kColours)];
    svg += fmt::format("<polyline fill=none stroke=\"{}\" stroke-width=2 points=\"{}\" />", colour, points);
    for (size_t k = 1; k <= arm.pass_at_k.size(); ++k)
      svg += fmt::format("<circle cx={:.1f} cy={:.1f} r=3 fill=\"{}\"><title>{} pass@{} = {:.3f}</title></circle>",
                         x(k), y(arm.pass_at_k[k - 1]), colour, Esc(arm.name), k, arm.pass_at_k[k - 1]);
  }
  return svg + "</svg>";
}

/// Tokens per task, uncached and cached, one bar per arm.
std::string TokenBars(const ExperimentReport& r) {
  double most = 1;
  for (const auto& a : r.arms)
    if (a.tasks) most = std::max(most, double(a.uncached_tokens + a.cached_tokens) / a.tasks);
  std::string out = "<table><tr><th>arm</th><th>tokens per task (uncached | cached)</th><th>per success</th></tr>";
  for (const auto& a : r.arms) {
    const double unc = a.tasks ? double(a.uncached_tokens) / a.tasks : 0,
                 cac = a.tasks ? double(a.cached_tokens) / a.tasks : 0;
    out += fmt::format(
        "<tr><td>{}</td><td><svg width=320 height=14><rect width={:.1f} height=14 fill=#2563eb /><rect x={:.1f} "
        "width={:.1f} height=14 fill=#93c5fd /></svg> {:.0f} | {:.0f}</td><td>{}</td></tr>",
        Esc(a.name), 300 * unc / most, 300 * unc / most, 300 * cac / most, unc, cac,
        a.tokens_per_success() ? fmt::format("{:.0f}", *a.tokens_per_success()) : "-");
  }
  return out + "</table>";
}

/// For each pair of arms: tasks solved by both, by one only, as a split bar.
std::string Overlap(const ExperimentReport& r) {
  if (r.pairs.empty()) return "<p class=muted>One arm: nothing to overlap.</p>";
  std::string out = "<table><tr><th>a</th><th>b</th><th>solved tasks: only a | both | only b</th></tr>";
  for (const auto& p : r.pairs) {
    const int total = std::max(1, p.tasks_only_a + p.tasks_both + p.tasks_only_b);
    const double wa = 300.0 * p.tasks_only_a / total, wb = 300.0 * p.tasks_both / total,
                 wc = 300.0 * p.tasks_only_b / total;
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td><svg width=300 height=14><rect width={:.1f} height=14 fill=#2563eb />"
        "<rect x={:.1f} width={:.1f} height=14 fill=#6b7280 /><rect x={:.1f} width={:.1f} height=14 fill=#dc2626 />"
        "</svg> {} | {} | {}</td></tr>",
        Esc(p.a), Esc(p.b), wa, wa, wb, wa + wb, wc, p.tasks_only_a, p.tasks_both, p.tasks_only_b);
  }
  return out + "</table>";
}

/// Run-to-run variance from replay, for the arms that have replays ("" when none has).
std::string ReplayTable(const ExperimentReport& r) {
  std::string rows;
  for (const auto& a : r.arms) {
    if (!a.replays) continue;
    const ReplaySummary& s = *a.replays;
    std::string layers;
    for (const auto& [layer, n] : s.divergence_layers)
      layers += fmt::format("{}{} {}", layers.empty() ? "" : ", ", layer, n);
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td>"
        "<td>{:.3f}&ndash;{:.3f}</td><td>{}</td></tr>",
        Esc(a.name), Esc(fmt::format("{}", fmt::join(s.live, " "))), s.cells, s.replays, s.matched, s.outcome_changed,
        s.stopped, s.outcome_variance, s.outcome_variance_low, s.outcome_variance_high,
        Esc(layers.empty() ? "-" : layers));
  }
  if (rows.empty()) return "";
  return "<h2>Run-to-run variance from replay</h2><p class=muted>Finished cells replayed with their recorded values "
         "pinned but the live layers: what differs comes from the engine's measurement, not the model.</p>"
         "<table><tr><th>arm</th><th>live</th><th>cells</th><th>replays</th><th>same path</th>"
         "<th>outcome changed</th><th>stopped early</th><th>outcome variance</th><th>with stopped replays</th>"
         "<th>divergences</th></tr>" +
         rows + "</table>";
}

/// fast_p of each timed arm: against Model, and against torch.compile(Model) where known.
std::string FastPTable(const ExperimentReport& r) {
  std::string rows;
  for (const auto& a : r.arms) {
    if (!a.fast_p) continue;
    const FastPReport& f = *a.fast_p;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td>", Esc(a.name), f.cells, f.timing_errors);
    for (size_t i = 0; i < f.p.size(); ++i) rows += fmt::format("<td>{:.3f}</td>", f.eager[i]);
    for (size_t i = 0; i < f.p.size(); ++i)
      rows += f.compiled ? fmt::format("<td>{:.3f}</td>", (*f.compiled)[i])
                         : fmt::format("<td class=\"muted\" title=\"{}\">-</td>", Esc(f.compiled_error));
    rows += "</tr>";
  }
  if (rows.empty()) return "";
  std::string head =
      "<h2>fast_p (KernelBench cells: correct and more than p times as fast)</h2><p class=\"muted\">The speedups "
      "are each candidate's worker's own timing, by KernelBench's procedure: certified correct, timed but not "
      "certified.</p><table><tr><th>arm</th>"
      "<th>cells</th><th>not timed</th>";
  for (const char* baseline : {"Model", "torch.compile"})
    for (double p : FastPReport().p) head += fmt::format("<th>{} fast<sub>{}</sub></th>", baseline, p);
  return head + "</tr>" + rows + "</table>";
}

}  // namespace

std::string RenderExperimentPage(const ExperimentReport& r) {
  std::string page = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>kforge experiment</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#1d232b;padding:0 16px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #d8dde3}
table{border-collapse:collapse}td,th{padding:3px 7px;border:1px solid #e3e7eb;text-align:left}
th{background:#f5f7f9}.muted{color:#68717c}svg text{font:11px system-ui,sans-serif}
</style></head><body>
)";
  page += fmt::format("<h1>Experiment {}</h1><p>{} of {} cells finished{}; backend {}; {} ended in an error.</p>",
                      Esc(r.name), r.done, r.cells,
                      r.complete ? "" : " <b>(incomplete: every number covers finished cells only)</b>", Esc(r.backend),
                      r.errors);
  page +=
      "<h2>Arms</h2><table><tr><th>arm</th><th>strategy</th><th>repairer</th><th>model</th><th>endpoint</th>"
      "<th>without</th><th>runs</th><th>repaired</th><th>tasks solved</th><th>pass@1</th><th>wall h</th>"
      "<th>outcome variance</th><th>false successes</th></tr>";
  for (const auto& a : r.arms) {
    std::string without;
    for (const auto& ab : a.ablations) without += (without.empty() ? "" : ", ") + ab;
    page += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td>{}</td><td>{}/{}</td>"
        "<td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{}</td></tr>",
        Esc(a.name), Esc(a.strategy), Esc(a.repairer), Esc(a.model.empty() ? "-" : a.model),
        Esc(a.base_url.empty() ? "-" : a.base_url), Esc(without.empty() ? "-" : without), a.done, a.planned,
        a.successes, a.tasks_solved, a.tasks, a.pass_at_k.empty() ? "-" : fmt::format("{:.3f}", a.pass_at_k[0]),
        a.wall_hours, a.outcome_variance,
        a.false_success_rate
            ? fmt::format("{}/{} ({:.0f}%)", a.rejected_successes, a.checked_successes, 100 * *a.false_success_rate)
            : "-");
  }
  page += "</table><h2>Pass@k</h2>" + PassAtKChart(r);
  page += "<p>";
  for (size_t a = 0; a < r.arms.size(); ++a)
    page += fmt::format("<span style=\"color:{}\">&#9632; {}</span> ", kColours[a % std::size(kColours)],
                        Esc(r.arms[a].name));
  page += "</p><h2>Tokens</h2>" + TokenBars(r) + "<h2>Overlap of solved tasks</h2>" + Overlap(r);
  if (!r.pairs.empty()) {
    page +=
        "<h2>McNemar's exact test (Bonferroni-corrected)</h2><table><tr><th>a</th><th>b</th><th>pairs</th>"
        "<th>only a</th><th>only b</th><th>p</th><th>p (Bonferroni)</th></tr>";
    for (const auto& p : r.pairs)
      page +=
          fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4g}</td><td>{:.4g}</td></tr>",
                      Esc(p.a), Esc(p.b), p.pairs, p.only_a, p.only_b, p.p, p.p_bonferroni);
    page += "</table>";
  }
  if (!r.ablations.empty()) {
    page +=
        "<h2>Ablations</h2><table><tr><th>arm</th><th>base</th><th>tasks</th><th>pass@1 delta</th>"
        "<th>95% interval</th></tr>";
    for (const auto& a : r.ablations)
      page += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:+.3f}</td><td>[{:+.3f}, {:+.3f}]</td></tr>",
                          Esc(a.arm), Esc(a.base), a.tasks, a.pass_at_1_delta.estimate, a.pass_at_1_delta.low,
                          a.pass_at_1_delta.high);
    page += "</table>";
  }
  page += ReplayTable(r) + FastPTable(r);
  page += "<h2>Per task</h2><table><tr><th>task</th>";
  for (const auto& a : r.arms) page += "<th>" + Esc(a.name) + "</th>";
  page += "</tr>";
  for (const auto& t : r.tasks) {
    page += "<tr><td>" + Esc(t.task) + "</td>";
    for (const auto& [ok, n] : t.by_arm) page += n ? fmt::format("<td>{}/{}</td>", ok, n) : "<td>-</td>";
    page += "</tr>";
  }
  return page + "</table></body></html>\n";
}

}  // namespace kforge
