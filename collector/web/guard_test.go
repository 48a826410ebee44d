package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAllowHosts: the Host names the web UI answers to.
func TestAllowHosts(t *testing.T) {
	h := AllowHosts("192.168.1.5:8080", []string{"Bench.LAN"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for host, want := range map[string]int{
		"127.0.0.1:8080": 200, "localhost": 200, "[::1]:8080": 200, "[::1]": 200, "192.168.1.5:8080": 200, "10.0.0.9": 200,
		"bench.lan": 200, "BENCH.lan.:8080": 200, "": 200,
		"evil.example": 421, "evil.example:8080": 421, "localhost.evil.example": 421, "bench.lan.evil.example": 421,
		"127.0.0.1.nip.io": 421, "[fe80::1%25eth0]:8080": 421,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: %d, want %d", host, rec.Code, want)
		}
	}
}
