// The create and edit forms' "Advanced" parts: the UTM builder's live preview of the final URL
// and tag autocomplete for the tag after the last comma. The server does the same merge
// (links/services/utm.py), so without this script the form still works; it only shows less.
(function () {
  "use strict";

  var UTM = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"];

  // Python's quote(value, safe=""): encodeURIComponent leaves !'()* alone, quote does not.
  function quote(value) {
    return encodeURIComponent(value).replace(/[!'()*]/g, function (c) {
      return "%" + c.charCodeAt(0).toString(16).toUpperCase();
    });
  }

  function unquotePlus(value) {
    try {
      return decodeURIComponent(value.replace(/\+/g, " "));
    } catch (e) {
      return value;
    }
  }

  // As the form's _with_scheme: people paste example.com/page.
  function withScheme(value) {
    value = value.trim();
    var host = value.split("/", 1)[0];
    if (value && value.indexOf("://") < 0 && host.indexOf(".") >= 0 && value.indexOf(" ") < 0) {
      return "https://" + value;
    }
    return value;
  }

  // merge_utm: the query kept as written, a given key replaced where it first stands (its
  // repeats dropped), new keys after it in UTM order, the #fragment last.
  function mergeUtm(url, utm) {
    var keys = UTM.filter(function (key) { return utm[key]; });
    if (!keys.length) return url;
    var hashAt = url.indexOf("#");
    var fragment = hashAt >= 0 ? url.slice(hashAt) : "";
    var rest = hashAt >= 0 ? url.slice(0, hashAt) : url;
    var queryAt = rest.indexOf("?");
    var base = queryAt >= 0 ? rest.slice(0, queryAt) : rest;
    var query = queryAt >= 0 ? rest.slice(queryAt + 1) : "";
    var segments = [];
    var placed = {};
    (query ? query.split("&") : []).forEach(function (segment) {
      var key = unquotePlus(segment.split("=", 1)[0]);
      if (keys.indexOf(key) >= 0) {
        if (!placed[key]) segments.push(key + "=" + quote(utm[key]));
        placed[key] = true;
      } else {
        segments.push(segment);
      }
    });
    keys.forEach(function (key) {
      if (!placed[key]) segments.push(key + "=" + quote(utm[key]));
    });
    return base + "?" + segments.join("&") + fragment;
  }

  function setUpPreview(form) {
    var longUrl = form.querySelector("[name=long_url]");
    var output = form.querySelector("[data-utm-preview]");
    var row = form.querySelector("[data-utm-preview-row]");
    if (!longUrl || !output || !row) return;
    var inputs = form.querySelectorAll("[data-utm]");
    function update() {
      var utm = {};
      inputs.forEach(function (input) { utm[input.dataset.utm] = input.value.trim(); });
      var url = withScheme(longUrl.value);
      var any = UTM.some(function (key) { return utm[key]; });
      row.hidden = !(url && any);
      output.textContent = url && any ? mergeUtm(url, utm) : "";
    }
    longUrl.addEventListener("input", update);
    inputs.forEach(function (input) { input.addEventListener("input", update); });
    update();
  }

  // A <datalist> completes a whole value: offer "earlier, tags, <name>" for the last tag.
  function setUpTags(form) {
    var input = form.querySelector("[data-tags-input]");
    var list = input && document.getElementById(input.getAttribute("list"));
    if (!list) return;
    var names = (list.dataset.tagNames || "").split(",").filter(Boolean);
    function update() {
      var cut = input.value.lastIndexOf(",");
      var before = cut >= 0 ? input.value.slice(0, cut + 1) + " " : "";
      var taken = input.value.slice(0, cut + 1).split(",").map(function (name) {
        return name.trim().toLowerCase();
      });
      list.replaceChildren();
      names.forEach(function (name) {
        if (taken.indexOf(name.toLowerCase()) >= 0) return;
        var option = document.createElement("option");
        option.value = before + name;
        list.appendChild(option);
      });
    }
    input.addEventListener("input", update);
  }

  document.querySelectorAll("form").forEach(function (form) {
    setUpPreview(form);
    setUpTags(form);
  });
})();
