/** CSS shared by warpwatch's self-contained HTML pages (demo report, advise page): inline, no web fonts. */
export const REPORT_STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
.table-scroll { max-width: 100%; overflow-x: auto; }
#results th { white-space: normal; vertical-align: bottom; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 12.5px; }
th, td { white-space: nowrap; padding: .25rem .55rem; text-align: right; border-bottom: 1px solid #eee; }
th.text, td.text, th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
th.num, td.num { text-align: right; }
#headlines { list-style: none; padding: 0; } #headlines li { margin: .5rem 0; padding: .4rem .7rem; border-left: 4px solid #d62728; background: #fafafa; }
#headlines .idle { font-size: 1.15rem; } #headlines .todo { color: #333; font-size: 13px; }
.grid { display: flex; flex-wrap: wrap; gap: 1rem; } .note { color: #555; font-size: 12.5px; }
figure { margin: 0; max-width: 100%; overflow-x: auto; } figcaption { font-size: 12px; color: #555; max-width: 640px; }`;
