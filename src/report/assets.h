/* assets.h — what `anvil report` embeds in every HTML file, compiled into
 * the binary by scripts/embed-report-assets (build/gen/report_assets.c):
 * uPlot's minified bundle and style from node_modules (pinned in
 * package.json / package-lock.json, installed by scripts/install-report-deps)
 * and the report's own script (the files of src/report/js/, concatenated)
 * and style (src/report/report.css). Each array ends with a NUL not counted in its _len. */
#ifndef ANVIL_REPORT_ASSETS_H
#define ANVIL_REPORT_ASSETS_H

#include <stddef.h>

/* 1 when the build found uPlot in node_modules, else 0 (the arrays are
 * then empty and anvil report refuses, saying so). */
extern const int report_have_uplot;
extern const char report_uplot_version[];   /* "1.6.32"; "" without the bundle */
extern const unsigned char report_uplot_js[], report_uplot_css[], report_js[], report_css[];
extern const size_t report_uplot_js_len, report_uplot_css_len, report_js_len, report_css_len;

#endif
