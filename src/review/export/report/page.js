(function () {
  "use strict";
  var box = document.getElementById("search");
  var count = document.getElementById("search-count");
  var steps = null;
  var texts = null;
  var hits = [];
  var at = -1;
  var timer = 0;
  function index() {
    if (steps) { return; }
    steps = Array.prototype.slice.call(document.querySelectorAll("article.step"));
    texts = steps.map(function (s) { return s.textContent.toLowerCase(); });
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
    var folded = step.querySelectorAll("details");
    for (var i = 0; i < folded.length; i++) { folded[i].open = true; }
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
  document.getElementById("unfold").addEventListener("click", function () {
    var all = document.querySelectorAll("details.obs");
    for (var i = 0; i < all.length; i++) { all[i].open = true; }
  });
}());
