package collector

import (
	"context"
	"testing"

	"github.com/edgebench/edgebench/wire"
)

// TestSpecsOfOlderResults: results stored before the store kept specs get
// theirs from their payload when the store is opened.
func TestSpecsOfOlderResults(t *testing.T) {
	eachEngine(t, func(t *testing.T, e storeEngine) {
		ctx := context.Background()
		path := e.db(t)
		s, err := OpenStore(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		seedMixedSpecs(t, s)
		if _, err := s.w.ExecContext(ctx, "DELETE FROM result_specs"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s, err = OpenStore(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rows, err := s.Runs(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		urls := map[string]int{}
		for _, r := range rows {
			if r.Spec.Method != "GET" || r.Spec.KeepAlive == nil || !*r.Spec.KeepAlive || r.Spec.Connections != 10 {
				t.Errorf("%s: spec %+v", r.ID, r.Spec)
			}
			urls[r.Spec.URL]++
		}
		if urls["http://127.0.0.1:8080/index.html"] != 6 || urls["http://127.0.0.1:8080/mixed"] != 1 {
			t.Errorf("specs by URL %v", urls)
		}
	})
}

// TestSpec: what makes two runs the same work, and how it reads.
func TestSpec(t *testing.T) {
	a := SpecOf(wire.RunSpec{URL: "http://pi/", Connections: 1, Rate: 2000, BodyBytes: 512, Mode: "ab",
		Headers: []wire.Header{{Name: "x-b", Value: "2"}, {Name: "accept-encoding", Value: "gzip"}}})
	if got, want := a.String(), "GET http://pi/ · 1 connection · no keep-alive · open loop 2000 req/s · body 512 B · -H 'Accept-Encoding: gzip' · -H 'X-B: 2' · edgebench ab"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	b := a
	b.Headers = []string{"Accept-Encoding: gzip", "X-B: 2"}
	if a.key() != b.key() {
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
		if c.key() == a.key() {
			t.Errorf("%+v and %+v are one spec", c, a)
		}
	}
	for _, k := range specFields {
		v, ok := a.field(k)
		if !ok || v == "" || a.without(k).key() == a.key() {
			t.Errorf("spec part %s: %q %v", k, v, ok)
		}
	}
}
