package collector

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/collector/web"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// The trigger form of /trigger, driven in a real headless Chromium over
// the DevTools protocol (on a pipe: --remote-debugging-pipe), against a
// real collector whose devices are scripted over its broker.

// browser is a headless Chromium driven over its DevTools pipe.
type browser struct {
	t       *testing.T
	w       io.Writer
	r       *bufio.Reader
	rf      *os.File
	id      int
	session string
}

// newBrowser starts headless Chromium, or skips (fails in CI) without it,
// with one page attached.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		testenv.Missing(t, "chromium is not installed", "apt-get install chromium")
		return nil
	}
	toR, toW, err := os.Pipe() // the browser reads its commands from fd 3
	if err != nil {
		t.Fatal(err)
	}
	fromR, fromW, err := os.Pipe() // and writes its answers to fd 4
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "about:blank")
	cmd.ExtraFiles = []*os.File{toR, fromW}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toR.Close()
	fromW.Close()
	t.Cleanup(func() {
		toW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		fromR.Close()
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	b := &browser{t: t, w: toW, r: bufio.NewReader(fromR), rf: fromR}
	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	b.call("Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	return b
}

// call sends a DevTools command (to the page once attached) and decodes
// its answer's result into out; the events between are passed over.
func (b *browser) call(method string, params any, out any) {
	b.t.Helper()
	b.id++
	msg := map[string]any{"id": b.id, "method": method, "params": params}
	if b.session != "" {
		msg["sessionId"] = b.session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.w.Write(append(raw, 0)); err != nil {
		b.t.Fatalf("chromium %s: %v", method, err)
	}
	b.rf.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		line, err := b.r.ReadBytes(0)
		if err != nil {
			b.t.Fatalf("chromium %s: %v", method, err)
		}
		var ans struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line[:len(line)-1], &ans); err != nil {
			b.t.Fatalf("chromium %s: %v: %q", method, err, line)
		}
		if ans.ID != b.id {
			continue
		}
		if ans.Error != nil {
			b.t.Fatalf("chromium %s: %s", method, ans.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(ans.Result, out); err != nil {
				b.t.Fatalf("chromium %s: %v: %s", method, err, ans.Result)
			}
		}
		return
	}
}

// eval runs expression in the page and returns its value as a string.
func (b *browser) eval(expression string) string {
	b.t.Helper()
	var res struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true, "awaitPromise": true}, &res)
	if res.Exception != nil {
		b.t.Fatalf("in the page: %s: %s", expression, res.Exception.Text)
	}
	return fmt.Sprint(res.Result.Value)
}

// open loads url and waits for the page's form.
func (b *browser) open(url string) {
	b.t.Helper()
	b.call("Page.navigate", map[string]any{"url": url}, nil)
	testenv.Until(b.t, url+" loaded", func() bool {
		return b.eval(`document.readyState === "complete" && !!document.getElementById("trigger")`) == "true"
	})
}

// fill sets the form's fields, by id, as a user types them.
func (b *browser) fill(fields map[string]string) {
	b.t.Helper()
	for id, v := range fields {
		q, _ := json.Marshal(v)
		b.eval(fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %s; e.dispatchEvent(new Event("input")); return e.value; })()`, id, q))
	}
}

// TestTriggerFormInChromium: the form of /trigger, filled and sent in
// Chromium with the API's token typed on the page, sends the command
// the form says (repetitions of -c and -d to the device; a capacity
// search across two devices, whose target gets the watch), shows its id,
// the devices' words as text (a device's reason that is markup stays
// text), and links to the result once it landed. The page runs no inline
// script, sends nosniff, and holds no token.
func TestTriggerFormInChromium(t *testing.T) {
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "edgebench.db"), Listen: listen, APIToken: "s3cret",
		Accounts: &broker.Accounts{Collector: broker.Account{Username: "collector", Password: "collector-secret"},
			Devices: []broker.Account{{Fleet: "lab", ID: "laptop", Password: "l"}, {Fleet: "lab", ID: "pi3", Password: "p"}}}})
	t.Cleanup(func() { col.Close() })
	loader := newScripted(t, "tcp://"+listen, "laptop", "l", "192.168.2.7")
	target := newScripted(t, "tcp://"+listen, "pi3", "p", "192.168.2.13")
	testenv.Until(t, "both devices online", func() bool {
		devs, _ := col.Store().Devices(context.Background())
		return len(devs) == 2 && devs[0].Online && devs[1].Online && devs[1].Info != nil
	})
	base := "http://" + col.WebAddr()

	resp, err := http.Get(base + "/trigger")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != web.ContentSecurityPolicy || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("/trigger: %d, CSP %q, %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Content-Type-Options"))
	}
	if s := string(page); strings.Contains(s, "s3cret") || !strings.Contains(s, `<script src="/static/trigger.js"></script>`) ||
		strings.Count(s, "<script") != 2 || !strings.Contains(s, `id="token"`) || !strings.Contains(s, `<option value="laptop" label="lab/laptop (online)">`) {
		t.Errorf("/trigger: want the token field, the devices listed, no inline script and no token:\n%s", s)
	}

	b := newBrowser(t)
	b.open(base + "/trigger")

	// Three repetitions of -c 3 -d 2s on the laptop.
	b.fill(map[string]string{"token": "s3cret", "device": "laptop", "url": "http://192.168.2.13:8080/x", "kind": "repeat", "repeat": "3",
		"c": "3", "d": "2s"})
	b.eval(`document.getElementById("send").click()`)
	cmd := loader.waitCommands(wire.KindLoadTest, 1)[0]
	if lt := cmd.Spec.LoadTest; lt.URL != "http://192.168.2.13:8080/x" || lt.Connections != 3 || lt.DurationMS != 2000 || lt.Requests != 0 ||
		lt.Repeat != 3 || !lt.KeepAlive || lt.Method != "GET" || cmd.Spec.Capacity != nil {
		t.Errorf("the form sent %+v", lt)
	}
	testenv.Until(t, "the command's id on the page", func() bool {
		return strings.HasPrefix(b.eval(`document.getElementById("sent").textContent`), "command "+cmd.ID+" sent to lab/laptop")
	})
	hostile := `<img src=x onerror="document.title='pwned'">`
	loader.event(cmd.ID, 0, wire.StateAccepted, "", nil, "")
	loader.event(cmd.ID, 0, wire.StateRunning, hostile, nil, "")
	testenv.Until(t, "the device's word on the page", func() bool {
		return strings.Contains(b.eval(`document.getElementById("status").textContent`), "lab/laptop: running: "+hostile)
	})
	if n := b.eval(`document.querySelectorAll("img").length + ":" + document.title`); n != "0:trigger · edgebench" {
		t.Errorf("a device's reason became markup: %s images, title", n)
	}
	rng := rand.New(rand.NewPCG(3, 30))
	res := storetest.FakeResult(rng, "lab", "laptop", nil, time.Now(), 1000, 800)
	res.CommandID = cmd.ID
	if err := loader.result(res); err != nil {
		t.Fatal(err)
	}
	loader.event(cmd.ID, 0, wire.StateSucceeded, "", nil, res.ID)
	testenv.Until(t, "the result's link on the page", func() bool {
		return b.eval(`(document.querySelector("#results a.result") || {}).href || ""`) == base+"/runs/"+res.ID
	})

	// A capacity search across two devices: the target gets the watch;
	// a -n run asks no duration.
	b.fill(map[string]string{"device": "laptop", "target": "pi3", "url": "http://192.168.2.13:8080/", "kind": "capacity", "slo": "p99<20ms",
		"c": "4", "d": "", "n": "500"})
	b.eval(`document.getElementById("send").click()`)
	watch := target.waitCommands(wire.KindProbe, 1)[0]
	if watch.Spec.Probe.URL != "http://192.168.2.13:8080/" {
		t.Errorf("the watch %+v", watch.Spec.Probe)
	}
	testenv.Until(t, "the run across two devices on the page", func() bool {
		return strings.Contains(b.eval(`document.getElementById("sent").textContent`), "(lab/laptop loads lab/pi3, whose result it is)")
	})
	target.event(watch.ID, 0, wire.StateRunning, "watching", nil, "")
	load := loader.waitCommands(wire.KindCapacity, 1)[0]
	if cp := load.Spec.Capacity; cp == nil || cp.SLO != "p99<20ms" || cp.Load.Connections != 4 || cp.Load.Requests != 500 || cp.Load.DurationMS != 0 {
		t.Errorf("the form's capacity search: %+v", cp)
	}

	// A mistake in the form is said on the page; nothing is sent.
	b.fill(map[string]string{"target": "", "kind": "run", "n": "0", "d": "soon"})
	b.eval(`document.getElementById("send").click()`)
	if got := b.eval(`document.getElementById("err").textContent`); got != "-d soon: want a duration such as 10s or 2m, or -n requests" {
		t.Errorf("a bad -d: %q", got)
	}
	// Without the token, the API's refusal is said.
	b.fill(map[string]string{"token": "", "d": "1s"})
	b.eval(`document.getElementById("send").click()`)
	testenv.Until(t, "the refusal on the page", func() bool {
		return strings.HasPrefix(b.eval(`document.getElementById("err").textContent`), "trigger: unauthorized")
	})
	if n := len(loader.commands(wire.KindLoadTest)); n != 1 {
		t.Errorf("%d load tests sent: the refused ones were sent", n)
	}
}

// TestTriggerAPIRefusesCrossSiteForms: the trigger API of a collector
// without a token (on loopback) refuses what a page of another site can
// send it: a form's POST (no JSON), or a script's cross-site fetch of
// JSON. No command reaches the device; the same request from the
// collector's own page is taken.
func TestTriggerAPIRefusesCrossSiteForms(t *testing.T) {
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "edgebench.db"), Listen: listen,
		Accounts: &broker.Accounts{Collector: broker.Account{Username: "collector", Password: "collector-secret"},
			Devices: []broker.Account{{Fleet: "lab", ID: "laptop", Password: "l"}}}})
	t.Cleanup(func() { col.Close() })
	dev := newScripted(t, "tcp://"+listen, "laptop", "l", "192.168.2.7")
	testenv.Until(t, "the device online", func() bool {
		devs, _ := col.Store().Devices(context.Background())
		return len(devs) == 1 && devs[0].Online
	})
	base := "http://" + col.WebAddr()
	body := `{"device":"laptop","spec":{"url":"http://127.0.0.1:8080/","connections":1,"duration_ms":1000,"keepalive":true}}`
	post := func(ctype string, hdr map[string]string, b string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/api/trigger", strings.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ctype)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	evil := map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
	for _, c := range []struct {
		name  string
		ctype string
		hdr   map[string]string
		body  string
		want  int
	}{
		{"a form of another site", "application/x-www-form-urlencoded", evil, "device=laptop&url=http://127.0.0.1:8080/", http.StatusForbidden},
		{"a text/plain form of another site carrying JSON", "text/plain", evil, body, http.StatusForbidden},
		{"a fetch of JSON from another site", "application/json", evil, body, http.StatusForbidden},
		{"another origin, from a browser without Sec-Fetch-Site", "application/json", map[string]string{"Origin": "http://evil.example"}, body, http.StatusForbidden},
		{"a form of the page's own origin", "text/plain", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}, body, http.StatusUnsupportedMediaType},
	} {
		if got := post(c.ctype, c.hdr, c.body); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(dev.commands(wire.KindLoadTest)); n != 0 {
		t.Fatalf("%d commands reached the device from refused requests", n)
	}
	if got := post("application/json", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}, body); got != http.StatusOK {
		t.Errorf("the page's own fetch: %d, want 200", got)
	}
	dev.waitCommands(wire.KindLoadTest, 1)
}
