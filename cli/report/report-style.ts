/** CSS shared by warpwatch's self-contained HTML pages (demo report, advise page): inline, no web fonts. */
export const REPORT_STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; font-size: 12.5px; }
th, td { white-space: nowrap; padding: .25rem .55rem; text-align: right; border-bottom: 1px solid #eee; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
.grid { display: flex; flex-wrap: wrap; gap: 1rem; } .note { color: #555; font-size: 12.5px; }
figure { margin: 0; } figcaption { font-size: 12px; color: #555; max-width: 640px; }`;
