package summary

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

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
		if again, err := Of(sum); err != nil || again != nil {
			t.Errorf("a summary's summary: %d bytes, %v; want none", len(again), err)
		}
	})
}
