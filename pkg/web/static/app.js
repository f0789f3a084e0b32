// Keeps the page live: the server sends the page's <main> again, rendered, whenever
// something on it changes in the cluster. EventSource reconnects by itself, with the id
// of the last event it got; the server then sends what changed meanwhile.
"use strict";
const main = document.querySelector("main[data-events]");
if (main && window.EventSource) {
  const live = document.getElementById("live");
  const events = new EventSource(main.dataset.events);
  events.addEventListener("update", (e) => { main.innerHTML = e.data; });
  events.addEventListener("open", () => { live.className = "live"; live.textContent = "live"; });
  events.addEventListener("error", () => { live.className = "live off"; live.textContent = "reconnecting"; });
}
