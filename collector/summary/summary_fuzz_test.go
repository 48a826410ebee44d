package summary

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tinylib/msgp/msgp"

	"github.com/edgebench/edgebench/wire"
)

// FuzzOf: Of, which cuts a device's payload as it came,
// never panics; of a payload that decodes, its summary decodes to the
// same result without the runs' timelines, histograms and probe
// samples, and a summary has none of them left to cut.
func FuzzOf(f *testing.F) {
	files, _ := filepath.Glob("../../wire/testdata/v1/result*.msgpack")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x81, 0xa2, 'r', 's', 0x91, 0x81, 0xa2, 't', 'l', 0x90})
	f.Fuzz(func(t *testing.T, payload []byte) {
		sum, err := Of(payload)
		if err != nil || sum == nil {
			return
		}
		full, err := wire.DecodeResult(payload)
		if err != nil {
			return
		}
		got, err := wire.DecodeResult(sum)
		if err != nil {
			t.Fatalf("the summary of a payload that decodes does not: %v", err)
		}
		for i := range full.Runs {
			r := &full.Runs[i]
			r.Timeline, r.Latency, r.Connect, r.Waiting, r.Processing, r.Handshake = nil, nil, nil, nil, nil, nil
			if r.System != nil {
				r.System.Samples = nil
			}
		}
		if !reflect.DeepEqual(got, full) {
			t.Errorf("the summary is not the result without its samples:\n%+v\n%+v", got, full)
		}
		// Every entry but the bulk stays, those the wire does not know
		// (dropped by DecodeResult above) included.
		whole, _, err1 := msgp.ReadIntfBytes(payload)
		cut, _, err2 := msgp.ReadIntfBytes(sum)
		if err1 == nil {
			stripGeneric(whole)
			if err2 != nil || !reflect.DeepEqual(whole, cut) {
				t.Errorf("the summary's entries are not the payload's without its bulk (%v):\n%v\n%v", err2, cut, whole)
			}
		}
		if again, err := Of(sum); err != nil || again != nil {
			t.Errorf("a summary's summary: %d bytes, %v; want none", len(again), err)
		}
	})
}

// stripGeneric drops the bulk from a payload read as maps and arrays.
func stripGeneric(v any) {
	m, _ := v.(map[string]any)
	runs, _ := m["rs"].([]any)
	for _, r := range runs {
		run, _ := r.(map[string]any)
		for k := range runBulk {
			delete(run, k)
		}
		if sy, ok := run["sy"].(map[string]any); ok {
			delete(sy, "s")
		}
	}
}

// A field the collector does not know, in the result, in a run and in
// its system report, is kept where it was.
func TestUnknownFieldsKept(t *testing.T) {
	b := msgp.AppendMapHeader(nil, 3)
	b = msgp.AppendString(b, "zz")
	b = msgp.AppendInt(b, 7)
	b = msgp.AppendString(b, "rs")
	b = msgp.AppendArrayHeader(b, 1)
	b = msgp.AppendMapHeader(b, 4)
	b = msgp.AppendString(b, "tl")
	b = msgp.AppendArrayHeader(b, 1)
	b = msgp.AppendInt(b, 1)
	b = msgp.AppendString(b, "new")
	b = msgp.AppendString(b, "kept")
	b = msgp.AppendString(b, "sy")
	b = msgp.AppendMapHeader(b, 2)
	b = msgp.AppendString(b, "s")
	b = msgp.AppendArrayHeader(b, 0)
	b = msgp.AppendString(b, "later")
	b = msgp.AppendFloat64(b, 1.5)
	b = msgp.AppendString(b, "hl")
	b = msgp.AppendBytes(b, []byte{1, 2})
	b = msgp.AppendString(b, "end")
	b = msgp.AppendBool(b, true)
	sum, err := Of(b)
	if err != nil {
		t.Fatal(err)
	}
	got, rest, err := msgp.ReadIntfBytes(sum)
	if err != nil || len(rest) != 0 {
		t.Fatalf("summary: %v, %d bytes after it", err, len(rest))
	}
	want := map[string]any{"zz": int64(7), "end": true,
		"rs": []any{map[string]any{"new": "kept", "sy": map[string]any{"later": 1.5}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary %v, want %v", got, want)
	}
}
