/*
 * cloudtally tables: the copy button beside a shortened ID copies the full value. A script file
 * (the CSP allows no inline script or handler); without JavaScript the full ID is still in the
 * cell's title. The button is marked data-copied="true" (green, title "Copied") for a moment
 * after a copy, "false" when the browser refused.
 */
(function () {
  'use strict';

  function fallbackCopy(text) {
    // Outside a secure context (plain HTTP on a LAN address) there is no navigator.clipboard.
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'copy-buffer';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try {
      ok = document.execCommand('copy');
    } catch (e) {
      ok = false;
    }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        return fallbackCopy(text);
      });
    }
    return fallbackCopy(text);
  }

  document.addEventListener('click', function (event) {
    var button = event.target && event.target.closest ? event.target.closest('button.copy-button') : null;
    if (!button) return;
    event.preventDefault();
    var text = button.getAttribute('data-copy') || '';
    copy(text).then(
      function () {
        button.setAttribute('data-copied', 'true');
        button.setAttribute('title', 'Copied');
        window.setTimeout(function () {
          button.removeAttribute('data-copied');
          button.setAttribute('title', 'Copy the full ID');
        }, 1500);
      },
      function () {
        button.setAttribute('data-copied', 'false');
        button.setAttribute('title', 'Could not copy: select the ID in the tooltip instead');
      },
    );
  });
})();
