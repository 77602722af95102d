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
  let image = null;

  function previewUrl() {
    const url = new URL(form.dataset.previewUrl, window.location.href);
    for (const name of fields) {
      const field = form.elements.namedItem(name);
      if (field) url.searchParams.set(name, field.value);
    }
    return url;
  }

  function show(url) {
    // The first change swaps the page's inline drawing for an image of the preview URL.
    if (!image) {
      image = document.createElement("img");
      image.alt = "";  // the figure's label names it
      image.width = 290;
      image.height = 290;
      holder.replaceChildren(image);
    }
    image.src = url.toString();
  }

  async function update() {
    const asked = ++latest;
    const url = previewUrl();
    let answer;
    try {
      answer = await fetch(url, { credentials: "same-origin" });
    } catch (error) {
      status.textContent = "The preview could not be updated.";
      return;
    }
    if (asked !== latest) return; // a later change is on its way
    if (answer.ok) {
      show(url);
      holder.dataset.previewState = "ok";
      holder.dataset.previewSrc = url.toString();
      status.textContent = "Preview of your changes (not saved yet)";
      status.classList.remove("error");
      return;
    }
    let reasons = "These settings would not make a code that scans.";
    try {
      const problems = await answer.json();
      reasons = Object.values(problems).flat().join(" ");
    } catch (error) {
      // keep the general sentence
    }
    holder.dataset.previewState = "refused";
    status.textContent = reasons;
    status.classList.add("error");
  }

  for (const name of fields) {
    const field = form.elements.namedItem(name);
    if (!field) continue;
    field.addEventListener("input", update);
    field.addEventListener("change", update);
  }
})();
