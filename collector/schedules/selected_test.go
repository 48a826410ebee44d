package schedules

import (
	"testing"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
)

// TestSelectionStaysInItsFleet: a firing's devices are those of its
// fleet, whether it names a device, selects by field or takes the whole
// fleet: a device of the same name, or with the same fields, in another
// fleet is never sent the command (a security rule).
func TestSelectionStaysInItsFleet(t *testing.T) {
	lab := &store.Device{Fleet: "lab", ID: "pi-1", Labels: map[string]string{"model": "pi5"}}
	other := &store.Device{Fleet: "other", ID: "pi-1", Labels: map[string]string{"model": "pi5"}}
	for _, c := range []struct {
		req        scheduledb.TriggerRequest
		lab, other bool
	}{
		{scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-1"}, true, false},
		{scheduledb.TriggerRequest{Fleet: "lab", Select: map[string]string{"model": "pi5"}}, true, false},
		{scheduledb.TriggerRequest{Fleet: "lab"}, true, false},
		{scheduledb.TriggerRequest{Fleet: "lab", Device: "pi-2"}, false, false},
	} {
		if got := selected(lab, &c.req); got != c.lab {
			t.Errorf("%+v: lab/pi-1 selected %v, want %v", c.req, got, c.lab)
		}
		if got := selected(other, &c.req); got != c.other {
			t.Errorf("%+v: other/pi-1 selected %v, want %v", c.req, got, c.other)
		}
	}
}
