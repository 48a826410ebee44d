package group

import (
	"testing"

	"github.com/edgebench/edgebench/wire"
)

// TestSpec: what makes two runs the same work, and how it reads.
func TestSpec(t *testing.T) {
	a := SpecOf(wire.RunSpec{URL: "http://pi/", Connections: 1, Rate: 2000, BodyBytes: 512, Mode: "ab",
		Headers: []wire.Header{{Name: "x-b", Value: "2"}, {Name: "accept-encoding", Value: "gzip"}}})
	if got, want := a.String(), "GET http://pi/ · 1 connection · no keep-alive · open loop 2000 req/s · body 512 B · -H 'Accept-Encoding: gzip' · -H 'X-B: 2' · edgebench ab"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	b := a
	b.Headers = []string{"Accept-Encoding: gzip", "X-B: 2"}
	if a.Key() != b.Key() {
		t.Error("the same headers in another order or case make another spec")
	}
	for _, change := range []func(*Spec){
		func(s *Spec) { s.URL = "http://pi/mixed" }, func(s *Spec) { s.Method = "POST" }, func(s *Spec) { s.Connections = 2 },
		func(s *Spec) { s.KeepAlive = new(true) }, func(s *Spec) { s.Rate = 0 }, func(s *Spec) { s.BodyBytes = 0 },
		func(s *Spec) { s.Headers = nil }, func(s *Spec) { s.Mode = "wrk" },
	} {
		c := a
		c.Headers = append([]string(nil), a.Headers...)
		change(&c)
		if c.Key() == a.Key() {
			t.Errorf("%+v and %+v are one spec", c, a)
		}
	}
	// Every part of a spec that sets them all can be grouped by.
	a.URL, a.Protocol, a.Streams, a.NoTLSResume, a.TLSVersion = "https://pi/", "h2", 10, true, "1.3"
	for _, k := range specFields {
		v, ok := a.Field(k)
		if !ok || v == "" || a.Without(k).Key() == a.Key() {
			t.Errorf("spec part %s: %q %v", k, v, ok)
		}
	}
}

// TestSpecTLSAndHTTP2: HTTP/2 and its streams, TLS resumption and version
// make other work, and read as such; an http spec has no TLS to group by.
func TestSpecTLSAndHTTP2(t *testing.T) {
	a := SpecOf(wire.RunSpec{URL: "https://pi/", Connections: 4, KeepAlive: true})
	for _, change := range []func(*Spec){
		func(s *Spec) { s.Protocol, s.Streams = "h2", 1 }, func(s *Spec) { s.Protocol, s.Streams = "h2", 10 },
		func(s *Spec) { s.NoTLSResume = true }, func(s *Spec) { s.TLSVersion = "1.2" },
	} {
		c := a
		change(&c)
		if c.Key() == a.Key() {
			t.Errorf("%+v and %+v are one spec", c, a)
		}
	}
	h2 := SpecOf(wire.RunSpec{URL: "https://pi/", Connections: 4, KeepAlive: true, Protocol: "h2", Streams: 10, NoTLSResume: true, TLSVersion: "1.3"})
	if got, want := h2.String(), "GET https://pi/ · 4 connections · keep-alive · h2, 10 streams · no TLS resumption · TLS 1.3"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for k, want := range map[string]string{"protocol": "HTTP/1.x", "tls_resume": "resumption on", "tls_version": "TLS 1.2 or 1.3"} {
		if v, _ := a.Field(k); v != want {
			t.Errorf("https %s: %q, want %q", k, v, want)
		}
	}
	for k, want := range map[string]string{"protocol": "h2, 10 streams", "tls_resume": "resumption off", "tls_version": "TLS 1.3"} {
		if v, _ := h2.Field(k); v != want {
			t.Errorf("h2 %s: %q, want %q", k, v, want)
		}
	}
	plain := SpecOf(wire.RunSpec{URL: "http://pi/", Protocol: "h2c", Streams: 1})
	for k, want := range map[string]string{"protocol": "h2c, 1 stream", "tls_resume": "no TLS", "tls_version": "no TLS"} {
		if v, _ := plain.Field(k); v != want {
			t.Errorf("http %s: %q, want %q", k, v, want)
		}
	}
}
