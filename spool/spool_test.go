package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
)

func TestSpoolPutGetRemove(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{wire.NewID(), wire.NewID(), wire.NewID()}
	for i, id := range ids {
		if err := s.Put(id, []byte(fmt.Sprint("payload ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ids[0], []byte("again")); err != nil {
		t.Fatalf("second put of an id: %v", err)
	}
	if got := s.List(); fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Errorf("list %v, want %v (oldest first)", got, ids)
	}
	if err := s.Remove(ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ids[1]); err != nil {
		t.Errorf("second remove: %v", err)
	}

	// A new process sees the same entries.
	s2, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.List(); len(got) != 2 || got[0] != ids[0] || got[1] != ids[2] {
		t.Errorf("after reopen: %v", got)
	}
	p, err := s2.Get(ids[0])
	if err != nil || string(p) != "payload 0" {
		t.Errorf("get: %q %v", p, err)
	}
	if _, err := s2.Get(ids[1]); !errors.Is(err, ErrNotSpooled) {
		t.Errorf("get removed: %v", err)
	}
	if st := s2.Stats(); st.Count != 2 || st.Bytes != int64(len("payload 0")+len("payload 2")) {
		t.Errorf("stats %+v", st)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", string(bytes.Repeat([]byte("a"), 65))} {
		if err := s2.Put(bad, nil); err == nil {
			t.Errorf("put %q accepted", bad)
		}
	}
}

func TestSpoolBounds(t *testing.T) {
	s, err := Open(t.TempDir(), Limits{MaxCount: 3, MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"a1", "a2", "a3", "a4"}
	for _, id := range ids[:3] {
		if err := s.Put(id, make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
	}
	err = s.Put(ids[3], make([]byte, 10))
	if !errors.Is(err, ErrFull) {
		t.Fatalf("fourth put: %v, want ErrFull", err)
	}
	t.Logf("refusal reads: %v", err)
	if err := s.Remove("a1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("big", make([]byte, 81)); !errors.Is(err, ErrFull) {
		t.Errorf("put over the byte bound: %v", err)
	}
	if err := s.Put("fits", make([]byte, 80)); err != nil {
		t.Errorf("put within the byte bound: %v", err)
	}
	st := s.Stats()
	if st.Refused != 2 || st.Count != 3 || st.Bytes != 100 {
		t.Errorf("stats %+v, want 2 refused, 3 entries, 100 bytes", st)
	}
	if got := s.List(); fmt.Sprint(got) != "[a2 a3 fits]" {
		t.Errorf("kept %v: the oldest must stay", got)
	}
}

// TestSpoolTorn fakes what a crash can leave: a file cut short, a file with
// a bad checksum, a temporary file of a dead writer. All are set aside, the
// good entry stays, and the temporary file of a live writer is left alone.
func TestSpoolTorn(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary: not in -short (the 32-bit pass runs under qemu-user)")
	}
	dir := t.TempDir()
	s, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"good", "short", "crc"} {
		if err := s.Put(id, bytes.Repeat([]byte(id), 100)); err != nil {
			t.Fatal(err)
		}
	}
	cut := filepath.Join(dir, "short.msg")
	b, _ := os.ReadFile(cut)
	os.WriteFile(cut, b[:len(b)/2], 0o640)
	bad := filepath.Join(dir, "crc.msg")
	b, _ = os.ReadFile(bad)
	b[len(b)-1] ^= 0xff
	os.WriteFile(bad, b, 0o640)
	dead := deadPID(t)
	os.WriteFile(filepath.Join(dir, ".tmp-"+strconv.Itoa(dead)+"-x1"), []byte("EBS1\x00\x00"), 0o640)
	live := ".tmp-" + strconv.Itoa(os.Getppid()) + "-x2"
	os.WriteFile(filepath.Join(dir, live), []byte("EBS1"), 0o640)
	os.WriteFile(filepath.Join(dir, "header.msg"), []byte("EB"), 0o640)

	s2, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.List(); fmt.Sprint(got) != "[good]" {
		t.Errorf("list %v, want [good]", got)
	}
	if st := s2.Stats(); st.Torn != 4 {
		t.Errorf("torn %d, want 4", st.Torn)
	}
	torn, _ := os.ReadDir(filepath.Join(dir, "torn"))
	if len(torn) != 4 {
		t.Errorf("torn/ holds %d files, want 4", len(torn))
	}
	if _, err := os.Stat(filepath.Join(dir, live)); err != nil {
		t.Errorf("a live writer's temporary file was moved: %v", err)
	}

	// Damage found at read time is set aside too.
	b, _ = os.ReadFile(filepath.Join(dir, "good.msg"))
	os.WriteFile(filepath.Join(dir, "good.msg"), b[:20], 0o640)
	if _, err := s2.Get("good"); !errors.Is(err, ErrNotSpooled) {
		t.Errorf("get of a damaged entry: %v", err)
	}
	if s2.Has("good") {
		t.Error("damaged entry still listed")
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

const spoolChildEnv = "EDGEBENCH_TEST_SPOOL_CHILD"

// TestSpoolKilledWriter kills a process with SIGKILL while it writes large
// entries in a loop, then opens its spool: every listed entry is whole,
// anything half written is set aside, and nothing panics.
func TestSpoolKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary: not in -short (the 32-bit pass runs under qemu-user)")
	}
	if dir := os.Getenv(spoolChildEnv); dir != "" {
		spoolChild(dir)
		return
	}
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestSpoolKilledWriter$")
		cmd.Env = append(os.Environ(), spoolChildEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for a few entries, then kill at whatever point it has got to.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			ents, _ := filepath.Glob(filepath.Join(dir, "*.msg"))
			if len(ents) >= 2+round {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		s, err := Open(dir, Limits{MaxBytes: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		ids := s.List()
		if len(ids) < 2 {
			t.Fatalf("round %d: %d entries survived, want >= 2", round, len(ids))
		}
		for _, id := range ids {
			p, err := s.Get(id)
			if err != nil {
				t.Fatalf("round %d: entry %s: %v", round, id, err)
			}
			if !bytes.Equal(p, childPayload(id)) {
				t.Fatalf("round %d: entry %s differs from what was written", round, id)
			}
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
		t.Logf("round %d: %d whole entries, %d set aside, %d temporary files left", round, len(ids), s.Stats().Torn, len(left))
		if len(left) != 0 {
			t.Errorf("round %d: temporary files of the dead writer left in place: %v", round, left)
		}
	}
}

func childPayload(id string) []byte { return bytes.Repeat([]byte(id), 4<<20/len(id)) }

// spoolChild writes 4 MiB entries until it is killed.
func spoolChild(dir string) {
	s, err := Open(dir, Limits{MaxBytes: 1 << 30, MaxCount: 1 << 20})
	if err != nil {
		os.Exit(3)
	}
	for i := 0; ; i++ {
		id := fmt.Sprintf("e%06d", i)
		if err := s.Put(id, childPayload(id)); err != nil {
			os.Exit(4)
		}
	}
}

// TestSpoolNameNotItsPayload: an entry whose file name is not the id of
// the result it holds would be acked under the other id and stay for
// ever: Open, and Get after it, move it to torn/ and say why (OnTorn, which
// the agent logs); a payload whose id cannot be read is left to the sender.
func TestSpoolNameNotItsPayload(t *testing.T) {
	dir := t.TempDir()
	type aside struct{ name, reason string }
	var told []aside
	lim := Limits{OnTorn: func(name, reason string) { told = append(told, aside{name, reason}) }}
	s, err := Open(dir, lim)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := wire.NewID(), wire.NewID(), wire.NewID()
	payload := func(id string) []byte {
		p, err := (&wire.Result{V: wire.SchemaVersion, ID: id, Fleet: "lab", Device: "pi-1"}).MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, e := range []struct{ name, holds string }{{a, a}, {b, a}} {
		if err := s.Put(e.name, payload(e.holds)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put("opaque", []byte("not a result")); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, lim)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(s2.List()), fmt.Sprint([]string{a, "opaque"}); got != want {
		t.Errorf("list %v, want %v", got, want)
	}
	if len(told) != 1 || told[0].name != b+".msg" || !strings.Contains(told[0].reason, "holds result "+a) {
		t.Errorf("told %+v", told)
	}
	if _, err := os.Stat(filepath.Join(dir, "torn", b+".msg")); err != nil {
		t.Error(err)
	}
	// Put while open, found at read time.
	if err := s2.Put(c, payload(a)); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(c); !errors.Is(err, ErrNotSpooled) {
		t.Errorf("get of %s holding %s: %v", c, a, err)
	}
	if s2.Has(c) || len(told) != 2 || s2.Stats().Torn != 2 {
		t.Errorf("after get: has %v, told %+v, stats %+v", s2.Has(c), told, s2.Stats())
	}
}
