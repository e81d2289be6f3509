// The keys step through a board's positions: arrows one turn, Home and End to the start
// and the last turn. The links do the same without script.
document.addEventListener("keydown", function (event) {
  var link = { ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last" }[event.key];
  var target = link && document.getElementById(link);
  if (target && !event.altKey && !event.ctrlKey && !event.metaKey && !event.shiftKey) {
    window.location = target.href;
  }
});
