// Arrow keys step through a board's moves: the links do the same without script.
document.addEventListener("keydown", function (event) {
  var link = { ArrowLeft: "back", ArrowRight: "forward" }[event.key];
  var target = link && document.getElementById(link);
  if (target && !event.altKey && !event.ctrlKey && !event.metaKey) { window.location = target.href; }
});
