/*
 * Draws every chart of the page with Chart.js (served from /static/chart.umd.js). Each chart's
 * spec is in a <script type="application/json" class="chart-spec" data-canvas="<canvas id>">
 * element written by the server; no inline script, so the page runs under script-src 'self'.
 * The same numbers are in the table beside each chart, so nothing is lost without JavaScript.
 *
 * Colours: a group keeps one colour on every chart and page. Its label is hashed into a fixed
 * palette (readable on the light and the dark theme); "other (n)" and "(untagged)"-like labels
 * have fixed greys. When two groups of one page hash to the same colour, the one later in
 * alphabetical order takes the next free colour (so the choice depends on the labels only).
 * Axis and legend colours come from the theme (CSS custom properties) and follow it when it
 * changes (the `cloudtally:theme` event of theme.js).
 *
 * A chart whose spec carries `hrefs` / `labelHrefs` opens the report behind a bar, slice or day on
 * click (the table beside or below it has the same links for the keyboard).
 */
(function () {
  'use strict';

  // Mid-tones with at least 3:1 contrast against both the light and the dark surface.
  var PALETTE = ['#3b6fd4', '#e07b00', '#16956f', '#d0455a', '#8d5fd3', '#1797b8', '#c2528f', '#6d951c', '#9c6b30', '#b39700'];
  var OTHER = '#7d8896';
  var NONE = '#a3acb8';
  var OTHER_LABEL = /^other( \(\d+\))?$/;

  function fnv1a(text) {
    var h = 0x811c9dc5;
    for (var i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h;
  }

  function fixedGrey(label) {
    if (OTHER_LABEL.test(label)) return OTHER;
    // "(untagged)", "(none)", "(unknown)": no value of the grouping.
    if (/^\(.*\)$/.test(label)) return NONE;
    return null;
  }

  /** label -> colour for every group label of the page (see the header). */
  function assignColours(labels) {
    var colours = {};
    var taken = {};
    var sorted = labels.filter(function (l, i) { return labels.indexOf(l) === i && fixedGrey(l) === null; }).sort();
    sorted.forEach(function (label) {
      var start = fnv1a(label) % PALETTE.length;
      var pick = start;
      for (var k = 0; k < PALETTE.length; k++) {
        var at = (start + k) % PALETTE.length;
        if (!taken[at]) { pick = at; break; }
      }
      taken[pick] = true;
      colours[label] = PALETTE[pick];
    });
    return function (label) { return fixedGrey(label) || colours[label] || PALETTE[fnv1a(label) % PALETTE.length]; };
  }

  function withAlpha(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + ((n >> 16) & 255) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }

  /** A theme colour as the browser resolves it (the custom properties hold light-dark() pairs). */
  function resolved(probe, name, fallback) {
    probe.style.color = fallback;
    probe.style.color = 'var(' + name + ')';
    return getComputedStyle(probe).color || fallback;
  }

  function themeColours() {
    var probe = document.createElement('span');
    probe.hidden = true;
    document.body.appendChild(probe);
    var theme = {
      text: resolved(probe, '--text', '#1f2933'),
      muted: resolved(probe, '--muted', '#5f6b7a'),
      grid: resolved(probe, '--chart-grid', '#dde2e8'),
      surface: resolved(probe, '--surface', '#ffffff'),
    };
    probe.remove();
    return theme;
  }

  /** Series named by group (several datasets) are coloured by group; one series by its labels (doughnut) or the first colour. */
  function groupLabels(spec) {
    if (spec.type === 'doughnut') return spec.labels;
    return spec.datasets.length > 1 ? spec.datasets.map(function (d) { return d.label; }) : [];
  }

  function formatValue(value, spec) {
    if (value === null || value === undefined) return 'no value';
    var digits = Math.abs(value) >= 10 ? 2 : 4;
    var text = value.toLocaleString('en-US', { minimumFractionDigits: spec.currency ? Math.min(2, digits) : 0, maximumFractionDigits: digits });
    return spec.valueLabel ? text + ' ' + spec.valueLabel : text;
  }

  function datasetsFor(spec, colourOf, theme) {
    return spec.datasets.map(function (d, i) {
      var own = spec.datasets.length > 1 ? colourOf(d.label) : PALETTE[0];
      if (spec.type === 'doughnut') {
        return {
          label: d.label,
          data: d.data,
          backgroundColor: spec.labels.map(function (l) { return colourOf(l); }),
          borderColor: theme.surface,
          borderWidth: 2,
        };
      }
      if (spec.type === 'line') {
        return {
          label: d.label,
          data: d.data,
          borderColor: own,
          backgroundColor: withAlpha(own, 0.15),
          fill: spec.stacked === true,
          pointRadius: spec.labels.length > 60 ? 0 : 2,
          borderWidth: 2,
          tension: 0.15,
        };
      }
      // Stacked bars: a zero draws nothing (null), every other value at least 4 px, with a
      // surface-coloured edge between segments, so small ones stay visible.
      var data = spec.stacked ? d.data.map(function (v) { return v === 0 ? null : v; }) : d.data;
      return {
        label: d.label,
        data: data,
        backgroundColor: own,
        borderColor: spec.stacked ? theme.surface : own,
        borderWidth: spec.stacked ? 1 : 0,
        minBarLength: spec.stacked ? 4 : 0,
        skipNull: true,
      };
    });
  }

  function tooltipFor(spec) {
    return {
      callbacks: {
        label: function (item) {
          var name = spec.type === 'doughnut' ? item.label : item.dataset.label;
          var text = name + ': ' + formatValue(item.raw, spec);
          if (spec.type === 'doughnut') {
            var total = item.dataset.data.reduce(function (n, v) { return n + (v || 0); }, 0);
            if (total > 0) text += ' (' + ((100 * (item.raw || 0)) / total).toFixed(1) + '%)';
          }
          return text;
        },
        footer: function (items) {
          if (!spec.stacked || items.length < 2) return '';
          var total = items.reduce(function (n, it) { return n + (it.raw || 0); }, 0);
          return 'Total: ' + formatValue(total, spec);
        },
      },
    };
  }

  /** Room for a (rotated) label along a horizontal axis, in pixels. */
  var LABEL_ROOM = 16;

  /**
   * Every n-th label of a crowded axis: the server's step (more than 40 points), or a larger one
   * when the chart is too narrow for every label (a phone); the note under the chart says which.
   */
  function labelStep(chart, spec) {
    var step = spec.axisStep || 1;
    if (spec.type === 'doughnut' || spec.horizontal) return step;
    var room = Math.max(1, Math.floor((chart.width * 0.85) / LABEL_ROOM));
    return Math.max(step, Math.ceil(spec.labels.length / room));
  }

  function ordinal(n) {
    var s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' })[n % 10] || 'th';
    return n + s;
  }

  /** The note under a chart whose axis is thinned for its width (the server writes the one for many points). */
  function updateNote(chart, spec) {
    var note = document.getElementById(chart.canvas.id + '-note');
    if (!note || note.getAttribute('data-server') === 'true') return;
    var step = labelStep(chart, spec);
    note.hidden = step <= 1;
    note.textContent = step <= 1 ? '' : 'At this width the axis names every ' + ordinal(step) + ' of the ' + spec.labels.length + ' points; each one is in the table and in the chart\'s tooltip.';
  }

  /**
   * Where a click at `event` leads: the bar or slice under it (spec.hrefs, by dataset and label),
   * else the column's label (spec.labelHrefs: a day's cost report); null when nowhere.
   */
  function hrefAt(chart, spec, event) {
    if (!spec.hrefs && !spec.labelHrefs) return null;
    var hit = chart.getElementsAtEventForMode(event, 'nearest', { intersect: true }, false)[0];
    if (hit && spec.hrefs && spec.hrefs[hit.datasetIndex] && spec.hrefs[hit.datasetIndex][hit.index]) return spec.hrefs[hit.datasetIndex][hit.index];
    if (!spec.labelHrefs || spec.type === 'doughnut') return null;
    var column = chart.getElementsAtEventForMode(event, 'index', { intersect: false }, false)[0];
    return column ? spec.labelHrefs[column.index] || null : null;
  }

  function configFor(spec, colourOf, theme) {
    var horizontal = spec.horizontal === true;
    var options = {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      onResize: function (chart) { updateNote(chart, spec); },
      onClick: function (event, elements, chart) {
        var href = hrefAt(chart, spec, event);
        if (href) window.location.assign(href);
      },
      onHover: function (event, elements, chart) { chart.canvas.style.cursor = hrefAt(chart, spec, event) ? 'pointer' : ''; },
      color: theme.text,
      borderColor: theme.grid,
      plugins: {
        legend: { display: spec.type === 'doughnut' || spec.datasets.length > 1, position: 'bottom', labels: { color: theme.text } },
        title: { display: false },
        tooltip: tooltipFor(spec),
      },
    };
    if (spec.type !== 'doughnut') {
      var labelAxis = {
        stacked: spec.stacked === true,
        grid: { color: theme.grid },
        // Every label, rotated when needed; or deliberately every n-th (the page says so under the chart).
        ticks: {
          color: theme.text,
          autoSkip: false,
          maxRotation: 60,
          minRotation: 0,
          callback: function (value, index) { return index % labelStep(this.chart, spec) === 0 ? this.getLabelForValue(value) : ''; },
        },
      };
      var valueAxis = {
        stacked: spec.stacked === true,
        beginAtZero: true,
        grid: { color: theme.grid },
        ticks: { color: theme.muted },
        title: { display: Boolean(spec.valueLabel), text: spec.valueLabel || '', color: theme.muted },
      };
      options.indexAxis = horizontal ? 'y' : 'x';
      options.interaction = { mode: 'index', intersect: false, axis: horizontal ? 'y' : 'x' };
      options.scales = horizontal ? { x: valueAxis, y: labelAxis } : { x: labelAxis, y: valueAxis };
    }
    return { type: spec.type, data: { labels: spec.labels, datasets: datasetsFor(spec, colourOf, theme) }, options: options };
  }

  var drawn = [];

  function draw(element, colourOf, theme) {
    var canvas = document.getElementById(element.getAttribute('data-canvas'));
    if (!canvas) throw new Error('chart canvas not found: ' + element.getAttribute('data-canvas'));
    var spec = JSON.parse(element.textContent);
    // Horizontal bars: a row per label, so the box grows with them.
    if (spec.horizontal) canvas.parentElement.style.height = Math.max(280, 24 * spec.labels.length + 90) + 'px';
    // Chart.getChart(canvas) returns this instance, for scripts and tests that need it.
    var chart = new window.Chart(canvas, configFor(spec, colourOf, theme));
    drawn.push({ chart: chart, spec: spec });
    updateNote(chart, spec);
    canvas.closest('figure').classList.add('chart-drawn');
  }

  function specs() {
    return Array.prototype.slice.call(document.querySelectorAll('script.chart-spec[type="application/json"]'));
  }

  var colourOf = null;

  function drawAll() {
    if (typeof window.Chart !== 'function') throw new Error('Chart.js did not load (/static/chart.umd.js)');
    var elements = specs();
    var labels = [];
    elements.forEach(function (el) { labels.push.apply(labels, groupLabels(JSON.parse(el.textContent))); });
    colourOf = assignColours(labels);
    var theme = themeColours();
    elements.forEach(function (el) { draw(el, colourOf, theme); });
  }

  /** On paper: the light theme's colours whatever the screen shows. */
  var PRINT_THEME = { text: '#1f2933', muted: '#56606d', grid: '#d5dae0', surface: '#ffffff' };

  /** New theme: the same charts with the theme's text, grid and edge colours. */
  function retheme(theme) {
    drawn.forEach(function (d) {
      var config = configFor(d.spec, colourOf, theme);
      d.chart.options = config.options;
      d.chart.data.datasets = config.data.datasets;
      d.chart.update('none');
    });
  }

  document.addEventListener('cloudtally:theme', function () { retheme(themeColours()); });
  // Printing: light colours, redrawn at the paper's size; the screen's again afterwards.
  window.addEventListener('beforeprint', function () {
    retheme(PRINT_THEME);
    drawn.forEach(function (d) { d.chart.resize(); });
  });
  window.addEventListener('afterprint', function () { retheme(themeColours()); });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll);
  else drawAll();
})();
