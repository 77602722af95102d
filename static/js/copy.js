// Copy buttons: <button data-copy="text" data-copy-feedback="element-id">. No dependencies.
(function () {
  "use strict";

  function fallbackCopy(text) {
    // Pages served over plain http (other than localhost) have no async clipboard API.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    }
    return fallbackCopy(text);
  }

  function report(button, message, ok) {
    var target = document.getElementById(button.getAttribute("data-copy-feedback") || "copy-feedback");
    if (target) { target.textContent = message; target.classList.toggle("error", !ok); }
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    button.textContent = ok ? "Copied!" : "Copy failed";
    window.setTimeout(function () { button.textContent = label; }, 2000);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) { return; }
    var text = button.getAttribute("data-copy");
    copy(text).then(
      function () { button.setAttribute("data-copied", text); report(button, "Copied " + text + " to the clipboard.", true); },
      function () { report(button, "Could not copy automatically; select the link and copy it by hand.", false); }
    );
  });
}());
