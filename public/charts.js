/*
 * Draws every chart of the page with Chart.js (served from /static/chart.umd.js). Each chart's
 * spec is in a <script type="application/json" class="chart-spec" data-canvas="<canvas id>">
 * element written by the server; no inline script, so the page runs under script-src 'self'.
 * The same numbers are in the table beside each chart, so nothing is lost without JavaScript.
 */
(function () {
  'use strict';

  var PALETTE = ['#2563eb', '#d97706', '#059669', '#dc2626', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#4b5563', '#ea580c', '#0d9488', '#9333ea'];

  function colour(i, alpha) {
    var hex = PALETTE[i % PALETTE.length];
    if (alpha === undefined) return hex;
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + ((n >> 16) & 255) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }

  function datasetsFor(spec) {
    return spec.datasets.map(function (d, i) {
      if (spec.type === 'doughnut') {
        return {
          label: d.label,
          data: d.data,
          backgroundColor: spec.labels.map(function (_l, j) { return colour(j); }),
          borderWidth: 1,
        };
      }
      if (spec.type === 'line') {
        return {
          label: d.label,
          data: d.data,
          borderColor: colour(i),
          backgroundColor: colour(i, 0.15),
          fill: spec.stacked === true,
          pointRadius: spec.labels.length > 60 ? 0 : 2,
          borderWidth: 2,
          tension: 0.15,
        };
      }
      return { label: d.label, data: d.data, backgroundColor: colour(i, 0.85), borderColor: colour(i), borderWidth: 1 };
    });
  }

  function configFor(spec) {
    var options = {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      plugins: {
        legend: { display: spec.type === 'doughnut' || spec.datasets.length > 1, position: 'bottom' },
        title: { display: false },
      },
    };
    if (spec.type !== 'doughnut') {
      options.interaction = { mode: 'index', intersect: false };
      options.scales = {
        x: { stacked: spec.stacked === true, ticks: { autoSkip: true, maxRotation: 0 } },
        y: {
          stacked: spec.stacked === true,
          beginAtZero: true,
          title: { display: Boolean(spec.valueLabel), text: spec.valueLabel || '' },
        },
      };
    }
    return { type: spec.type, data: { labels: spec.labels, datasets: datasetsFor(spec) }, options: options };
  }

  function draw(element) {
    var canvas = document.getElementById(element.getAttribute('data-canvas'));
    if (!canvas) throw new Error('chart canvas not found: ' + element.getAttribute('data-canvas'));
    var spec = JSON.parse(element.textContent);
    // Chart.getChart(canvas) returns this instance, for scripts and tests that need it.
    new window.Chart(canvas, configFor(spec));
    canvas.closest('figure').classList.add('chart-drawn');
  }

  function drawAll() {
    if (typeof window.Chart !== 'function') throw new Error('Chart.js did not load (/static/chart.umd.js)');
    var specs = document.querySelectorAll('script.chart-spec[type="application/json"]');
    for (var i = 0; i < specs.length; i++) draw(specs[i]);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawAll);
  else drawAll();
})();
