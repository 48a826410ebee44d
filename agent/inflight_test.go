package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestInflight(t *testing.T) {
	dir := t.TempDir()
	if in, err := RecoverInflight(dir); in != nil || err != nil {
		t.Fatalf("empty dir: %v %v", in, err)
	}
	started := time.Date(2025, 6, 1, 12, 0, 0, 123, time.UTC)
	want := Inflight{CommandID: "01J0CMD", ResultID: "01J0RES", StartedAt: started}
	if err := WriteInflight(dir, want); err != nil {
		t.Fatal(err)
	}
	// A restart: the marker is found, and left until cleared.
	for range 2 {
		got, err := RecoverInflight(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.CommandID != want.CommandID || got.ResultID != want.ResultID || !got.StartedAt.Equal(started) {
			t.Fatalf("recovered %+v, want %+v", got, want)
		}
	}
	if err := ClearInflight(dir); err != nil {
		t.Fatal(err)
	}
	if in, err := RecoverInflight(dir); in != nil || err != nil {
		t.Fatalf("after clear: %v %v", in, err)
	}
	if err := ClearInflight(dir); err != nil {
		t.Errorf("second clear: %v", err)
	}
	if InterruptedReason != "interrupted: agent restarted during the run" {
		t.Errorf("reason %q", InterruptedReason)
	}
}

func TestInflightErrors(t *testing.T) {
	dir := t.TempDir()
	if err := WriteInflight(dir, Inflight{}); err == nil {
		t.Error("empty command id accepted")
	}
	os.WriteFile(filepath.Join(dir, "inflight"), []byte("garbage"), 0o600)
	if _, err := RecoverInflight(dir); err == nil {
		t.Error("garbage marker: no error")
	}
	os.WriteFile(filepath.Join(dir, "inflight"), []byte(`{"result_id":"r"}`), 0o600)
	if _, err := RecoverInflight(dir); err == nil {
		t.Error("marker without command id: no error")
	}
	if err := WriteInflight(filepath.Join(dir, "nope"), Inflight{CommandID: "c"}); err == nil {
		t.Error("missing dir: no error")
	}
}
