// Injected by browser.sh into a test copy of a report page (never into the
// page itself: its CSP forbids scripts). After the page has loaded and its
// fonts are ready it measures the rendered diagram and writes one line of
// JSON into a pre element with the id gr-test-result, appended to the body,
// which browser.sh reads back from chromium --dump-dom. Characters that HTML serialisation would escape are
// written as \uXXXX so the JSON survives the dump unchanged.
(function () {
  "use strict";
  var TOLERANCE_PX = 0.5;

  function box(el) {
    var b = el.getBoundingClientRect();
    return { left: b.left, top: b.top, right: b.right, bottom: b.bottom,
             width: b.width, height: b.height };
  }
  function round(v) { return Math.round(v * 100) / 100; }
  function overlap(a, b) { // the intersection's width and height, 0 when apart
    return { x: Math.min(a.right, b.right) - Math.max(a.left, b.left),
             y: Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) };
  }
  function distinct(list) {
    var seen = {}, out = [];
    list.forEach(function (v) { if (!seen[v]) { seen[v] = true; out.push(v); } });
    return out;
  }

  function labels(result) {
    var all = [];
    document.querySelectorAll("svg.gr-diagram").forEach(function (svg, si) {
      var frame = box(svg);
      svg.querySelectorAll("text.label").forEach(function (t) {
        var b = box(t);
        var item = { svg: si, text: t.textContent.trim(), box: b };
        all.push(item);
        if (b.width <= 0 || b.height <= 0) result.empty_labels.push(item.text);
        var o = overlap(b, frame);
        if (o.x < b.width - TOLERANCE_PX || o.y < b.height - TOLERANCE_PX)
          result.clipped.push({ text: item.text, svg: si,
                                box: [round(b.left), round(b.top), round(b.right), round(b.bottom)],
                                frame: [round(frame.left), round(frame.top), round(frame.right), round(frame.bottom)] });
      });
    });
    for (var i = 0; i < all.length; i++)
      for (var j = i + 1; j < all.length; j++) {
        var o = overlap(all[i].box, all[j].box);
        if (o.x > TOLERANCE_PX && o.y > TOLERANCE_PX)
          result.overlaps.push({ a: all[i].text, b: all[j].text, x_px: round(o.x), y_px: round(o.y) });
      }
    result.labels = all.length;
  }

  function gpus(result) {
    var nodes = [], rows = [], every = [];
    document.querySelectorAll("[data-gpu]").forEach(function (el) {
      var id = el.getAttribute("data-gpu");
      every.push(id);
      if (!el.closest("svg.gr-diagram")) rows.push(id);
    });
    document.querySelectorAll("svg.gr-diagram g.node.gpu").forEach(function (g) {
      nodes.push(g.hasAttribute("data-gpu") ? g.getAttribute("data-gpu") : "");
    });
    result.gpu_nodes = nodes;            // one entry per diagram GPU node
    result.gpu_rows = distinct(rows);    // outside the diagram: the table
    result.gpus = distinct(every);
  }

  // A fleet's page: its node rows, and the rows with a value marked odd;
  // a marked cell drawn with its row's plain background is not marked to a
  // reader, whatever its class says.
  function fleet(result) {
    var rows = [], odd = [], unmarked = [], cells = 0;
    document.querySelectorAll("tr[data-node]").forEach(function (tr) {
      var name = tr.getAttribute("data-node");
      rows.push(name);
      var plain = null;
      tr.querySelectorAll("td:not([class])").forEach(function (td) {
        if (plain === null) plain = getComputedStyle(td).backgroundColor;
      });
      tr.querySelectorAll("td.odd").forEach(function (td) {
        cells++;
        if (odd.indexOf(name) < 0) odd.push(name);
        if (plain !== null && getComputedStyle(td).backgroundColor === plain)
          unmarked.push(name + ": " + td.textContent.trim());
      });
    });
    result.node_rows = rows;
    result.odd_nodes = odd;
    result.odd_unmarked = unmarked;
    result.odd_cells = cells;
  }

  function measure() {
    var result = { diagrams: document.querySelectorAll("svg.gr-diagram").length,
                   labels: 0, empty_labels: [], clipped: [], overlaps: [] };
    try {
      labels(result);
      gpus(result);
      fleet(result);
    } catch (e) {
      result.error = String(e);
    }
    var pre = document.createElement("pre");
    pre.id = "gr-test-result";
    pre.textContent = JSON.stringify(result).replace(/[<>&\u007f-\uffff]/g, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
    document.body.appendChild(pre);
  }

  window.addEventListener("load", function () {
    document.fonts.ready.then(measure, measure);
  });
})();
