(function () {
  "use strict";
  var box = document.getElementById("search");
  var count = document.getElementById("search-count");
  var folded = {};
  var steps = null;
  var texts = null;
  var hits = [];
  var at = -1;
  var timer = 0;
  // A run's folded observations, read from its data block the first time one is needed.
  function foldedOf(run) {
    if (!(run in folded)) {
      var block = document.querySelector("script.obs-data[data-run=\"" + run + "\"]");
      folded[run] = block ? JSON.parse(block.textContent) : {};
    }
    return folded[run];
  }
  function foldedText(fold) {
    var run = fold.closest("section.run").getAttribute("data-run");
    return foldedOf(run)[fold.getAttribute("data-obs")] || "";
  }
  // Show (or hide) a folded observation: its text goes in as text, never as markup.
  function toggle(fold, show) {
    var shown = fold.nextElementSibling;
    if (!(shown && shown.classList.contains("unfolded"))) {
      if (show === false) { return; }
      shown = document.createElement("pre");
      shown.className = "obs unfolded";
      shown.textContent = foldedText(fold);
      fold.parentNode.insertBefore(shown, fold.nextSibling);
      fold.classList.add("shown");
      return;
    }
    var hide = show === undefined ? !shown.hidden : !show;
    shown.hidden = hide;
    fold.classList.toggle("shown", !hide);
  }
  document.addEventListener("click", function (e) {
    var fold = e.target.closest ? e.target.closest("p.fold") : null;
    if (fold) { toggle(fold); }
  });
  document.addEventListener("keydown", function (e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.classList && e.target.classList.contains("fold")) {
      e.preventDefault();
      toggle(e.target);
    }
  });
  function index() {
    if (steps) { return; }
    steps = Array.prototype.slice.call(document.querySelectorAll("article.step"));
    texts = steps.map(function (s) {
      var fold = s.querySelector("p.fold");
      var extra = fold && !fold.classList.contains("shown") ? "\n" + foldedText(fold) : "";
      return (s.textContent + extra).toLowerCase();
    });
  }
  function search() {
    timer = 0;
    index();
    var q = box.value.trim().toLowerCase();
    var before = document.querySelectorAll("article.step.hit");
    for (var b = 0; b < before.length; b++) { before[b].classList.remove("hit"); }
    hits = [];
    if (q !== "") {
      for (var i = 0; i < steps.length; i++) {
        if (texts[i].indexOf(q) !== -1) { steps[i].classList.add("hit"); hits.push(steps[i]); }
      }
    }
    at = -1;
    count.textContent = q === "" ? "" : hits.length + (hits.length === 1 ? " step" : " steps");
  }
  function go(by) {
    if (timer) { clearTimeout(timer); search(); }
    if (hits.length === 0) { return; }
    at = (at + by + hits.length) % hits.length;
    var step = hits[at];
    var fold = step.querySelector("p.fold");
    if (fold) { toggle(fold, true); }
    step.scrollIntoView({ block: "start" });
    count.textContent = (at + 1) + " of " + hits.length + " steps";
  }
  box.addEventListener("input", function () {
    if (timer) { clearTimeout(timer); }
    timer = setTimeout(search, 250);
  });
  box.addEventListener("keydown", function (e) {
    if (e.key === "Enter") { e.preventDefault(); go(e.shiftKey ? -1 : 1); }
  });
  document.getElementById("search-next").addEventListener("click", function () { go(1); });
  document.getElementById("search-prev").addEventListener("click", function () { go(-1); });
  // Opened at a run or a step (`report.html#r139`): the browser scrolls there before the steps
  // around it are laid out (each is sized by an estimate until it is drawn), so the place it
  // lands on may hold other steps, or nothing yet. Once two frames have drawn them, go there again.
  function toTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target) { return; }
    target.scrollIntoView({ block: "start" });
    requestAnimationFrame(function () {
      requestAnimationFrame(function () { target.scrollIntoView({ block: "start" }); });
    });
  }
  window.addEventListener("hashchange", toTarget);
  toTarget();
  document.getElementById("unfold").addEventListener("click", function () {
    var all = document.querySelectorAll("p.fold");
    for (var i = 0; i < all.length; i++) { toggle(all[i], true); }
  });
}());
