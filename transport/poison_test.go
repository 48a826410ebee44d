package transport

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/wire"
	"github.com/edgebench/edgebench/wire/wiretest"
)

// TestPoisonEntriesLeaveTheSpool: a spooled entry that is whole but does
// not decode, and a result of another device (what a changed device_id
// leaves behind), were sent again every minute forever. They move to
// rejected/ at the first replay, are counted, and are not sent; the good
// entry is delivered.
func TestPoisonEntriesLeaveTheSpool(t *testing.T) {
	dir := t.TempDir()
	sp, err := spool.Open(dir, spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	garbage, old, good := wire.NewID(), smallResult(), smallResult()
	old.Fleet, old.Device = "lab", "pi4-old"
	good.Fleet, good.Device = "lab", "pi4-07"
	for id, b := range map[string][]byte{garbage: {0x81, 0xa2, 'i', 'd', 0xc1}, old.ID: wiretest.Marshal(t, old), good.ID: wiretest.Marshal(t, good)} {
		if err := sp.Put(id, b); err != nil {
			t.Fatal(err)
		}
	}
	b := testenv.StartBroker(t)
	st := newStore()
	_, sub := collector(t, b.URL(), st, "")
	dev, sp2 := device(t, b.URL(), dir, Options{ResendInterval: 100 * time.Millisecond})
	if err := dev.WaitAck(ctx10(t), good.ID); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "the spool to empty", func() bool { return sp2.Stats().Count == 0 })
	time.Sleep(300 * time.Millisecond) // three resend intervals: nothing more goes out
	if s := sub.Stats(); s.Received != 1 {
		t.Errorf("the collector received %d results, want the good one only", s.Received)
	}
	if s := sp2.Stats(); s.Rejected != 2 {
		t.Errorf("spool stats %+v, want 2 rejected", s)
	}
	for _, id := range []string{garbage, old.ID} {
		if _, err := os.Stat(filepath.Join(dir, "rejected", id+".msg")); err != nil {
			t.Errorf("entry not in rejected/: %v", err)
		}
	}
}

// TestCollectorRejectsForGood: a result the collector refuses for good (a
// handler error wrapping ErrRejected, or a payload it cannot decode) is
// acked as rejected: the device moves it to rejected/ and WaitAck says
// why, instead of sending it again every minute.
func TestCollectorRejectsForGood(t *testing.T) {
	b := testenv.StartBroker(t)
	st := newStore()
	bad := smallResult()
	st.fail = func(r *wire.Result) error {
		if r.ID == bad.ID {
			return fmt.Errorf("run 0 refers to disk 7 of 1: %w", ErrRejected)
		}
		return nil
	}
	_, sub := collector(t, b.URL(), st, "")
	dir := t.TempDir()
	dev, sp := device(t, b.URL(), dir, Options{ResendInterval: 100 * time.Millisecond})
	if err := dev.WaitConnected(ctx10(t)); err != nil {
		t.Fatal(err)
	}
	if err := dev.PublishResult(ctx10(t), bad); err != nil {
		t.Fatal(err)
	}
	err := dev.WaitAck(ctx10(t), bad.ID)
	var rej *RejectedError
	if !errors.As(err, &rej) || rej.Reason != "run 0 refers to disk 7 of 1" {
		t.Fatalf("WaitAck: %v, want the rejection and its reason", err)
	}
	// A WaitAck that comes after the rejection (the result has left the
	// spool) says the same, not that it was acked.
	if err := dev.WaitAck(ctx10(t), bad.ID); !errors.As(err, &rej) || rej.ResultID != bad.ID {
		t.Fatalf("WaitAck after the rejection: %v, want the rejection", err)
	}
	if s := sp.Stats(); s.Count != 0 || s.Rejected != 1 {
		t.Errorf("spool stats %+v, want the entry rejected", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "rejected", bad.ID+".msg")); err != nil {
		t.Errorf("entry not in rejected/: %v", err)
	}
	// Undecodable bytes whose id can be read are acked as rejected too.
	topic, _ := dev.Topics().Topic("lab", "pi4-07", wire.TopicResult)
	junk := wire.NewID()
	if err := dev.Publish(ctx10(t), topic, 1, false, append([]byte{0x82, 0xa2, 'i', 'd', 0xda, 0, 26}, append([]byte(junk), 0xa1, 'v', 0xc1)...)); err != nil {
		t.Fatal(err)
	}
	testenv.Until(t, "the junk rejected", func() bool { return sub.Stats().Rejected == 2 })
	if s := sub.Stats(); s.Acked != 0 || s.Malformed != 1 {
		t.Errorf("subscriber stats %+v", s)
	}
}

// TestSpoolRefusalKeepsTheResultInMemory: a spool that refuses a result
// (full here; a full disk in TestFullDiskStillDeliversTheResult) no longer
// loses it: the result is kept in memory, sent when the broker comes up,
// and dropped from memory by its ack.
func TestSpoolRefusalKeepsTheResultInMemory(t *testing.T) {
	b := testenv.NewBroker(t)
	st := newStore()
	dir := t.TempDir()
	sp, err := spool.Open(dir, spool.Limits{MaxCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, second := smallResult(), smallResult()
	first.Fleet, first.Device = "lab", "pi4-07"
	if err := sp.Put(first.ID, wiretest.Marshal(t, first)); err != nil {
		t.Fatal(err)
	}
	dev := dial(t, fastConfig(b.URL(), "lab", "pi4-07", ""), Options{Spool: sp})
	err = dev.PublishResult(ctx10(t), second)
	if !errors.Is(err, ErrKeptInMemory) || !errors.Is(err, spool.ErrFull) {
		t.Fatalf("PublishResult on a full spool: %v, want ErrKeptInMemory and the spool's error", err)
	}
	b.Start()
	collector(t, b.URL(), st, "")
	for _, r := range []*wire.Result{first, second} {
		if err := dev.WaitAck(ctx10(t), r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if stored, _ := st.count(); stored != 2 {
		t.Errorf("%d results stored, want both", stored)
	}
	dev.mu.Lock()
	kept := len(dev.kept)
	dev.mu.Unlock()
	if kept != 0 || sp.Stats().Count != 0 {
		t.Errorf("%d kept in memory and %d spooled after the acks", kept, sp.Stats().Count)
	}
}
