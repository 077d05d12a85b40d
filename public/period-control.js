/*
 * The overview's period control: the custom range's dates are sent only with "Custom range…"
 * (a preset with dates would ask for two periods at once), and a preset shows at once. Without
 * JavaScript the form works too: the dates are empty unless the page shows a custom range.
 */
(function () {
  'use strict';
  function wire(form) {
    var select = form.querySelector('select[name="period"]');
    var dates = Array.prototype.slice.call(form.querySelectorAll('input[type="date"]'));
    function sync() {
      var custom = select.value === 'custom';
      dates.forEach(function (d) { d.disabled = !custom; });
      return custom;
    }
    sync();
    select.addEventListener('change', function () {
      if (sync()) dates[0].focus();
      else form.requestSubmit();
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll('form.period-control'), wire);
})();
