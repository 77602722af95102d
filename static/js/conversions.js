/* shorturl conversions snippet (issue #29): put it on the page a tracked short link lands on.
 *
 *   <script src="https://s.example.com/static/js/conversions.js" defer></script>
 *
 * The redirect of a link that tracks conversions adds its click id to the address
 * (?sc_cid=<32 hex digits>). This keeps it in a first-party cookie (sc_cid, 90 days,
 * SameSite=Lax, Secure on https) so that a later page (a sign-up, a checkout) still has it, and
 * window.shorturl.clickId() gives it (null when the visitor came another way). Your server sends
 * it with POST /api/v1/track/lead; nothing is sent from the browser.
 */
(function () {
  "use strict";
  var NAME = "sc_cid";
  var DAYS = 90;
  var SHAPE = /^[0-9a-f]{32}$/;

  function fromAddress() {
    var match = /[?&]sc_cid=([^&#]*)/.exec(window.location.search);
    if (!match) return null;
    var value;
    try {
      value = decodeURIComponent(match[1]).toLowerCase();
    } catch (error) {
      return null; // a malformed escape (?sc_cid=%E0) is no click id: the cookie's may still be
    }
    return SHAPE.test(value) ? value : null;
  }

  function fromCookie() {
    var parts = document.cookie ? document.cookie.split("; ") : [];
    for (var i = 0; i < parts.length; i++) {
      var pair = parts[i].split("=");
      if (pair[0] === NAME && SHAPE.test(pair[1])) return pair[1];
    }
    return null;
  }

  var clicked = fromAddress();
  if (clicked) {
    // The latest click wins: a visitor who comes back through another link is that link's.
    var secure = window.location.protocol === "https:" ? "; Secure" : "";
    document.cookie = NAME + "=" + clicked + "; Max-Age=" + DAYS * 86400 +
      "; Path=/; SameSite=Lax" + secure;
  }

  window.shorturl = window.shorturl || {};
  window.shorturl.clickId = function () {
    return fromAddress() || fromCookie();
  };
})();
