//! The page's inline style sheet, and the extra styles of pages with topology cases.

/// Styles of the topology graphs and tables, on pages that have them.
pub(super) const TOPOLOGY_CSS: &str = "td.warn { color: #a32a00; }
h4 { font-size: 0.95em; margin: 16px 0 4px; }
";

pub(super) const CSS: &str = "
:root { color-scheme: light; }
body { font-family: system-ui, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif;
  color: #1a1a1a; background: #fff; margin: 0; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.02em; margin: 22px 0 8px; }
.sub { color: #555; margin: 0 0 16px; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 0.85em;
  background: #e3f1e3; color: #1d5c1d; }
.status.bad { background: #fbe3d6; color: #8a2b00; }
.env { display: grid; grid-template-columns: max-content 1fr; gap: 3px 18px; margin: 0;
  padding: 12px 16px; background: #f6f7f9; border: 1px solid #dde1e6; border-radius: 6px; }
.env dt { font-weight: 600; color: #444; }
.env dd { margin: 0; overflow-wrap: anywhere; }
figure { margin: 12px 0 24px; overflow-x: auto; }
figcaption { color: #555; font-size: 0.9em; margin-top: 4px; max-width: 900px; }
svg.chart { max-width: 100%; height: auto; display: block; font-family: inherit; }
svg.chart text { fill: #222; }
svg.chart .alabel { font-weight: 600; }
.tw { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d5d9de; padding: 4px 10px; }
thead th { background: #f0f2f5; }
td.n, th.n { text-align: right; white-space: nowrap; }
td.l, th.l { text-align: left; }
td.fail { color: #a32a00; font-weight: 600; }
tbody th { text-align: left; font-weight: 600; background: #fafbfc; white-space: nowrap; }
tbody th.grp { vertical-align: top; background: #f0f2f5; }
ul.items li { margin: 3px 0; }
code { white-space: nowrap; font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.92em; }
.note { color: #555; }
code.cmd { white-space: pre-wrap; overflow-wrap: anywhere; }
.finding { border: 1px solid #dde1e6; border-left: 5px solid #0072B2; border-radius: 6px;
  padding: 4px 16px 8px; margin: 14px 0; background: #fbfcfd; }
.finding.warning { border-left-color: #D55E00; }
.finding h3 { margin: 10px 0 6px; }
.finding p { margin: 6px 0; max-width: 980px; }
.sev { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 0.8em;
  font-weight: 600; background: #e1eef8; color: #004d80; vertical-align: 1px; }
.sev.warning { background: #fbe3d6; color: #8a2b00; }
ul.ev { columns: 3 240px; margin: 6px 0; padding-left: 18px; font-variant-numeric: tabular-nums; }
ul.ev li { break-inside: avoid; }
section.triage { border: 1px solid #e8c9b5; border-left: 5px solid #D55E00; border-radius: 6px;
  padding: 2px 16px 6px; margin: 14px 0 8px; background: #fffaf6; }
section.triage h2 { margin: 8px 0 4px; border: none; }
ol.triage li { margin: 6px 0; max-width: 980px; }
ol.triage .fix { color: #333; }
.seed { display: flex; flex-wrap: wrap; gap: 6px 34px; margin: 8px 0; padding: 10px 16px;
  background: #f6f7f9; border: 1px solid #dde1e6; border-radius: 6px;
  font-variant-numeric: tabular-nums; }
.seed div span { display: block; font-weight: 600; color: #444; font-size: 0.8em; }
.seed div b { font-size: 1.3em; font-weight: 600; }
";
