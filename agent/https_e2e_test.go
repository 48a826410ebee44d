package agent

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestAgentHTTPSAndH2EndToEnd: the agent process takes https commands
// inside its allowlist, with the server's CA sent in the command, over
// HTTP/1.1 and HTTP/2, against a real nginx; its results say what was
// asked (protocol, streams, resumption) and what was negotiated. A CA
// bundle with a key in it, an https target outside the allowlist and a
// certificate nobody vouched for are refused or fail with their reason.
func TestAgentHTTPSAndH2EndToEnd(t *testing.T) {
	broker, _, fleet, state := e2e(t, "/")
	ngx := testenv.NginxWith(t, testenv.NginxConfig{TLS: true})
	ca, err := os.ReadFile(ngx.Certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(ngx.Certs.Key)
	if err != nil {
		t.Fatal(err)
	}
	startAgent(t, broker, state)
	fleet.waitFor(20*time.Second, "the birth status", func() bool {
		return fleet.status != nil && fleet.status.State == wire.StatusOnline
	})
	url := "https://" + ngx.HTTPS + "/index.html"
	run := func(mod func(*wire.LoadTestSpec)) (*wire.Event, *wire.Result) {
		t.Helper()
		cmd := loadCmd(url, 700*time.Millisecond, 2)
		mod(cmd.Spec.LoadTest)
		fleet.send("pi1", cmd)
		fleet.waitFor(30*time.Second, "the end of "+cmd.ID, func() bool { return fleet.terminal(cmd.ID) != nil })
		ev := fleet.terminal(cmd.ID)
		if ev.ResultID == "" {
			return ev, nil
		}
		fleet.waitFor(10*time.Second, "the result of "+cmd.ID, func() bool { return fleet.results[ev.ResultID] != nil })
		fleet.mu.Lock()
		defer fleet.mu.Unlock()
		return ev, fleet.results[ev.ResultID]
	}

	// h2 by ALPN, 4 streams per connection, the CA from the command.
	ev, res := run(func(s *wire.LoadTestSpec) {
		s.HTTP2, s.Streams, s.TLS = true, 4, &wire.TLSSpec{CACerts: ca, Version: "1.3"}
	})
	if ev.State != wire.StateSucceeded || res == nil {
		t.Fatalf("h2: %s %q", ev.State, ev.Reason)
	}
	r := res.Runs[0]
	if sp := res.Spec; sp.Protocol != "h2" || sp.Streams != 4 || sp.TLSVersion != "1.3" || sp.NoTLSResume || sp.URL != url {
		t.Errorf("h2 spec %+v", sp)
	}
	if r.OK == 0 || r.TLS == nil || r.TLS.Version != "TLSv1.3" || r.TLS.ALPN != "h2" || !r.TLS.Resume || r.TLS.Handshakes < 2 ||
		len(r.Handshake) == 0 || r.H2 == nil || r.H2.MaxStreams != 128 {
		t.Errorf("h2 run: ok %d, tls %+v, handshake histogram %d bytes, h2 %+v", r.OK, r.TLS, len(r.Handshake), r.H2)
	}

	// HTTP/1.1 over TLS 1.2 without keep-alive, resumption off: a full
	// handshake per request.
	ev, res = run(func(s *wire.LoadTestSpec) {
		s.KeepAlive, s.TLS = false, &wire.TLSSpec{CACerts: ca, NoResume: true, Version: "1.2"}
	})
	if ev.State != wire.StateSucceeded || res == nil {
		t.Fatalf("https without resumption: %s %q", ev.State, ev.Reason)
	}
	r = res.Runs[0]
	if sp := res.Spec; sp.Protocol != "" || !sp.NoTLSResume || sp.TLSVersion != "1.2" {
		t.Errorf("https spec %+v", sp)
	}
	if r.OK == 0 || r.TLS == nil || r.TLS.Version != "TLSv1.2" || r.TLS.Resume || r.TLS.Resumed != 0 || r.TLS.Handshakes < r.OK || r.H2 != nil {
		t.Errorf("https run: ok %d, tls %+v, h2 %+v", r.OK, r.TLS, r.H2)
	}

	// Refused before anything runs, or failed with the certificate named.
	for _, c := range []struct {
		name   string
		mod    func(*wire.LoadTestSpec)
		state  wire.EventState
		reason string
	}{
		{"a key in the CA bundle", func(s *wire.LoadTestSpec) { s.TLS = &wire.TLSSpec{CACerts: append(ca, key...)} },
			wire.StateRejected, "private key"},
		{"outside the allowlist", func(s *wire.LoadTestSpec) { s.URL = "https://10.0.0.1/" }, wire.StateRejected, "allowlist"},
		{"no CA for the server's certificate", func(s *wire.LoadTestSpec) {}, wire.StateFailed, "certificate signed by unknown authority"},
	} {
		ev, _ := run(c.mod)
		if ev.State != c.state || !strings.Contains(ev.Reason, c.reason) {
			t.Errorf("%s: %s %q, want %s %q", c.name, ev.State, ev.Reason, c.state, c.reason)
		}
	}
}
