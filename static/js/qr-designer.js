// The QR designer's live preview (templates/links/qr.html): the preview follows the colours and
// error level in the form, drawn by the server (links.views.link_qr_preview), which answers 400
// with the reasons when the colours would not scan. Nothing is saved until submit; without
// JavaScript, saving shows the design (the page draws the saved one inline).
(function () {
  "use strict";
  const form = document.querySelector("[data-testid='qr-designer']");
  const holder = document.getElementById("qr-preview");
  const status = document.getElementById("qr-preview-status");
  if (!form || !holder || !status) return;
  const fields = ["foreground", "background", "error_level"];
  let latest = 0;
  let shown = "";

  function previewUrl() {
    const url = new URL(form.dataset.previewUrl, window.location.href);
    for (const name of fields) {
      const field = form.elements.namedItem(name);
      if (field) url.searchParams.set(name, field.value);
    }
    return url.toString();
  }

  function showDrawn(image, url) {
    // The drawing replaces the page's inline one (or the previous preview) once it has loaded.
    image.alt = ""; // the figure's label names it
    image.width = 290;
    image.height = 290;
    holder.replaceChildren(image);
    holder.dataset.previewState = "ok";
    holder.dataset.previewSrc = url;
    status.textContent = "Preview of your changes (not saved yet)";
    status.classList.remove("error");
  }

  async function showRefused(url, asked) {
    // Only a refused design is asked for a second time, for the reasons in its 400 answer.
    let reasons = "These settings would not make a code that scans.";
    try {
      const answer = await fetch(url, { credentials: "same-origin" });
      if (answer.status === 400) {
        reasons = Object.values(await answer.json()).flat().join(" ") || reasons;
      } else {
        reasons = "The preview could not be updated.";
      }
    } catch (error) {
      reasons = "The preview could not be updated.";
    }
    if (asked !== latest) return; // a later change is on its way
    holder.dataset.previewState = "refused";
    status.textContent = reasons;
    status.classList.add("error");
  }

  function update() {
    const url = previewUrl();
    if (url === shown) return; // "change" after "input" with the same value: drawn already
    shown = url;
    const asked = ++latest;
    // The server draws each design once: the image that loads it is the one shown.
    const image = new Image();
    image.addEventListener("load", () => {
      if (asked === latest) showDrawn(image, url);
    });
    image.addEventListener("error", () => {
      if (asked === latest) showRefused(url, asked);
    });
    image.src = url;
  }

  for (const name of fields) {
    const field = form.elements.namedItem(name);
    if (!field) continue;
    field.addEventListener("input", update);
    field.addEventListener("change", update);
  }
})();
