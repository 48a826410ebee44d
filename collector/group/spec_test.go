package group

import (
	"encoding/json"
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
		func(s *Spec) { s.Headers = nil }, func(s *Spec) { s.Mode = "wrk" }, func(s *Spec) { s.TwoMachines = true },
	} {
		c := a
		c.Headers = append([]string(nil), a.Headers...)
		change(&c)
		if c.Key() == a.Key() {
			t.Errorf("%+v and %+v are one spec", c, a)
		}
	}
	// Every part of a spec that sets them all can be grouped by.
	a.URL, a.Protocol, a.Streams, a.NoTLSResume, a.TLSVersion, a.TwoMachines = "https://pi/", "h2", 10, true, "1.3", true
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

// TestResultSpec: a result joined from a run across two devices is other
// work than the same URL loaded on the server's own machine, and reads as
// such; its spec is otherwise its run spec's.
func TestResultSpec(t *testing.T) {
	rs := wire.RunSpec{URL: "http://10.0.0.2:8080/", Method: "GET", Connections: 10, KeepAlive: true}
	local := ResultSpec(&wire.Result{Spec: rs})
	two := ResultSpec(&wire.Result{Spec: rs, Loader: &wire.Loader{Fleet: "lab", Device: "laptop"}})
	if local.Key() == two.Key() || local.Key() != SpecOf(rs).Key() {
		t.Errorf("one device %s, two %s: want two specs, the first the run spec's", local.Key(), two.Key())
	}
	if !two.TwoMachines || two.Without("machines").Key() != local.Key() {
		t.Errorf("two devices: %+v", two)
	}
	if got, want := two.String(), "GET http://10.0.0.2:8080/ · 10 connections · keep-alive · loaded from another device"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for s, want := range map[*Spec]string{&local: "one device", &two: "two devices"} {
		if v, ok := s.Field("machines"); !ok || v != want {
			t.Errorf("machines: %q, want %q", v, want)
		}
	}
	// A spec stored before two-machine runs has no such part: one device.
	var old Spec
	if err := json.Unmarshal([]byte(`{"method":"GET","url":"http://10.0.0.2:8080/","connections":10,"keepalive":true}`), &old); err != nil || old.Key() != local.Key() {
		t.Errorf("a stored spec of before: %v %s, want %s", err, old.Key(), local.Key())
	}
}
