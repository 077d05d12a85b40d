/*
 * Light, dark or automatic (the system's prefers-color-scheme) colours. Loaded in <head> without
 * defer so the chosen theme applies before the page paints; the choice is kept in localStorage
 * and set as <html data-theme="light|dark"> (no attribute: automatic, the stylesheet follows the
 * system). The toggle in the top bar is a group of three buttons, shown only with JavaScript.
 * Charts listen for the `cloudtally:theme` event to take the new colours.
 */
(function () {
  'use strict';

  var KEY = 'cloudtally-theme';
  var CHOICES = ['light', 'dark', 'auto'];
  var root = document.documentElement;

  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return CHOICES.indexOf(value) >= 0 ? value : 'auto';
    } catch (e) {
      return 'auto'; // storage refused (privacy settings): automatic
    }
  }

  function apply(choice) {
    if (choice === 'auto') root.removeAttribute('data-theme');
    else root.setAttribute('data-theme', choice);
    var buttons = document.querySelectorAll('.theme-toggle button[data-theme-choice]');
    for (var i = 0; i < buttons.length; i++) buttons[i].setAttribute('aria-pressed', String(buttons[i].getAttribute('data-theme-choice') === choice));
    document.dispatchEvent(new CustomEvent('cloudtally:theme', { detail: { choice: choice } }));
  }

  function choose(choice) {
    try {
      if (choice === 'auto') window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, choice);
    } catch (e) {
      // Not remembered, still applied to this page.
    }
    apply(choice);
  }

  root.classList.add('js');
  var initial = stored();
  if (initial !== 'auto') root.setAttribute('data-theme', initial);

  document.addEventListener('DOMContentLoaded', function () {
    var toggle = document.querySelector('.theme-toggle');
    if (toggle) {
      toggle.hidden = false;
      toggle.addEventListener('click', function (event) {
        var button = event.target.closest('button[data-theme-choice]');
        if (button) choose(button.getAttribute('data-theme-choice'));
      });
    }
    apply(stored());
  });

  // Automatic: follow the system when it switches.
  if (window.matchMedia) {
    var query = window.matchMedia('(prefers-color-scheme: dark)');
    var onChange = function () { if (stored() === 'auto') apply('auto'); };
    if (query.addEventListener) query.addEventListener('change', onChange);
  }
})();
