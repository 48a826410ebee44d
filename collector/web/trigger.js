// The form of /trigger: it sends a trigger request to the API as the
// CLI's trigger does (POST /api/trigger, JSON, with the token typed on
// the page when the API needs one), then follows the command through GET
// /api/commands/ID until its devices are done, and links to the results
// that landed. Every name and reason from the collector is shown as text,
// never as markup. A file of the collector's own, as the Content Security
// Policy runs no script written in a page.
(function () {
  const $ = (id) => document.getElementById(id);
  const form = $("trigger");
  const done = {rejected: 1, succeeded: 1, failed: 1, cancelled: 1, timed_out: 1};

  function headers() {
    const h = {}; const t = $("token");
    if (t && t.value) h["Authorization"] = "Bearer " + t.value;
    return h;
  }

  // ms is a duration as the CLI takes it (500ms, 30s, 2m, 1h, or seconds).
  function ms(s) {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(s);
    if (!m) return NaN;
    return Math.round(parseFloat(m[1]) * {ms: 1, s: 1000, m: 60000, h: 3600000}[m[2] || "s"]);
  }

  function request() {
    const kind = $("kind").value, c = parseInt($("c").value, 10), n = parseInt($("n").value || "0", 10), d = ms($("d").value);
    if (!(c >= 1)) throw new Error("-c: want 1 or more connections");
    if (!(n >= 0)) throw new Error("-n: want 0 or more requests");
    if (n === 0 && !(d > 0)) throw new Error("-d " + $("d").value + ": want a duration such as 10s or 2m, or -n requests");
    const spec = {url: $("url").value.trim(), method: "GET", connections: c, keepalive: true, timeout_ms: 2000, repeat: 1};
    if (n > 0) spec.requests = n; else spec.duration_ms = d;
    const req = {device: $("device").value.trim(), spec: spec};
    if ($("fleet").value.trim()) req.fleet = $("fleet").value.trim();
    if ($("target").value.trim()) req.target_device = $("target").value.trim();
    if (kind === "repeat") {
      spec.repeat = parseInt($("repeat").value, 10);
      if (!(spec.repeat >= 1)) throw new Error("runs: want 1 or more");
    } else if (kind === "capacity") {
      if (!$("slo").value.trim()) throw new Error("capacity needs an SLO, e.g. p99<50ms,errors<0.1%");
      req.capacity = {slo: $("slo").value.trim()};
    }
    return req;
  }

  function item(text) { const li = document.createElement("li"); li.textContent = text; return li; }

  async function follow(t, since) {
    let st;
    try {
      const r = await fetch("/api/commands/" + encodeURIComponent(t.cmd_id), {headers: headers()});
      if (!r.ok) throw new Error(await r.text());
      st = await r.json();
    } catch (e) {
      $("err").textContent = "command " + t.cmd_id + ": " + e.message;
      return;
    }
    const last = {};
    for (const e of st.events || []) last[e.fleet + "/" + e.device + " " + e.cmd_id] = e;
    const ul = $("status"); ul.replaceChildren();
    if (st.pair) ul.append(item("run across two devices: " + st.pair.state + (st.pair.reason ? ": " + st.pair.reason : "")));
    for (const k of Object.keys(last).sort()) {
      const e = last[k];
      ul.append(item(e.fleet + "/" + e.device + (e.cmd_id === t.cmd_id ? "" : " (watch)") + ": " + e.state + (e.reason ? ": " + e.reason : "")));
    }
    const res = $("results"); res.replaceChildren();
    for (const row of st.results || []) {
      const a = document.createElement("a");
      a.href = "/runs/" + encodeURIComponent(row.id);
      a.className = "result";
      a.textContent = "result " + row.id + " of " + row.fleet + "/" + row.device;
      res.append(a, document.createElement("br"));
    }
    let over;
    if (st.pair) {
      over = st.pair.state === "succeeded" ? (st.results || []).length > 0 : st.pair.state === "failed" || st.pair.state === "cancelled";
    } else {
      const ended = (t.devices || []).filter((d) => { const e = last[d + " " + t.cmd_id]; return e && done[e.state]; });
      const good = ended.filter((d) => last[d + " " + t.cmd_id].state === "succeeded").length;
      over = ended.length >= (t.devices || []).length && (st.results || []).length >= good;
    }
    if (!over && Date.now() - since < 6 * 3600 * 1000) setTimeout(() => follow(t, since), 1500);
  }

  form.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    $("err").textContent = ""; $("sent").textContent = ""; $("status").replaceChildren(); $("results").replaceChildren();
    let req;
    try { req = request(); } catch (e) { $("err").textContent = e.message; return; }
    const h = headers(); h["Content-Type"] = "application/json";
    $("send").disabled = true;
    try {
      const r = await fetch("/api/trigger", {method: "POST", headers: h, body: JSON.stringify(req)});
      if (!r.ok) { $("err").textContent = "trigger: " + await r.text(); return; }
      const t = await r.json();
      $("sent").textContent = "command " + t.cmd_id + " sent to " + (t.devices || []).join(", ") +
        (t.pair ? " (" + t.pair.loader + " loads " + t.pair.target + ", whose result it is)" : "");
      $("sent").dataset.cmd = t.cmd_id;
      follow(t, Date.now());
    } catch (e) {
      $("err").textContent = "trigger: " + e.message;
    } finally {
      $("send").disabled = false;
    }
  });
})();
