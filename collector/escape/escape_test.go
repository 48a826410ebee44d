package escape

import (
	"testing"

	"github.com/edgebench/edgebench/wire"
)

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"nginx/1.22.1":           "nginx/1.22.1",
		"Raspberry Pi 4 · Rev 1": "Raspberry Pi 4 · Rev 1",
		"\x1b]0;pwned\a":         `\x1b]0;pwned\a`,
		"a\r\nb\tc":              `a\r\nb\tc`,
		"\u202eevil":             `\u202eevil`,
		"\x7f\u0085":             `\x7f\u0085`,
		"bad \xff byte":          `bad \xff byte`,
		"":                       "",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMakePrintable: every string of a result, map keys and nested
// structs included, is escaped in place; the figures are left alone.
func TestMakePrintable(t *testing.T) {
	r := &wire.Result{
		Fleet: "lab", Reason: "\x1b[2J", Labels: map[string]string{"k\n": "v\r"},
		Spec:        wire.RunSpec{URL: "http://x/\x07", Headers: []wire.Header{{Name: "A", Value: "\x1b"}}},
		Fingerprint: wire.Fingerprint{Board: "\x1b]0;t\a", Extra: []wire.Label{{K: "\x00", V: "ok"}}},
		Runs: []wire.Run{{Completed: 7, Server: "\x1b[31m", Timeline: []wire.Second{{T: 1, Completed: 3}},
			System: &wire.System{Disks: []string{"sd\x1ba"}}}},
	}
	MakePrintable(r)
	for got, want := range map[string]string{
		r.Reason: `\x1b[2J`, r.Labels[`k\n`]: `v\r`, r.Spec.URL: `http://x/\a`, r.Spec.Headers[0].Value: `\x1b`,
		r.Fingerprint.Board: `\x1b]0;t\a`, r.Fingerprint.Extra[0].K: `\x00`, r.Runs[0].Server: `\x1b[31m`, r.Runs[0].System.Disks[0]: `sd\x1ba`,
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if len(r.Labels) != 1 || r.Runs[0].Completed != 7 || r.Runs[0].Timeline[0].Completed != 3 || r.Fleet != "lab" {
		t.Errorf("changed more than strings: %+v", r)
	}
}
