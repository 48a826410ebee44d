package main

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestH2AgainstHTTP1Server: --h2 against nginx's TLS listener without
// http2 is one line saying the server speaks no HTTP/2 and chose HTTP/1.1
// in the handshake (the client offers h2, then http/1.1), exit status 1,
// at once; without --h2 the same listener is measured.
func TestH2AgainstHTTP1Server(t *testing.T) {
	srv := testenv.NginxWith(t, testenv.NginxConfig{TLS: true})
	url := "https://" + srv.HTTPS1 + "/index.html"
	for _, args := range [][]string{
		{"run", "-n", "20", "--h2", "--cacert", srv.Certs.CA, url},
		{"run", "-d", "30", "--h2", "--insecure", url},
	} {
		r := runBinary(t, args...)
		want := "edgebench run: " + srv.HTTPS1 + " speaks no HTTP/2: it chose http/1.1 over h2 in the TLS handshake (ALPN) (leave out --h2 for HTTP/1.1)\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
		}
	}
	if r := runBinary(t, "run", "-n", "20", "--cacert", srv.Certs.CA, url); r.code != 0 || !strings.Contains(r.stdout, "20 ok") {
		t.Errorf("without --h2: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
