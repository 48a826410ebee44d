// The buttons of /schedules: pause, resume and remove a schedule through
// the API, with the token typed on the page when the API needs one (the
// page itself never holds it). A file of the collector's own, as the
// Content Security Policy runs no script written in a page.
document.getElementById("schedules").addEventListener("click", async function (ev) {
  const b = ev.target.closest("button"); if (!b) return;
  const name = b.closest("tr").dataset.name, act = b.dataset.act;
  if (act === "rm" && !confirm("Remove schedule " + name + "?")) return;
  const h = {}; const t = document.getElementById("token");
  if (t && t.value) h["Authorization"] = "Bearer " + t.value;
  const u = "/api/schedules/" + encodeURIComponent(name) + (act === "rm" ? "" : "/" + act);
  const r = await fetch(u, {method: act === "rm" ? "DELETE" : "POST", headers: h});
  if (r.ok) location.reload(); else document.getElementById("err").textContent = act + " " + name + ": " + await r.text();
});
