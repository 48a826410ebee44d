package main

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

var (
	spaceSavings = regexp.MustCompile(`\(space savings [0-9.]+%\)`)
	h2Time       = regexp.MustCompile(`\b\d+(\.\d\d)?(us|ms|s)\b`)
)

// TestHTTPSModesMatchTheRealTools runs real ab, wrk and h2load and
// edgebench ab, wrk and run --format h2load with the same flags against one
// nginx over HTTPS and HTTP/2: the reports have the same lines in the same
// order (ab's SSL/TLS Protocol, Server Temp Key and TLS Server Name
// included), and nginx's log shows what each did: ab and edgebench ab a
// full handshake per connection, never resumed.
func TestHTTPSModesMatchTheRealTools(t *testing.T) {
	abBin, wrkBin, h2loadBin := testenv.Tool(t, "ab"), testenv.Tool(t, "wrk"), testenv.Tool(t, "h2load")
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true, LogFormat: "$server_protocol $ssl_protocol $ssl_session_reused $connection_requests"})
	dir := t.TempDir()
	port := strings.Split(srv.HTTPS, ":")[1]
	url := "https://localhost:" + port + "/index.html"
	logged := 0
	newLines := func() []string {
		b, _ := os.ReadFile(srv.AccessLog)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		mine := lines[logged:]
		logged = len(lines)
		return mine
	}
	for _, args := range [][]string{
		{"-n", "300", "-c", "4", url},
		{"-n", "300", "-c", "4", "-k", url},
		{"-n", "100", "-c", "2", "-f", "TLS1.2", "https://127.0.0.1:" + port + "/index.html"},
	} {
		real := runTool(t, dir, abBin, args...)
		newLines()
		ours := runTool(t, dir, testenv.Binary(t, "."), append([]string{"ab"}, args...)...)
		if real.code != 0 || ours.code != 0 {
			t.Fatalf("ab %q: exit %d (%s), edgebench ab exit %d (%s)", args, real.code, real.stderr, ours.code, ours.stderr)
		}
		if d := sameLayout(abReport(t, ours.stdout), abReport(t, real.stdout)); d != "" {
			t.Errorf("ab %q: the reports differ:\n%s\n--- edgebench ab\n%s\n--- ab\n%s", args, d, ours.stdout, real.stdout)
		}
		keep := args[4] == "-k"
		version := "TLSv1.3"
		if args[4] == "-f" {
			version = "TLSv1.2"
		}
		for _, l := range newLines() {
			f := strings.Fields(l)
			if f[0] != "HTTP/1.0" || f[1] != version || f[2] != "." || !keep && f[3] != "1" {
				t.Errorf("ab %q: nginx logged %q: want HTTP/1.0 over %s, no session resumed, one request a connection without -k", args, l, version)
				break
			}
		}
	}

	real := runTool(t, dir, wrkBin, "-t1", "-c4", "-d1", url)
	ours := runTool(t, dir, testenv.Binary(t, "."), "wrk", "-t1", "-c4", "-d1", url)
	if real.code != 0 || ours.code != 0 {
		t.Fatalf("wrk: exit %d (%s), edgebench wrk exit %d (%s)", real.code, real.stderr, ours.code, ours.stderr)
	}
	if d := sameLayout(toolReport(strings.Split(ours.stdout, "\n")), strings.Split(real.stdout, "\n")); d != "" {
		t.Errorf("wrk over HTTPS: the reports differ:\n%s\n--- edgebench wrk\n%s\n--- wrk\n%s", d, ours.stdout, real.stdout)
	}

	// h2load's summary from "TLS Protocol" on, its progress and
	// thread lines left out (edgebench prints no such lines).
	h2loadReport := func(out string) []string {
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "starting") || strings.HasPrefix(l, "spawning") || strings.HasPrefix(l, "progress") ||
				strings.Contains(l, "Warm-up") || strings.Contains(l, "Main benchmark") || strings.HasPrefix(l, "Stopped") {
				continue
			}
			if strings.HasPrefix(l, "System (") || strings.HasPrefix(l, "verdict ") || strings.HasPrefix(l, "rate ") {
				// edgebench's own sections after the layout, and the
				// blank line before them
				return lines[:max(len(lines)-1, 0)]
			}
			lines = append(lines, l)
		}
		return lines
	}
	for _, h2 := range []struct{ flag, url string }{{"--h2", url}, {"--h2c", "http://" + srv.H2C + "/index.html"}} {
		real := runTool(t, dir, h2loadBin, "-n", "2000", "-c", "4", "-m", "10", h2.url)
		ours := runTool(t, dir, testenv.Binary(t, "."), "run", "-n", "2000", "-c", "4", "--streams", "10", h2.flag, "--cacert", srv.Certs.CA, "--no-probe", "--format", "h2load", h2.url)
		if h2.flag == "--h2c" {
			ours = runTool(t, dir, testenv.Binary(t, "."), "run", "-n", "2000", "-c", "4", "--streams", "10", h2.flag, "--no-probe", "--format", "h2load", h2.url)
		}
		if real.code != 0 || ours.code != 0 {
			t.Fatalf("h2load %s: exit %d (%s), edgebench exit %d (%s)", h2.url, real.code, real.stderr, ours.code, ours.stderr)
		}
		// h2load prints its traffic's space savings; edgebench does not
		// decode the headers it would take.
		// Times in us have no decimals, in ms two: the shape of a value
		// depends on it.
		g, w := h2loadReport(ours.stdout), h2loadReport(real.stdout)
		for i := range w {
			w[i] = spaceSavings.ReplaceAllString(w[i], "(space savings -)")
			w[i] = h2Time.ReplaceAllString(w[i], "1.00ms")
		}
		for i := range g {
			g[i] = h2Time.ReplaceAllString(g[i], "1.00ms")
		}
		if d := sameLayout(g, w); d != "" {
			t.Errorf("h2load %s: the reports differ:\n%s\n--- edgebench\n%s\n--- h2load\n%s", h2.url, d, ours.stdout, real.stdout)
		}
		if !strings.Contains(ours.stdout, "requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed") {
			t.Errorf("h2load %s: edgebench's requests line:\n%s", h2.url, ours.stdout)
		}
	}
}

// TestHTTPSBadInput: a refused certificate, a server that speaks no TLS
// or no HTTP/2 end the run with one line saying so, and exit status 1;
// --insecure measures the same server; a mistake in the TLS flags is one
// line and exit status 2.
func TestHTTPSBadInput(t *testing.T) {
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true})
	https := "https://localhost:" + strings.Split(srv.HTTPS, ":")[1] + "/index.html"
	// An expired certificate and one for another host, from the CA of
	// --cacert: Go's HTTPS server, as nginx takes one certificate.
	certs := testenv.WebCertificates(t, t.TempDir())
	tlsServer := func(cert, key string) string {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
		s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.StartTLS()
		t.Cleanup(s.Close)
		return "https://localhost:" + strings.Split(s.Listener.Addr().String(), ":")[1] + "/"
	}
	expired, wrongHost := tlsServer(certs.Expired, certs.ExpiredKey), tlsServer(certs.WrongHost, certs.WrongHostKey)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-n", "10", "--cacert", certs.CA, expired}, 1, "certificate refused: x509: certificate has expired or is not yet valid"},
		{[]string{"run", "-n", "10", "--cacert", certs.CA, wrongHost}, 1, "certificate refused: x509: certificate is valid for wrong.example, not localhost (--insecure skips the check)"},
		{[]string{"run", "-n", "10", https}, 1, "certificate refused: x509: certificate signed by unknown authority (--cacert FILE"},
		{[]string{"run", "-n", "10", "--cacert", srv.Certs.CA, "https://" + srv.Addr + "/"}, 1, "speaks no TLS"},
		{[]string{"run", "-n", "10", "--h2c", "http://" + srv.Addr + "/"}, 1, "speaks no HTTP/2: it answered in HTTP/1.x"},
		{[]string{"run", "-n", "10", "--h2", "http://" + srv.Addr + "/"}, 2, "--h2 is HTTP/2 over TLS: give an https:// URL"},
		{[]string{"run", "-n", "10", "--h2c", https}, 2, "--h2c is HTTP/2 in cleartext: give an http:// URL"},
		{[]string{"run", "-n", "10", "--streams", "8", https}, 2, "concurrent streams are HTTP/2's"},
		{[]string{"run", "-n", "10", "--h2", "--no-keepalive", https}, 2, "--no-keepalive with HTTP/2"},
		{[]string{"run", "-n", "10", "--cacert", srv.Certs.CA, "--insecure", https}, 2, "--cacert and --insecure: one or the other"},
		{[]string{"run", "-n", "10", "--insecure", "http://" + srv.Addr + "/"}, 2, "are for https:// URLs"},
		{[]string{"run", "-k", "https://[::1"}, 2, "URL"},
	} {
		r := runBinary(t, tc.args...)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != tc.code || len(lines) != 1 || !strings.HasPrefix(lines[0], "edgebench run: ") || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	for _, u := range []string{expired, wrongHost} {
		if r := runBinary(t, "run", "-n", "20", "--insecure", "--no-probe", u); r.code != 0 {
			t.Errorf("%s --insecure: exit %d, %s", u, r.code, r.stderr)
		}
	}
	r := runBinary(t, "run", "-n", "50", "--insecure", "--no-probe", "--format", "json", https)
	var doc struct {
		OK       int64  `json:"ok"`
		Protocol string `json:"protocol"`
		TLS      struct {
			Version string `json:"version"`
		} `json:"tls"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc.OK != 50 || doc.Protocol != "HTTP/1.1" || doc.TLS.Version != "TLSv1.3" {
		t.Errorf("--insecure: exit %d, %+v, %v\n%s", r.code, doc, err, r.stderr)
	}
}
