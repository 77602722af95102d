// Tells the server the browser's time zone in a cookie, so pages show times in it until the
// person picks one in Preferences. Zone names (Europe/Paris) need no escaping. No dependencies.
(function () {
  "use strict";
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone || !/^[A-Za-z0-9_+\-\/]+$/.test(zone)) { return; }
  if (document.cookie.split("; ").indexOf("tz=" + zone) !== -1) { return; }
  var secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax" + secure;
}());
