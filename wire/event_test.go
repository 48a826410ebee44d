package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// TestDecodeEventChecksItsIDs: an event's result id, when it has one, is a
// message id as its command's is (a hostile device put 200 KiB there,
// stored with the event); a state that is none of the known ones is
// refused with the state clipped in the error, which is logged.
func TestDecodeEventChecksItsIDs(t *testing.T) {
	ok := wiretest.Event()
	ok.State, ok.ResultID = wire.StateSucceeded, wire.NewID()
	if _, err := wire.DecodeEvent(wiretest.Marshal(t, ok)); err != nil {
		t.Fatalf("an event with its result id: %v", err)
	}
	for _, c := range []struct {
		name string
		mut  func(e *wire.Event)
	}{
		{"a result id of 200 KiB", func(e *wire.Event) { e.ResultID = strings.Repeat("0", 200<<10) }},
		{"a result id with a space", func(e *wire.Event) { e.ResultID = "01JB6Z3H00 1B2C3D4E5F6G7H8" }},
	} {
		e := wiretest.Event()
		c.mut(e)
		if _, err := wire.DecodeEvent(wiretest.Marshal(t, e)); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("%s: %v, want malformed", c.name, err)
		}
	}
	e := wiretest.Event()
	e.State = wire.EventState(strings.Repeat("x", 200<<10))
	if _, err := wire.DecodeEvent(wiretest.Marshal(t, e)); !errors.Is(err, wire.ErrMalformed) || len(err.Error()) > 1000 {
		t.Errorf("an unknown state of 200 KiB: an error of %d bytes: %.200v", len(err.Error()), err)
	}
}
